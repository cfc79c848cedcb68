package diskspace

import (
	"errors"
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
