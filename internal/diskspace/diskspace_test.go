package diskspace

import (
	"errors"
	"os"
	"testing"
)

func TestAvailable(t *testing.T) {
	n, err := Available(t.TempDir())
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no free space reported for the test's temporary directory")
	}
	if _, err := Available("/does/not/exist"); err == nil {
		t.Fatal("statfs of a missing path succeeded")
	}
}

func TestMinFreeBytesDefault(t *testing.T) {
	if v, ok := os.LookupEnv(EnvMinFreeMB); ok {
		t.Skipf("%s=%s in the environment", EnvMinFreeMB, v)
	}
	if got := MinFreeBytes(); got != DefaultMinFreeBytes {
		t.Fatalf("MinFreeBytes() = %d, want %d", got, DefaultMinFreeBytes)
	}
}
