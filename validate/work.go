package validate

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"math/bits"
)

// Work is an amount of chain work as Core keeps it (arith_uint256 nChainWork):
// an unsigned 256-bit integer, little-endian 64-bit limbs, sums wrapping at
// 2^256. A value type, so a block-index node holds it without an allocation.
type Work [4]uint64

// WorkFromBig returns the low 256 bits of x (x ≥ 0) as Work.
func WorkFromBig(x *big.Int) Work {
	var be [32]byte
	new(big.Int).And(x, mask256()).FillBytes(be[:])
	var w Work
	for i := range w {
		w[i] = binary.BigEndian.Uint64(be[24-8*i:])
	}
	return w
}

// Big returns w as a new big.Int.
func (w Work) Big() *big.Int {
	words := make([]big.Word, 0, 4*64/bits.UintSize)
	for _, l := range w {
		if bits.UintSize == 64 {
			words = append(words, big.Word(l))
		} else {
			words = append(words, big.Word(uint32(l)), big.Word(l>>32))
		}
	}
	return new(big.Int).SetBits(words)
}

// Cmp returns -1, 0 or +1 as w is less than, equal to or greater than x.
func (w Work) Cmp(x Work) int {
	for i := len(w) - 1; i >= 0; i-- {
		if w[i] != x[i] {
			if w[i] < x[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Add returns w + x modulo 2^256.
func (w Work) Add(x Work) Work {
	var c uint64
	for i := range w {
		w[i], c = bits.Add64(w[i], x[i], c)
	}
	return w
}

// String is the 64-digit hex of w, as Core's chainwork fields.
func (w Work) String() string {
	return fmt.Sprintf("%016x%016x%016x%016x", w[3], w[2], w[1], w[0])
}
