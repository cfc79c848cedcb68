package pebble

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"

	"utxod/backends"
)

// Pebble (v2.1.7) does not survive a full disk on its own: a failed
// memtable flush is retried at once and forever (Open, which flushes the
// replayed WAL, and Close, which waits for the flush, never return; writes
// stall once the memtables fill), a failed WAL write ends a commit in
// Logger.Fatalf, and a failed WAL rotation panics in rotateWAL while DB.mu
// is released, unwinding through a deferred DB.mu.Unlock: a fatal error no
// recover can catch. So the store never lets pebble see ENOSPC:
// the file system it gives pebble stops at the first ENOSPC. That operation,
// and every later one that would change a file, then blocks for good, so
// the directory stays exactly as a crash at that moment would leave it
// (pebble's crash recovery applies on the next open), pebble's goroutines
// wait instead of spinning, and the store itself answers: Open, Write and
// Sync return an error wrapping backends.ErrDiskFull as soon as the stop
// happens, even while a pebble call is blocked under them, and Close does
// not call pebble's Close (it would wait for the blocked flush). Reads keep
// working. Reopen the store (restart the process) once space is freed.

// stopper records the first ENOSPC and blocks file-system writes after it.
type stopper struct {
	once    sync.Once
	err     error         // set once, before stopped is closed
	stopped chan struct{} // closed at the first ENOSPC
	log     *slog.Logger
}

func newStopper(log *slog.Logger) *stopper {
	return &stopper{stopped: make(chan struct{}), log: log}
}

// failed returns the disk-full error once the store has stopped, else nil.
func (s *stopper) failed() error {
	select {
	case <-s.stopped:
		return s.err
	default:
		return nil
	}
}

// stop records cause (an ENOSPC from op) as the store's failure.
func (s *stopper) stop(op string, cause error) {
	s.once.Do(func() {
		s.err = fmt.Errorf("%w: %w", backends.ErrDiskFull, cause)
		s.log.Error("disk full: the store stopped writing; it reopens at its last durable state once space is freed",
			"op", op, "err", cause)
		close(s.stopped)
	})
}

// before blocks for good when the store has stopped: no file changes after
// the first ENOSPC.
func (s *stopper) before() {
	if s.failed() != nil {
		select {} // pebble's caller waits forever; the store answers for it
	}
}

// after passes err through unless it is ENOSPC, in which case the store
// stops and the call blocks for good (pebble never sees the error).
func (s *stopper) after(op string, err error) error {
	if err != nil && errors.Is(err, syscall.ENOSPC) {
		s.stop(op, err)
		select {}
	}
	return err
}

// stopFS is the vfs.FS given to pebble: inner with the stopper on every
// operation that changes the directory or a file.
type stopFS struct {
	vfs.FS
	s *stopper
}

func (fs stopFS) Unwrap() vfs.FS { return fs.FS }

func (fs stopFS) wrap(op string, f vfs.File, err error) (vfs.File, error) {
	if err = fs.s.after(op, err); err != nil {
		return nil, err
	}
	return stopFile{File: f, s: fs.s}, nil
}

func (fs stopFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	fs.s.before()
	f, err := fs.FS.Create(name, c)
	return fs.wrap("create", f, err)
}

func (fs stopFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	fs.s.before()
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	return fs.wrap("open", f, err)
}

func (fs stopFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	fs.s.before()
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap("reuse", f, err)
}

func (fs stopFS) OpenDir(name string) (vfs.File, error) {
	f, err := fs.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return stopFile{File: f, s: fs.s}, nil
}

func (fs stopFS) Link(oldname, newname string) error {
	fs.s.before()
	return fs.s.after("link", fs.FS.Link(oldname, newname))
}

func (fs stopFS) Remove(name string) error {
	fs.s.before()
	return fs.s.after("remove", fs.FS.Remove(name))
}

func (fs stopFS) RemoveAll(name string) error {
	fs.s.before()
	return fs.s.after("remove", fs.FS.RemoveAll(name))
}

func (fs stopFS) Rename(oldname, newname string) error {
	fs.s.before()
	return fs.s.after("rename", fs.FS.Rename(oldname, newname))
}

func (fs stopFS) MkdirAll(dir string, perm os.FileMode) error {
	fs.s.before()
	return fs.s.after("mkdir", fs.FS.MkdirAll(dir, perm))
}

// stopFile is a file opened through stopFS. Reads pass through.
type stopFile struct {
	vfs.File
	s *stopper
}

var _ io.WriterAt = stopFile{}

func (f stopFile) Write(p []byte) (int, error) {
	f.s.before()
	n, err := f.File.Write(p)
	return n, f.s.after("write", err)
}

func (f stopFile) WriteAt(p []byte, off int64) (int, error) {
	f.s.before()
	n, err := f.File.WriteAt(p, off)
	return n, f.s.after("write", err)
}

// Preallocate failures are ignored by pebble (the write that follows fails
// if the space is really missing), so they do not stop the store.
func (f stopFile) Preallocate(off, n int64) error {
	f.s.before()
	return f.File.Preallocate(off, n)
}

func (f stopFile) Sync() error {
	f.s.before()
	return f.s.after("sync", f.File.Sync())
}

func (f stopFile) SyncData() error {
	f.s.before()
	return f.s.after("sync", f.File.SyncData())
}

func (f stopFile) SyncTo(length int64) (bool, error) {
	f.s.before()
	full, err := f.File.SyncTo(length)
	return full, f.s.after("sync", err)
}

func (f stopFile) Close() error { return f.s.after("close", f.File.Close()) }
