package bbolt

import (
	"unsafe"

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

// resident reports whether the page at off of the mapping at base is in
// the page cache (mincore); false when it cannot tell.
func resident(base, off uintptr) bool {
	var vec [1]byte
	_, _, e := unix.Syscall(unix.SYS_MINCORE, base+off, 1, uintptr(unsafe.Pointer(&vec[0])))
	return e == 0 && vec[0]&1 != 0
}
