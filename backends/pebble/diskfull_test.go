package pebble_test

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"utxod/backends"
	"utxod/backends/pebble"
)

// limitFS is an in-memory file system whose writes fail with ENOSPC once
// the bytes written exceed limit.
type limitFS struct {
	vfs.FS
	used, limit *atomic.Int64
}

func newLimitFS(limit int64) limitFS {
	fs := limitFS{FS: vfs.NewMem(), used: new(atomic.Int64), limit: new(atomic.Int64)}
	fs.limit.Store(limit)
	return fs
}

func (fs limitFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return limitFile{File: f, fs: fs, name: name}, nil
}

func (fs limitFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(name, f, err)
}

func (fs limitFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap(newname, f, err)
}

func (fs limitFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	return fs.wrap(name, f, err)
}

type limitFile struct {
	vfs.File
	fs   limitFS
	name string
}

func (f limitFile) take(n int) error {
	if f.fs.used.Add(int64(n)) > f.fs.limit.Load() {
		return &os.PathError{Op: "write", Path: f.name, Err: syscall.ENOSPC}
	}
	return nil
}

func (f limitFile) Write(p []byte) (int, error) {
	if err := f.take(len(p)); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f limitFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.take(len(p)); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

// within runs fn and fails the test if it takes longer than d (a hang).
func within[T any](t *testing.T, d time.Duration, what string, fn func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- fn() }()
	select {
	case v := <-done:
		return v
	case <-time.After(d):
		t.Fatalf("%s: no answer within %v (hang)", what, d)
		panic("unreachable")
	}
}

func wantDiskFull(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, backends.ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("%s: %v, want an error wrapping backends.ErrDiskFull and ENOSPC", what, err)
	}
}

// TestDiskFullWrites fills the disk under a running store: the failing
// write and every later write and sync return ErrDiskFull at once, reads
// keep working, and Close returns.
func TestDiskFullWrites(t *testing.T) {
	fs := newLimitFS(1 << 40)
	kv, err := pebble.Open("/db", backends.Options{CacheBytes: 8 << 20, Extra: pebble.Extra{FS: fs}})
	if err != nil {
		t.Fatal(err)
	}
	fs.limit.Store(fs.used.Load() + 300<<10)
	val := make([]byte, 16<<10)
	var failed error
	acked := 0
	for i := 0; i < 1000 && failed == nil; i++ {
		b := backends.NewBatch()
		for j := range 4 {
			b.Put([]byte(fmt.Sprintf("k%04d-%d", i, j)), val)
		}
		failed = within(t, 10*time.Second, fmt.Sprintf("write %d", i), func() error { return kv.Write(b, backends.Sync) })
		if failed == nil {
			acked++
		}
	}
	wantDiskFull(t, "the write that filled the disk", failed)
	t.Logf("%d batches acknowledged, then: %v", acked, failed)
	b := backends.NewBatch()
	b.Put([]byte("later"), []byte("x"))
	wantDiskFull(t, "a later write", within(t, 5*time.Second, "later write", func() error { return kv.Write(b, backends.NoSync) }))
	wantDiskFull(t, "a later sync", within(t, 5*time.Second, "later sync", kv.Sync))
	if acked > 0 {
		if _, err := kv.Get([]byte("k0000-0")); err != nil {
			t.Fatalf("read after the disk filled: %v", err)
		}
	}
	wantDiskFull(t, "close", within(t, 5*time.Second, "close", kv.Close))
}

// TestDiskFullOpen: opening on a disk with no room fails with ErrDiskFull
// instead of retrying pebble's flush forever.
func TestDiskFullOpen(t *testing.T) {
	fs := newLimitFS(0)
	err := within(t, 10*time.Second, "open", func() error {
		kv, err := pebble.Open("/db", backends.Options{Extra: pebble.Extra{FS: fs}})
		if err == nil {
			kv.Close()
		}
		return err
	})
	wantDiskFull(t, "open", err)
}
