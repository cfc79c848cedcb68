//go:build unix

package shindex

import "syscall"

// allocRun maps n bytes of anonymous memory for a run, outside the Go heap
// (zeroed, resident only once touched); mapped is false when the mapping
// failed and the block comes from the heap instead. freeRun releases it.
func allocRun(n int) (b []byte, mapped bool) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n), false
	}
	return b, true
}

func freeRun(b []byte, mapped bool) {
	if mapped {
		_ = syscall.Munmap(b)
	}
}
