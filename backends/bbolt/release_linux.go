package bbolt

import (
	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// releaseMapped unmaps the pages of tx's file from the process
// (MADV_DONTNEED): bbolt maps it shared and read-only, so the pages stay
// in the page cache and a later read maps them again. tx holds the mapping
// in place while it is open.
func releaseMapped(tx *bolt.Tx) {
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, tx.DB().Info().Data, uintptr(tx.Size()), unix.MADV_DONTNEED)
}

// willNeed starts reading [off, off+n) of the mapping at base, n bytes
// long in all, into the page cache (MADV_WILLNEED); off is page-aligned.
func willNeed(base, size, off, n uintptr) {
	if off >= size {
		return
	}
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, base+off, min(n, size-off), unix.MADV_WILLNEED)
}
