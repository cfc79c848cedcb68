package validate

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestWorkMatchesBig: Work's sum, order and hex agree with big.Int's
// arithmetic modulo 2^256 (Core's arith_uint256), and it converts both ways.
func TestWorkMatchesBig(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	mod := new(big.Int).Lsh(big.NewInt(1), 256)
	random := func() *big.Int {
		var b [32]byte
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		x := new(big.Int).SetBytes(b[:])
		return x.Rsh(x, uint(r.IntN(256))) // all sizes, many with high limbs zero
	}
	for i := range 2000 {
		a, b := random(), random()
		if i == 0 {
			a.Sub(mod, big.NewInt(1)) // wraps: (2^256 - 1) + b
		}
		wa, wb := WorkFromBig(a), WorkFromBig(b)
		if wa.Big().Cmp(a) != 0 {
			t.Fatalf("round trip of %x: %x", a, wa.Big())
		}
		sum := new(big.Int).Add(a, b)
		sum.Mod(sum, mod)
		if got := wa.Add(wb); got.Big().Cmp(sum) != 0 {
			t.Fatalf("%x + %x = %s, want %x", a, b, got, sum)
		}
		if got, want := wa.Cmp(wb), a.Cmp(b); got != want {
			t.Fatalf("Cmp(%x, %x) = %d, want %d", a, b, got, want)
		}
		if got, want := wa.String(), fmt.Sprintf("%064x", a); got != want {
			t.Fatalf("String %s, want %s", got, want)
		}
	}
}
