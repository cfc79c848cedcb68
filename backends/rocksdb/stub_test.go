//go:build !rocksdb

package rocksdb_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"utxod/backends"
	"utxod/backends/rocksdb"
)

func TestStubRefuses(t *testing.T) {
	dir := t.TempDir()
	_, err := backends.Open(rocksdb.Name, dir, backends.Options{})
	if !errors.Is(err, backends.ErrUnavailable) || !strings.Contains(err.Error(), "-tags rocksdb") {
		t.Fatalf("Open = %v, want ErrUnavailable naming the build tag", err)
	}
}

func TestStubLeavesNoMarker(t *testing.T) {
	dir := t.TempDir()
	if _, err := backends.Open(rocksdb.Name, dir, backends.Options{}); err == nil {
		t.Fatal("stub opened")
	}
	if _, err := os.Stat(filepath.Join(dir, backends.MarkerFile)); !os.IsNotExist(err) {
		t.Fatalf("marker left behind: %v", err)
	}
}

func TestStubAvailable(t *testing.T) {
	err := backends.Available(rocksdb.Name)
	if !errors.Is(err, backends.ErrUnavailable) || !strings.Contains(err.Error(), "-tags rocksdb") || !strings.Contains(err.Error(), "librocksdb-dev") {
		t.Fatalf("Available = %v, want ErrUnavailable naming the build tag and the package", err)
	}
}
