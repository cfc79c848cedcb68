package kvstore

import (
	"bytes"
	"encoding/binary"
	"slices"

	"utxod/wire"
)

// radixMin is the length from which keyOrder sorts by radix; below it a
// comparison sort is as fast.
const radixMin = 1 << 12

func compareHash(a, b wire.Hash) int { return bytes.Compare(a[:], b[:]) }

// keyOrder returns the permutation that sorts t in byte order (the
// store's key order): t[order[0]] ≤ t[order[1]] ≤ …. A comparison sort of
// a mainnet-sized flush's millions of 32-byte keys is slow on the flushing
// goroutine (BenchmarkKeyOrder), so long slices
// are sorted as 8-byte words instead: each txid's leading 32 bits above its
// index, by two stable counting passes of 16 bits; keys that share their
// leading 32 bits (rare: txids are uniform) are then ordered by the whole
// txid, and the words' indices are the order. Extra memory: 16 bytes a
// key. t is not moved: its readers in key order load independently of
// each other, where permuting t in place would chase one cache miss after
// another.
func keyOrder(t []wire.Hash) []uint64 { return keyOrderFrom(t, radixMin) }

// keyOrderFrom is keyOrder sorting by radix from `from` keys on (tests
// lower it).
func keyOrderFrom(t []wire.Hash, from int) []uint64 {
	n := len(t)
	if n < from || uint64(n) > 1<<32 {
		order := make([]uint64, n)
		for i := range order {
			order[i] = uint64(i)
		}
		slices.SortFunc(order, func(x, y uint64) int { return compareHash(t[x], t[y]) })
		return order
	}
	a, b := make([]uint64, n), make([]uint64, n)
	for i := range t {
		a[i] = uint64(binary.BigEndian.Uint32(t[i][:4]))<<32 | uint64(i)
	}
	count := make([]int, 1<<16)
	for shift := 32; shift < 64; shift += 16 {
		clear(count)
		for _, x := range a {
			count[x>>shift&0xffff]++
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for _, x := range a {
			d := x >> shift & 0xffff
			b[count[d]] = x
			count[d]++
		}
		a, b = b, a
	}
	b = nil
	for i := 0; i < n; {
		j := i + 1
		for j < n && a[j]>>32 == a[i]>>32 {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(a[i:j], func(x, y uint64) int { return compareHash(t[uint32(x)], t[uint32(y)]) })
		}
		for ; i < j; i++ {
			a[i] &= 1<<32 - 1 // the index is left
		}
	}
	return a
}
