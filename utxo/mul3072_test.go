package utxo

import (
	"encoding/binary"
	"math/big"
	"math/rand/v2"
	"testing"
)

// availableMulImpls lists the products mulMod can use on this host.
func availableMulImpls() []mulImpl {
	impls := []mulImpl{mulBig, mulComba}
	if hasMulIFMA() {
		impls = append(impls, mulIFMA)
	}
	return impls
}

// useMulImpl makes mulMod use impl until the end of the test or benchmark.
func useMulImpl(tb testing.TB, impl mulImpl) {
	tb.Helper()
	prev := mulSelected
	mulSelected = impl
	tb.Cleanup(func() { mulSelected = prev })
}

// mulFullWith sets t = x·y with impl's product.
func mulFullWith(impl mulImpl, t *[2 * num3072Limbs]uint64, x, y *num3072) {
	switch impl {
	case mulIFMA:
		mulFullIFMA(t, x, y)
	case mulComba:
		mulFullComba(t, x, y)
	default:
		// mulFull's operands must not be on the stack (see mulScratch).
		s := getMulScratch()
		s.x, s.y = *x, *y
		mulFull(&s.t, &s.x, &s.y)
		*t = s.t
		putMulScratch(s)
	}
}

// The package picks the kernel exactly when the CPU can run it.
func TestMulSelected(t *testing.T) {
	want := mulBig
	if hasMulIFMA() {
		want = mulIFMA
		if !mulIFMASelfTest() {
			t.Fatal("the CPU has AVX-512 IFMA but the kernel fails its self-test")
		}
	}
	if mulSelected != want {
		t.Fatalf("mulSelected = %v, want %v", mulSelected, want)
	}
}

// fromBig returns v (0 ≤ v < 2^3072) as limbs.
func fromBig(v *big.Int) num3072 {
	var a num3072
	a.setBig(v)
	return a
}

// mulEdgeValues are operands at the kernel's boundaries: zero, one, p−1, p,
// 2^3072−1 (every limb all ones), and single bits at and next to every
// 52-bit limb boundary and every 64-bit word boundary.
func mulEdgeValues() []num3072 {
	p := muPrime()
	one := big.NewInt(1)
	vals := []num3072{
		{},
		fromBig(one),
		fromBig(new(big.Int).Sub(p, one)),
		fromBig(p),
		fromBig(new(big.Int).Sub(new(big.Int).Lsh(one, 3072), one)),
		fromBig(new(big.Int).Lsh(one, 3071)),
	}
	bit := func(n int) {
		if n >= 0 && n < 3072 {
			var a num3072
			a[n/64] = 1 << (n % 64)
			vals = append(vals, a)
		}
	}
	for k := 0; k <= 59; k++ {
		bit(52*k - 1)
		bit(52 * k)
		bit(52*k + 1)
	}
	for k := 0; k <= 48; k++ {
		bit(64*k - 1)
		bit(64 * k)
	}
	// Every 52-bit limb at its maximum with the next one empty, and the
	// reverse: columns that are all ones or all zero in turn.
	var alt1, alt2 num3072
	for n := 0; n < 3072; n++ {
		if (n/52)%2 == 0 {
			alt1[n/64] |= 1 << (n % 64)
		} else {
			alt2[n/64] |= 1 << (n % 64)
		}
	}
	return append(vals, alt1, alt2)
}

// checkMulFull compares every product implementation with math/big.Int's
// multiplication of the same operands, an independent computation.
func checkMulFull(t *testing.T, x, y num3072) {
	t.Helper()
	var want [2 * num3072Limbs]uint64
	prod := new(big.Int).Mul(x.bigInt(), y.bigInt())
	var be [2 * num3072Bytes]byte
	prod.FillBytes(be[:])
	for i := range want {
		want[i] = binary.BigEndian.Uint64(be[len(be)-8-8*i:])
	}
	for _, impl := range availableMulImpls() {
		var got [2 * num3072Limbs]uint64
		for i := range got {
			got[i] = 0xdeadbeefdeadbeef // stale content must be overwritten
		}
		mulFullWith(impl, &got, &x, &y)
		if got != want {
			t.Fatalf("%v: x·y differs from math/big for\nx=%x\ny=%x", impl, x.bigInt(), y.bigInt())
		}
	}
}

// Every product (IFMA kernel, Comba, math/big's nat) equals big.Int.Mul on
// edge values paired with each other and with random operands, and on
// random operands of random density.
func TestMulFullImplementations(t *testing.T) {
	if !hasMulIFMA() {
		t.Log("no AVX-512 IFMA here: comparing math/big and Comba only")
	}
	r := rand.New(rand.NewPCG(11, 12))
	random := func() num3072 {
		var a num3072
		switch r.IntN(4) {
		case 0: // short: top words zero
			for i := range a[:1+r.IntN(num3072Limbs)] {
				a[i] = r.Uint64()
			}
		case 1: // words near all ones
			for i := range a {
				a[i] = ^uint64(0) ^ (1 << r.IntN(64) & r.Uint64())
			}
		default:
			for i := range a {
				a[i] = r.Uint64()
			}
		}
		return a
	}
	edges := mulEdgeValues()
	special := edges[:6]
	for _, x := range edges {
		for _, y := range special {
			checkMulFull(t, x, y)
			checkMulFull(t, y, x)
		}
		checkMulFull(t, x, x)
		checkMulFull(t, x, random())
	}
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := 0; i < n; i++ {
		checkMulFull(t, random(), random())
	}
}

// reduceADX equals reduce, and both equal t mod p from math/big, on
// products and on arbitrary 6144-bit values: all ones (the largest carry),
// halves of all ones or zero, single words, random.
func TestReduceADX(t *testing.T) {
	if !hasMulIFMA() {
		t.Skip("no AVX-512 IFMA/ADX on this CPU")
	}
	p := muPrime()
	r := rand.New(rand.NewPCG(15, 16))
	var cases [][2 * num3072Limbs]uint64
	var ones, loOnes, hiOnes [2 * num3072Limbs]uint64
	for i := range ones {
		ones[i] = ^uint64(0)
		if i < num3072Limbs {
			loOnes[i] = ^uint64(0)
		} else {
			hiOnes[i] = ^uint64(0)
		}
	}
	cases = append(cases, [2 * num3072Limbs]uint64{}, ones, loOnes, hiOnes)
	for i := 0; i < 2*num3072Limbs; i++ {
		var w [2 * num3072Limbs]uint64
		w[i] = ^uint64(0)
		cases = append(cases, w)
	}
	// Word i all ones and c·t_hi[i−1]'s high word added into it: a carry on
	// the second (ADOX) chain out of word i, the last word included.
	for i := 1; i < num3072Limbs; i++ {
		var w [2 * num3072Limbs]uint64
		w[i], w[num3072Limbs+i-1] = ^uint64(0), ^uint64(0)
		cases = append(cases, w)
	}
	for i := 0; i < 500; i++ {
		var w [2 * num3072Limbs]uint64
		for k := range w {
			w[k] = r.Uint64()
		}
		cases = append(cases, w)
		var x, y num3072
		for k := range x {
			x[k], y[k] = r.Uint64(), r.Uint64()
		}
		mulFullComba(&w, &x, &y)
		cases = append(cases, w)
	}
	for _, w := range cases {
		var want, got num3072
		want.reduce(&w)
		got.reduceADX(&w)
		tv := new(big.Int)
		for k := len(w) - 1; k >= 0; k-- {
			tv.Lsh(tv, 64).Or(tv, new(big.Int).SetUint64(w[k]))
		}
		if got != want || got.bigInt().Cmp(tv.Mod(tv, p)) != 0 {
			t.Fatalf("reduceADX(%x) = %x, reduce %x, math/big %x", w, got.bigInt(), want.bigInt(), tv)
		}
	}
}

// mulMod through each implementation, with z aliasing both operands,
// equals x·x mod p from math/big.
func TestMulModAliasing(t *testing.T) {
	p := muPrime()
	r := rand.New(rand.NewPCG(13, 14))
	for _, impl := range availableMulImpls() {
		useMulImpl(t, impl)
		for i := 0; i < 100; i++ {
			var x num3072
			for k := range x {
				x[k] = r.Uint64()
			}
			want := new(big.Int).Mul(x.bigInt(), x.bigInt())
			want.Mod(want, p)
			z := x
			z.mulMod(&z, &z)
			if z.bigInt().Cmp(want) != 0 {
				t.Fatalf("%v: z.mulMod(&z, &z) is not x² mod p for x=%x", impl, x.bigInt())
			}
		}
	}
}

// The whole MuHash3072, Core's vectors included, on every product: the
// kernel where the CPU has it, and math/big and Comba forced beside it.
func TestMuHashEveryMulImpl(t *testing.T) {
	for _, impl := range availableMulImpls() {
		t.Run(impl.String(), func(t *testing.T) {
			useMulImpl(t, impl)
			t.Run("CoreVectors", TestMuHashCoreVectors)
			t.Run("Empty", TestMuHashEmpty)
			t.Run("OrderIndependence", TestMuHashOrderIndependence)
			t.Run("MulModAgainstBig", TestMuHashMulModAgainstBig)
			t.Run("FinalizeAgainstBig", TestMuHashFinalizeAgainstBig)
		})
	}
}

func FuzzMulFull(f *testing.F) {
	f.Add(make([]byte, 2*num3072Bytes))
	all := make([]byte, 2*num3072Bytes)
	for i := range all {
		all[i] = 0xff
	}
	f.Add(all)
	f.Fuzz(func(t *testing.T, b []byte) {
		var in [2 * num3072Bytes]byte
		copy(in[:], b)
		var x, y num3072
		x.setBytes(in[:num3072Bytes])
		y.setBytes(in[num3072Bytes:])
		checkMulFull(t, x, y)
	})
}

// BenchmarkMuHashMulFull is the 6144-bit product alone (mulMod without the
// shared reduction) per implementation.
func BenchmarkMuHashMulFull(b *testing.B) {
	var x, y num3072
	for i := range x {
		x[i] = uint64(i) * 0x9e3779b97f4a7c15
		y[i] = uint64(i+7) * 0xbf58476d1ce4e5b9
	}
	for _, impl := range availableMulImpls() {
		b.Run(impl.String(), func(b *testing.B) {
			var t [2 * num3072Limbs]uint64
			b.ReportAllocs()
			switch impl {
			case mulBig:
				s := getMulScratch()
				s.x, s.y = x, y
				for b.Loop() {
					mulFull(&s.t, &s.x, &s.y)
				}
			case mulComba:
				for b.Loop() {
					mulFullComba(&t, &x, &y)
				}
			case mulIFMA:
				for b.Loop() {
					mulFullIFMA(&t, &x, &y)
				}
			}
		})
	}
}

// BenchmarkMuHashReduce is the reduction alone: the Go loop, and the ADX
// one the IFMA path uses.
func BenchmarkMuHashReduce(b *testing.B) {
	var t [2 * num3072Limbs]uint64
	for i := range t {
		t[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	var z num3072
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			z.reduce(&t)
		}
	})
	if hasMulIFMA() {
		b.Run("adx", func(b *testing.B) {
			for b.Loop() {
				z.reduceADX(&t)
			}
		})
	}
}
