package utxo

import (
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"
)

// chachaImpl names a keystream implementation for the tests: x/crypto's
// generic code or the AVX-512 kernel.
type chachaImpl bool

func (c chachaImpl) String() string {
	if c {
		return "avx512"
	}
	return "generic"
}

// availableChachaImpls lists the keystreams this host can run.
func availableChachaImpls() []chachaImpl {
	impls := []chachaImpl{false}
	if hasChachaAVX512() {
		impls = append(impls, true)
	}
	return impls
}

// useChachaImpl makes the element mapping use impl until the end of the
// test or benchmark.
func useChachaImpl(tb testing.TB, impl chachaImpl) {
	tb.Helper()
	prev := chachaAVX512
	chachaAVX512 = bool(impl)
	tb.Cleanup(func() { chachaAVX512 = prev })
}

func randomKeys(r *rand.Rand, n int) [][32]byte {
	keys := make([][32]byte, n)
	for i := range keys {
		for k := range keys[i] {
			keys[i][k] = byte(r.Uint32())
		}
	}
	return keys
}

// muHashKeystreams on every implementation equals x/crypto's ChaCha20
// (muHashKeystreamGeneric) element by element for every batch size 0..40,
// and writes nothing outside out[:n] (guard elements on both sides).
func TestMuHashKeystreamsEveryImpl(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var guard num3072
	for i := range guard {
		guard[i] = 0xa5a5a5a5a5a5a5a5 ^ uint64(i)
	}
	for _, impl := range availableChachaImpls() {
		t.Run(impl.String(), func(t *testing.T) {
			useChachaImpl(t, impl)
			for n := 0; n <= 40; n++ {
				for rep := 0; rep < 3; rep++ {
					keys := randomKeys(r, n)
					buf := make([]num3072, n+2)
					for i := range buf {
						buf[i] = guard
					}
					muHashKeystreams(buf[1:n+1], keys)
					if buf[0] != guard || buf[n+1] != guard {
						t.Fatalf("n=%d: wrote outside the batch", n)
					}
					for i := range keys {
						var want num3072
						muHashKeystreamGeneric(&want, &keys[i])
						if buf[1+i] != want {
							t.Fatalf("n=%d element %d (key %x): keystream differs from x/crypto", n, i, keys[i])
						}
					}
				}
			}
		})
	}
}

// randomDatas returns n byte strings of random lengths, TxOutSer-like ones
// (≈ 50–120 bytes) and beyond (0 and up to 300).
func randomDatas(r *rand.Rand, n int) [][]byte {
	datas := make([][]byte, n)
	for i := range datas {
		l := 48 + r.IntN(72)
		if r.IntN(4) == 0 {
			l = r.IntN(300)
		}
		datas[i] = make([]byte, l)
		for k := range datas[i] {
			datas[i][k] = byte(r.Uint32())
		}
	}
	return datas
}

func muState(t *testing.T, m *MuHash3072) string {
	t.Helper()
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// InsertMany, RemoveMany and InsertConcat reach the same state as Insert and
// Remove one element at a time, for batch sizes 0..40, from the empty set
// and from a used state, on every keystream and every multiplication.
func TestMuHashBatchMatchesOneByOne(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, ci := range availableChachaImpls() {
		for _, mi := range availableMulImpls() {
			t.Run(ci.String()+"/"+mi.String(), func(t *testing.T) {
				useChachaImpl(t, ci)
				useMulImpl(t, mi)
				for n := 0; n <= 40; n++ {
					ins, rem := randomDatas(r, n), randomDatas(r, (n*7)%41)
					var start MuHash3072
					if n%2 == 1 {
						start.Insert([]byte("used"))
						start.Remove([]byte("state"))
					}
					one, many, concat := start, start, start
					for _, d := range ins {
						one.Insert(d)
					}
					for _, d := range rem {
						one.Remove(d)
					}
					many.InsertMany(ins)
					many.RemoveMany(rem)
					var buf []byte
					var ends []int
					for _, d := range ins {
						buf = append(buf, d...)
						ends = append(ends, len(buf))
					}
					if err := concat.InsertConcat(buf, ends); err != nil {
						t.Fatal(err)
					}
					concat.RemoveMany(rem)
					want := muState(t, &one)
					if muState(t, &many) != want {
						t.Fatalf("n=%d: InsertMany/RemoveMany differ from Insert/Remove", n)
					}
					if muState(t, &concat) != want {
						t.Fatalf("n=%d: InsertConcat differs from Insert", n)
					}
				}
			})
		}
	}
}

// Core's first vector (FromInt(0)·FromInt(1)/FromInt(2), crypto_tests.cpp)
// through the batch API, on every keystream.
func TestMuHashBatchCoreVector(t *testing.T) {
	const want = "10d312b100cbd32ada024a6646e40d3482fcff103668d2625f10002a607d5863"
	for _, ci := range availableChachaImpls() {
		t.Run(ci.String(), func(t *testing.T) {
			useChachaImpl(t, ci)
			var e0, e1, e2 [32]byte
			e1[0], e2[0] = 1, 2
			var m MuHash3072
			m.InsertMany([][]byte{e0[:], e1[:]})
			m.RemoveMany([][]byte{e2[:]})
			if got := m.Finalize().String(); got != want {
				t.Errorf("InsertMany/RemoveMany: %s, want %s", got, want)
			}
			var c MuHash3072
			buf := append(append([]byte(nil), e0[:]...), e1[:]...)
			if err := c.InsertConcat(buf, []int{32, 64}); err != nil {
				t.Fatal(err)
			}
			c.Remove(e2[:])
			if got := c.Finalize().String(); got != want {
				t.Errorf("InsertConcat: %s, want %s", got, want)
			}
			t.Run("CoreVectors", TestMuHashCoreVectors)
			t.Run("Empty", TestMuHashEmpty)
			t.Run("OrderIndependence", TestMuHashOrderIndependence)
			t.Run("FinalizeAgainstBig", TestMuHashFinalizeAgainstBig)
		})
	}
}

// InsertConcat refuses ends that are decreasing, negative or past the
// buffer, and leaves the state as it was.
func TestMuHashInsertConcatBadEnds(t *testing.T) {
	buf := make([]byte, 10)
	for _, ends := range [][]int{{-1}, {11}, {5, 4}, {3, 10, 11}, {0, 0, 12}} {
		var m MuHash3072
		m.Insert([]byte("x"))
		before := muState(t, &m)
		if err := m.InsertConcat(buf, ends); !errors.Is(err, ErrMuHashEnds) {
			t.Errorf("ends %v: err %v, want ErrMuHashEnds", ends, err)
		}
		if muState(t, &m) != before {
			t.Errorf("ends %v: state changed", ends)
		}
	}
	// Empty elements (equal ends) are elements: SHA-256 of nothing.
	var a, b MuHash3072
	if err := a.InsertConcat(buf, []int{0, 0, 10}); err != nil {
		t.Fatal(err)
	}
	b.Insert(nil)
	b.Insert(nil)
	b.Insert(buf)
	if muState(t, &a) != muState(t, &b) {
		t.Error("empty elements inserted differently")
	}
}

// BenchmarkMuHashKeystream: the keystream alone, one element per call (the
// Insert path) and in batches (the batch paths), in ns per element.
func BenchmarkMuHashKeystream(b *testing.B) {
	keys := randomKeys(rand.New(rand.NewPCG(1, 1)), 64)
	out := make([]num3072, len(keys))
	for _, impl := range availableChachaImpls() {
		b.Run(impl.String()+"/one", func(b *testing.B) {
			useChachaImpl(b, impl)
			for i := 0; b.Loop(); i++ {
				k := &keys[i%len(keys)]
				if impl {
					muHashKeystreamAVX512(&out[0], k)
				} else {
					muHashKeystreamGeneric(&out[0], k)
				}
			}
		})
		for _, n := range []int{2, 8, muBatch} {
			b.Run(impl.String()+"/batch"+strconv.Itoa(n), func(b *testing.B) {
				useChachaImpl(b, impl)
				for b.Loop() {
					muHashKeystreams(out[:n], keys[:n])
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/elem")
			})
		}
	}
}

// BenchmarkMuHashElements: SHA-256 and keystream of muBatch 100-byte
// elements per op, in ns per element (BenchmarkMuHashElement is one), with
// the keys hashed by crypto/sha256 one at a time or by sha256Many.
func BenchmarkMuHashElements(b *testing.B) {
	datas := make([][]byte, muBatch)
	for i := range datas {
		datas[i] = make([]byte, 100)
		datas[i][0] = byte(i)
	}
	var keys [muBatch][32]byte
	var out [muBatch]num3072
	for _, many := range []bool{false, true} {
		name := "stdlib"
		if many {
			name = "sha256Many"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if many {
					sha256Many(keys[:], datas)
				} else {
					for j, d := range datas {
						keys[j] = sha256.Sum256(d)
					}
				}
				muHashKeystreams(out[:], keys[:])
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*muBatch), "ns/elem")
		})
	}
}

// BenchmarkMuHashInsertMany is BenchmarkMuHashInsert's work through
// InsertMany, 4096 100-byte elements per op (a snapshot worker's batch), in
// ns per element.
func BenchmarkMuHashInsertMany(b *testing.B) {
	datas := make([][]byte, 4096)
	for i := range datas {
		datas[i] = make([]byte, 100)
		datas[i][0], datas[i][1] = byte(i), byte(i>>8)
	}
	for _, impl := range availableMulImpls() {
		b.Run(impl.String(), func(b *testing.B) {
			useMulImpl(b, impl)
			var m MuHash3072
			b.ReportAllocs()
			for b.Loop() {
				m.InsertMany(datas)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(datas)), "ns/elem")
		})
	}
}
