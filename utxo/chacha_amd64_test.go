//go:build amd64 && !purego && linux

package utxo

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"
)

// guardedPage returns the last size bytes of a read-write page followed by
// an inaccessible one, so that any access past them faults.
func guardedPage(t *testing.T, size int) []byte {
	t.Helper()
	ps := syscall.Getpagesize()
	if size > ps {
		t.Fatalf("%d bytes do not fit a page", size)
	}
	mem, err := syscall.Mmap(-1, 0, 2*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("mmap:", err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[ps:], syscall.PROT_NONE); err != nil {
		t.Skip("mprotect:", err)
	}
	return mem[ps-size : ps]
}

// The kernel reads no key past keys[n-1] (the masked loads) and writes no
// byte past out[n-1]: both end right before an inaccessible page, for every
// batch size 1..10 (every partial group), and the result is x/crypto's.
func TestChachaKernelStaysInBounds(t *testing.T) {
	if !hasChachaAVX512() {
		t.Skip("no AVX-512F/BMI2 on this CPU")
	}
	r := rand.New(rand.NewPCG(21, 22))
	for n := 1; n <= 10; n++ {
		kb := guardedPage(t, 32*n)
		ob := guardedPage(t, num3072Bytes*n)
		keys := unsafe.Slice((*[32]byte)(unsafe.Pointer(&kb[0])), n)
		out := unsafe.Slice((*num3072)(unsafe.Pointer(&ob[0])), n)
		copy(keys, randomKeys(r, n))
		muHashKeystreamsAVX512(out, keys)
		for i := range keys {
			var want num3072
			muHashKeystreamGeneric(&want, &keys[i])
			if out[i] != want {
				t.Fatalf("n=%d element %d differs from x/crypto", n, i)
			}
		}
	}
}
