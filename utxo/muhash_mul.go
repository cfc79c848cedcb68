package utxo

import (
	"math/big"
	"math/bits"
	"sync"
	"unsafe"
)

// mulFull sets t = x·y. On 64-bit platforms, where a num3072 has the
// memory layout of 48 big.Words, it borrows math/big's multiplication
// (assembly inner loops, Karatsuba at this size; faster than the Comba
// loop, docs/benchmarks/digests.md) on the limbs in place, without copying or
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
