package kvstore

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing [off, off+n) of h to disk
// without waiting (sync_file_range SYNC_FILE_RANGE_WRITE), as RocksDB's
// bytes_per_sync does: the flush's fdatasync then finds little left to
// write. It changes no durability promise, so an error is ignored.
func startWriteback(h *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(h.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
