package backends_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"utxod/backends"
	"utxod/internal/diskspace"
)

func TestDiskFullErrors(t *testing.T) {
	if !errors.Is(backends.ErrDiskFull, syscall.ENOSPC) {
		t.Fatal("ErrDiskFull is not ENOSPC")
	}
	pathErr := &os.PathError{Op: "write", Path: "/d/x.log", Err: syscall.ENOSPC}
	rocks := errors.New("IO error: No space left on device: While appending to file: /d/000004.log: No space left on device")
	for _, err := range []error{pathErr, rocks, backends.ErrDiskFull, fmt.Errorf("wrapped: %w", pathErr)} {
		if !backends.IsDiskFull(err) {
			t.Fatalf("IsDiskFull(%v) = false", err)
		}
		w := backends.DiskFull(err)
		if !errors.Is(w, backends.ErrDiskFull) || !errors.Is(w, syscall.ENOSPC) || backends.DiskFull(w) != w {
			t.Fatalf("DiskFull(%v) = %v", err, w)
		}
		if !strings.Contains(w.Error(), "ENOSPC") || !strings.Contains(w.Error(), "no space left on device") {
			t.Fatalf("DiskFull(%v) text: %q", err, w)
		}
	}
	for _, err := range []error{nil, errors.New("IO error: corruption"), &os.PathError{Op: "write", Path: "x", Err: syscall.EIO}} {
		if backends.IsDiskFull(err) {
			t.Fatalf("IsDiskFull(%v) = true", err)
		}
	}
	if backends.DiskFull(nil) != nil {
		t.Fatal("DiskFull(nil) != nil")
	}
}

// spaceKV is a KV that only reports free space.
type spaceKV struct {
	backends.KV
	avail uint64
	err   error
}

func (s spaceKV) AvailableBytes() (uint64, error) { return s.avail, s.err }

func TestCheckSpace(t *testing.T) {
	margin := uint64(diskspace.DefaultMinFreeBytes)
	if err := backends.CheckSpace(spaceKV{avail: margin + 1000}, 1000, margin); err != nil {
		t.Fatalf("exactly enough space refused: %v", err)
	}
	err := backends.CheckSpace(spaceKV{avail: margin + 999}, 1000, margin)
	if !errors.Is(err, backends.ErrDiskFull) || !strings.Contains(err.Error(), "margin") {
		t.Fatalf("too little space: %v", err)
	}
	if err := backends.CheckSpace(spaceKV{err: diskspace.ErrUnsupported}, 1<<40, margin); err != nil {
		t.Fatalf("unknown free space refused: %v", err)
	}
	if err := backends.CheckSpace(struct{ backends.KV }{}, 1<<40, margin); err != nil {
		t.Fatalf("a store without SpaceReporter refused: %v", err)
	}
}
