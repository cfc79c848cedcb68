package utxo

import (
	"math/big"
	"math/bits"
	"strconv"
	"sync"
	"unsafe"
)

// mulImpl is one way of computing the 6144-bit product inside mulMod; the
// reduction modulo p after it is the same function, reduce, except that
// the IFMA path runs its main loop in assembly too.
type mulImpl uint8

const (
	// mulBig is math/big's multiplication (mulFull): the fallback and the
	// control arm of the kernel's benchmarks.
	mulBig mulImpl = iota
	// mulComba is the pure-Go product scanning loop (mulFullComba).
	mulComba
	// mulIFMA is the AVX-512 IFMA kernel (mulFullIFMA, mul3072_amd64.s),
	// followed by reduceADX instead of reduce.
	mulIFMA
)

func (m mulImpl) String() string {
	switch m {
	case mulBig:
		return "big"
	case mulComba:
		return "comba"
	case mulIFMA:
		return "ifma"
	}
	return "mulImpl(" + strconv.Itoa(int(m)) + ")"
}

// mulSelected is the product mulMod uses, set once when the package loads:
// the IFMA kernel where the CPU has it and it agrees with mulFullComba on a
// self-test, math/big otherwise. Only tests change it, to run the whole
// MuHash3072 on every implementation.
var mulSelected = selectMul()

func selectMul() mulImpl {
	if hasMulIFMA() && mulIFMASelfTest() {
		return mulIFMA
	}
	return mulBig
}

// mulIFMASelfTest compares the kernel with mulFullComba, and reduceADX with
// reduce, on all-ones operands (the largest column sums and carries) and a
// few pseudo-random ones.
func mulIFMASelfTest() bool {
	s := uint64(0x853c49e6748fea9b)
	next := func() uint64 { // xorshift64*
		s ^= s >> 12
		s ^= s << 25
		s ^= s >> 27
		return s * 0x2545f4914f6cdd1d
	}
	for n := 0; n < 4; n++ {
		var x, y num3072
		for i := range x {
			if n == 0 {
				x[i], y[i] = ^uint64(0), ^uint64(0)
			} else {
				x[i], y[i] = next(), next()
			}
		}
		var want, got [2 * num3072Limbs]uint64
		mulFullComba(&want, &x, &y)
		mulFullIFMA(&got, &x, &y)
		if got != want {
			return false
		}
		var zw, zg num3072
		zw.reduce(&want)
		zg.reduceADX(&got)
		if zg != zw {
			return false
		}
	}
	return true
}

// mulFull sets t = x·y. On 64-bit platforms, where a num3072 has the
// memory layout of 48 big.Words, it borrows math/big's multiplication
// (assembly inner loops, Karatsuba at this size; faster than the Comba
// loop, bench/results/digests.md) on the limbs in place, without copying or
// allocating; elsewhere it runs mulFullComba. math/big's escape analysis
// sends every operand to the heap, so callers pass a mulScratch's arrays.
func mulFull(t *[2 * num3072Limbs]uint64, x, y *num3072) {
	if bits.UintSize != 64 {
		mulFullComba(t, x, y)
		return
	}
	var bx, by, bz big.Int
	bx.SetBits(asWords(x[:]))
	by.SetBits(asWords(y[:]))
	tw := asWords(t[:])
	bz.SetBits(tw[:0])
	bz.Mul(&bx, &by) // writes into t: its capacity fits the product
	z := bz.Bits()
	if len(z) > 0 && &z[0] != &tw[0] {
		copy(tw, z) // cannot happen; stay correct if math/big reallocates
	}
	clear(t[len(z):])
}

// asWords views 64-bit limbs as big.Words (only called where they are the
// same size).
func asWords(u []uint64) []big.Word {
	return unsafe.Slice((*big.Word)(unsafe.Pointer(unsafe.SliceData(u))), len(u))
}

// mulScratch holds one multiplication's operands and product off the
// caller's stack.
type mulScratch struct {
	x, y num3072
	t    [2 * num3072Limbs]uint64
}

// mulScratchPool recycles mulScratch values: a cache without observable
// state (as math/big's own pool of temporaries), so that a multiplication
// allocates nothing.
var mulScratchPool = sync.Pool{New: func() any { return new(mulScratch) }}

func getMulScratch() *mulScratch  { return mulScratchPool.Get().(*mulScratch) }
func putMulScratch(s *mulScratch) { mulScratchPool.Put(s) }
