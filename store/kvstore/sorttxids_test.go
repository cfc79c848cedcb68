package kvstore

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"utxod/wire"
)

func randomTxids(r *rand.Rand, n int) []wire.Hash {
	t := make([]wire.Hash, n)
	for i := range t {
		for j := 0; j < 32; j += 8 {
			v := r.Uint64()
			for k := range 8 {
				t[i][j+k] = byte(v >> (8 * k))
			}
		}
	}
	return t
}

// TestKeyOrder compares keyOrder with a plain comparison sort on
// uniform, skewed (one shared prefix, few distinct leading bytes) and
// duplicated keys, on both sides of radixMin.
func TestKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := []struct {
		name string
		mod  func(i int, h *wire.Hash)
	}{
		{"uniform", func(int, *wire.Hash) {}},
		{"one prefix", func(_ int, h *wire.Hash) { h[0], h[1] = 0xab, 0xcd }},
		{"few leading bytes", func(i int, h *wire.Hash) { h[0], h[1] = byte(i%3), 0 }},
		{"duplicates", func(i int, h *wire.Hash) { *h = wire.Hash{0: byte(i % 7), 31: byte(i % 5)} }},
		{"descending", func(i int, h *wire.Hash) { h[0], h[1], h[2] = byte(^uint(i)>>16), byte(^uint(i)>>8), byte(^uint(i)) }},
	}
	for _, n := range []int{0, 1, 2, radixMin - 1, radixMin, 3*radixMin + 17, 200_000} {
		for _, s := range shapes {
			got := randomTxids(r, n)
			for i := range got {
				s.mod(i, &got[i])
			}
			want := slices.Clone(got)
			slices.SortFunc(want, compareHash)
			order := keyOrder(got)
			sorted := make([]wire.Hash, 0, n)
			seen := make([]bool, n)
			for _, i := range order {
				if seen[i] {
					t.Fatalf("%s, %d keys: index %d twice", s.name, n, i)
				}
				seen[i] = true
				sorted = append(sorted, got[i])
			}
			if !slices.Equal(sorted, want) {
				t.Errorf("%s, %d keys: not sorted as a comparison sort sorts them", s.name, n)
			}
		}
	}
}

// FuzzKeyOrder: the radix path from one key on, against a comparison sort,
// on keys cut from the input (short keys are padded with the key's index
// modulo 3 in byte 31, so that many share their leading 32 bits).
func FuzzKeyOrder(f *testing.F) {
	f.Add([]byte{}, uint8(4))
	f.Add(bytes.Repeat([]byte{0xff, 0, 1}, 50), uint8(3))
	f.Add([]byte("abcdefghijklmnopqrstuvwxyz0123456789"), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, width uint8) {
		w := int(width%32) + 1
		var keys []wire.Hash
		for i := 0; i+w <= len(data); i += w {
			var h wire.Hash
			copy(h[:], data[i:i+w])
			h[31] ^= byte(len(keys) % 3)
			keys = append(keys, h)
		}
		want := slices.Clone(keys)
		slices.SortFunc(want, compareHash)
		got := make([]wire.Hash, 0, len(keys))
		seen := make([]bool, len(keys))
		for _, i := range keyOrderFrom(keys, 1) {
			if seen[i] {
				t.Fatalf("index %d twice", i)
			}
			seen[i] = true
			got = append(got, keys[i])
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%d keys of width %d: not in key order", len(keys), w)
		}
	})
}

// BenchmarkKeyOrder: the flush's key order, the radix arm against the
// comparison sort it replaced, each followed by the read of every txid in
// that order that the batch build does.
func BenchmarkKeyOrder(b *testing.B) {
	for _, n := range []int{110_000, 2_000_000} {
		t := randomTxids(rand.New(rand.NewPCG(3, 4)), n)
		buf := make([]wire.Hash, n)
		var sink byte
		b.Run("radix/n="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, i := range keyOrder(t) {
					sink ^= t[i][31]
				}
			}
		})
		b.Run("comparison/n="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, t) // sorted in place, as dirty() did
				slices.SortFunc(buf, compareHash)
				for i := range buf {
					sink ^= buf[i][31]
				}
			}
		})
		_ = sink
	}
}
