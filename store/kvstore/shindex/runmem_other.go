//go:build !unix

package shindex

// allocRun allocates a run's block on the heap (see runmem_unix.go).
func allocRun(n int) (b []byte, mapped bool) { return make([]byte, n), false }

func freeRun([]byte, bool) {}
