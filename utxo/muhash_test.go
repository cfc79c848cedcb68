package utxo

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"utxod/wire"
)

// muFromInt is Core's FromInt helper in src/test/crypto_tests.cpp: a 32-byte
// buffer {i, 0, 0, ...} inserted into an empty MuHash3072.
func muFromInt(i byte) *MuHash3072 {
	var tmp [32]byte
	tmp[0] = i
	var m MuHash3072
	m.Insert(tmp[:])
	return &m
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Core's muhash_tests (src/test/crypto_tests.cpp, BOOST_AUTO_TEST_CASE
// muhash_tests), ported. Core compares the first two with uint256S("..."),
// i.e. display (byte-reversed) order = our wire.Hash.String(); the overflow
// vector is compared through HexStr(out4), i.e. raw byte order.
func TestMuHashCoreVectors(t *testing.T) {
	// FromInt(0) *= FromInt(1) /= FromInt(2).
	acc := muFromInt(0)
	acc.Combine(muFromInt(1))
	acc.Divide(muFromInt(2))
	const want1 = "10d312b100cbd32ada024a6646e40d3482fcff103668d2625f10002a607d5863"
	if got := acc.Finalize().String(); got != want1 {
		t.Errorf("FromInt(0)*FromInt(1)/FromInt(2) = %s, want %s (Core crypto_tests.cpp)", got, want1)
	}

	// Same through Insert/Remove.
	acc2 := muFromInt(0)
	var one, two [32]byte
	one[0], two[0] = 1, 2
	acc2.Insert(one[:])
	acc2.Remove(two[:])
	if got := acc2.Finalize().String(); got != want1 {
		t.Errorf("Insert/Remove variant = %s, want %s (Core crypto_tests.cpp)", got, want1)
	}

	// Serialization of FromInt(1)*FromInt(2): Core's ser_exp (transcribed
	// in btclib-org/btclib tests/_data/muhash_vectors.json "serialization").
	ser := muFromInt(1)
	ser.Combine(muFromInt(2))
	const serExpPrefix = "1fa093295ea30a6a3acdc7b3f770fa538eff537528e990e2910e40bbcfd7f6696b1256901929094694b56316de342f593303dd12ac43e06dce1be1ff8301c845beb15468fff0ef002dbf80c29f26e6452bccc91b5cb9437ad410d2a67ea847887fa3c6a6553309946880fe20db2c73fe0641adbd4e86edfee0d9f8cd0ee1230898873dc13ed8ddcaf045c80faa082774279007a2253f8922ee3ef361d378a6af3ddaf180b190ac97e556888c36b3d1fb1c85aab9ccd46e3deaeb7b7cf5db067a7e9ff86b658cf3acd6662bbcce37232daa753c48b794356c020090c831a8304416e2aa7ad633c0ddb2f11be1be316a81be7f7e472071c042cb68faef549c221ebff209273638b741aba5a81675c45a5fa92fea4ca821d7a324cb1e1a2ccd3b76c4228ec8066dad2a5df6e1bd0de45c7dd5de8070bdb46db6c554cf9aefc9b7b2bbf9f75b1864d9f95005314593905c0109b71f703d49944ae94477b51dac10a816bb6d1c700bafabc8bd86fac8df24be519a2f2836b16392e18036cb13e48c5c01"
	serExp := serExpPrefix + strings.Repeat("0", 2*MuHashStateSize-len(serExpPrefix))
	got, err := ser.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(got) != serExp {
		t.Errorf("serialization mismatch:\n got %x\nwant %s", got, serExp)
	}
	var de MuHash3072
	if err := de.UnmarshalBinary(got); err != nil {
		t.Fatal(err)
	}
	if de.Finalize() != ser.Finalize() {
		t.Error("deserialized state finalizes differently")
	}

	// Overflow: numerator 2^3072−1 (all 0xff, above p), denominator 1;
	// Core checks HexStr(out4), raw byte order.
	state := bytes.Repeat([]byte{0xff}, num3072Bytes)
	state = append(state, 1)
	state = append(state, make([]byte, num3072Bytes-1)...)
	var ov MuHash3072
	if err := ov.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	const want4 = "3a31e6903aff0de9f62f9a9f7f8b861de76ce2cda09822b90014319ae5dc2271"
	if h := ov.Finalize(); hex.EncodeToString(h[:]) != want4 {
		t.Errorf("overflow finalize = %x, want %s (Core crypto_tests.cpp, HexStr)", h[:], want4)
	}
}

// The empty set finalizes to SHA-256 of the 384-byte LE encoding of 1.
// Expected value: the brief's display-order digest; independently,
// `(printf '\x01'; head -c 383 /dev/zero) | sha256sum` prints the raw-order
// c85525462fdcf30a2c18d6f4b92923000974355c2477f59594d2c205a1d25add, which is
// the same 32 bytes reversed.
func TestMuHashEmpty(t *testing.T) {
	const wantDisplay = "dd5ad2a105c2d29495f577245c357409002329b9f4d6182c0af3dc2f462555c8"
	var z MuHash3072
	if got := z.Finalize().String(); got != wantDisplay {
		t.Errorf("zero value finalize = %s, want %s", got, wantDisplay)
	}
	// Insert then remove the same element: back to the empty set.
	var m MuHash3072
	m.Insert([]byte("x"))
	m.Remove([]byte("x"))
	if got := m.Finalize().String(); got != wantDisplay {
		t.Errorf("insert+remove finalize = %s, want %s", got, wantDisplay)
	}
}

// Core's randomized part of muhash_tests: for random tables of 4 operations
// the result does not depend on the order, and X·Y/(Y·X) is the empty set.
func TestMuHashOrderIndependence(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 10; iter++ {
		var table [4]int
		for i := range table {
			table[i] = r.IntN(8)
		}
		var res [32]byte
		for order := 0; order < 4; order++ {
			var acc MuHash3072
			for i := 0; i < 4; i++ {
				tv := table[i^order]
				if tv&4 != 0 {
					acc.Divide(muFromInt(byte(tv & 3)))
				} else {
					acc.Combine(muFromInt(byte(tv & 3)))
				}
			}
			out := acc.Finalize()
			if order == 0 {
				res = out
			} else if out != res {
				t.Fatalf("iter %d order %d: %s != %x", iter, order, out, res)
			}
		}
		x := muFromInt(byte(r.IntN(16)))
		y := muFromInt(byte(r.IntN(16)))
		var z MuHash3072
		z.Combine(x)
		z.Combine(y)
		y.Combine(x)
		z.Divide(y)
		var empty MuHash3072
		if z.Finalize() != empty.Finalize() {
			t.Fatal("X*Y/(Y*X) is not the empty set")
		}
	}

	// Incremental insert/remove in two different orders with interleaved
	// removals give the same digest as inserting only the survivors.
	elems := make([][]byte, 40)
	for i := range elems {
		elems[i] = []byte{byte(i), byte(i * 7), 3}
	}
	var a, b, want MuHash3072
	for _, e := range elems {
		a.Insert(e)
	}
	for i := range 20 {
		a.Remove(elems[2*i])
	}
	perm := r.Perm(len(elems))
	for _, i := range perm {
		if i%2 == 0 {
			b.Remove(elems[i])
		}
		b.Insert(elems[i])
	}
	for i := range 20 {
		want.Insert(elems[2*i+1])
	}
	if a.Finalize() != want.Finalize() || b.Finalize() != want.Finalize() {
		t.Fatal("incremental insert/remove depends on order")
	}
}

// mulMod against math/big: for random and edge-case operands, x·y mod p from
// the limb code equals (x·y) mod p computed by math/big.
func TestMuHashMulModAgainstBig(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	p := muPrime()
	rnd := func() num3072 {
		var a num3072
		switch r.IntN(6) {
		case 0: // all ones (2^3072−1, above p)
			for i := range a {
				a[i] = ^uint64(0)
			}
		case 1: // p−1
			a.setBig(new(big.Int).Sub(p, big.NewInt(1)))
		case 2: // small
			a[0] = r.Uint64() % 5
		case 3: // p + small (non-reduced input)
			a.setBig(new(big.Int).Add(p, big.NewInt(int64(r.IntN(muPrimeDiff)))))
		default:
			for i := range a {
				a[i] = r.Uint64()
			}
		}
		return a
	}
	for i := 0; i < 2000; i++ {
		x, y := rnd(), rnd()
		want := new(big.Int).Mul(x.bigInt(), y.bigInt())
		want.Mod(want, p)
		var z num3072
		z.mulMod(&x, &y)
		if z.bigInt().Cmp(want) != 0 {
			t.Fatalf("mulMod mismatch for x=%x y=%x", x.bigInt(), y.bigInt())
		}
	}
}

// Finalize against a math/big reference of the whole construction.
func TestMuHashFinalizeAgainstBig(t *testing.T) {
	p := muPrime()
	r := rand.New(rand.NewPCG(5, 6))
	num, den := big.NewInt(1), big.NewInt(1)
	var m MuHash3072
	for i := 0; i < 50; i++ {
		data := make([]byte, r.IntN(100))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		var e num3072
		muHashElement(&e, data)
		if r.IntN(3) == 0 {
			m.Remove(data)
			den.Mul(den, e.bigInt()).Mod(den, p)
		} else {
			m.Insert(data)
			num.Mul(num, e.bigInt()).Mod(num, p)
		}
	}
	q := new(big.Int).ModInverse(den, p)
	q.Mul(q, num).Mod(q, p)
	var qn num3072
	qn.setBig(q)
	want := sha256Sum(qn.appendBytes(nil))
	if got := m.Finalize(); got != want {
		t.Fatalf("finalize %x, reference %x", got, want)
	}
}

func TestMuHashUnmarshalErrors(t *testing.T) {
	var m MuHash3072
	for _, n := range []int{0, 1, MuHashStateSize - 1, MuHashStateSize + 1} {
		if err := m.UnmarshalBinary(make([]byte, n)); !errors.Is(err, ErrMuHashState) {
			t.Errorf("len %d: err %v, want ErrMuHashState", n, err)
		}
	}
	// A zero denominator has no inverse; Finalize must not panic.
	if err := m.UnmarshalBinary(make([]byte, MuHashStateSize)); err != nil {
		t.Fatal(err)
	}
	_ = m.Finalize()
}

func FuzzMuHashUnmarshal(f *testing.F) {
	var m MuHash3072
	m.Insert([]byte("seed"))
	s, _ := m.MarshalBinary()
	f.Add(s)
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m MuHash3072
		if err := m.UnmarshalBinary(b); err != nil {
			return
		}
		out, _ := m.MarshalBinary()
		var m2 MuHash3072
		if err := m2.UnmarshalBinary(out); err != nil {
			t.Fatal(err)
		}
		if m.Finalize() != m2.Finalize() {
			t.Fatal("round trip changes the digest")
		}
		out2, _ := m2.MarshalBinary()
		if !bytes.Equal(out, out2) {
			t.Fatal("marshal is not idempotent")
		}
	})
}

// BenchmarkMuHashInsert runs Insert (element + multiplication) on each
// multiplication the host has; the sub-benchmarks are the kernel's
// comparison (bench/results/digests.md).
func BenchmarkMuHashInsert(b *testing.B) {
	for _, impl := range availableMulImpls() {
		b.Run(impl.String(), func(b *testing.B) {
			useMulImpl(b, impl)
			var m MuHash3072
			data := make([]byte, 100)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				data[0] = byte(i)
				m.Insert(data)
			}
		})
	}
}

func BenchmarkMuHashRemove(b *testing.B) {
	var m MuHash3072
	data := make([]byte, 100)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		data[0] = byte(i)
		m.Remove(data)
	}
}

// BenchmarkMuHashMulMod runs one 3072-bit modular multiplication (product
// and reduction) per op on each multiplication the host has.
func BenchmarkMuHashMulMod(b *testing.B) {
	for _, impl := range availableMulImpls() {
		b.Run(impl.String(), func(b *testing.B) {
			useMulImpl(b, impl)
			var x, y num3072
			for i := range x {
				x[i] = uint64(i) * 0x9e3779b97f4a7c15
				y[i] = uint64(i+7) * 0xbf58476d1ce4e5b9
			}
			b.ReportAllocs()
			for b.Loop() {
				x.mulMod(&x, &y)
			}
		})
	}
}

func BenchmarkMuHashElement(b *testing.B) {
	var e num3072
	data := make([]byte, 100)
	b.ReportAllocs()
	for b.Loop() {
		muHashElement(&e, data)
	}
}

func BenchmarkMuHashFinalize(b *testing.B) {
	var m MuHash3072
	m.Insert([]byte("a"))
	m.Remove([]byte("b"))
	b.ReportAllocs()
	for b.Loop() {
		_ = m.Finalize()
	}
}

func sha256Sum(b []byte) wire.Hash { return wire.Hash(sha256.Sum256(b)) }

// The math/big multiplication (mulFull) against the pure-Go Comba loop on
// random and edge-case operands: zeros, all-ones, short (top limbs zero).
func TestMulFullMatchesComba(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 3000; i++ {
		var x, y num3072
		for k := range x {
			x[k], y[k] = r.Uint64(), r.Uint64()
		}
		switch i % 6 {
		case 0:
			x = num3072{}
		case 1:
			for k := range y {
				y[k] = ^uint64(0)
			}
		case 2:
			clear(x[1+r.IntN(47):])
		case 3:
			clear(y[r.IntN(48):])
			clear(x[:r.IntN(48)])
		}
		var a, b [2 * num3072Limbs]uint64
		for k := range b {
			b[k] = 0xdeadbeef // stale content must be overwritten
		}
		mulFullComba(&a, &x, &y)
		mulFull(&b, &x, &y)
		if a != b {
			t.Fatalf("case %d: math/big product differs from Comba", i)
		}
	}
}

// The AVX-512 ChaCha20 keystream (when this CPU has it) equals x/crypto's
// for random keys; Core's vectors (TestMuHashCoreVectors) run on whichever
// the package selected.
func TestChachaAVX512MatchesGeneric(t *testing.T) {
	if !hasChachaAVX512() {
		t.Skip("no AVX-512F/BMI2 on this CPU")
	}
	if !chachaAVX512 {
		t.Fatal("the CPU has AVX-512 but the self-test rejected the kernel")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 2000; i++ {
		var key [32]byte
		for k := range key {
			key[k] = byte(r.Uint32())
		}
		var a, b num3072
		muHashKeystreamGeneric(&a, &key)
		muHashKeystreamAVX512(&b, &key)
		if a != b {
			t.Fatalf("key %x: keystreams differ", key)
		}
	}
}
