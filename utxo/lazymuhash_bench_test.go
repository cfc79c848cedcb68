package utxo

import (
	"encoding/binary"
	"testing"

	"utxod/wire"
)

// BenchmarkLazyMuHashChurn is the bookkeeping of an early-chain import
// between two flushes: each iteration records 1,000 created coins and
// removes 900 of them again (spent before the flush, so they cancel), then
// materialises the 100 survivors.
func BenchmarkLazyMuHashChurn(b *testing.B) {
	const n, spent = 1000, 900
	ops := make([]Outpoint, n)
	coins := make([]Coin, n)
	for i := range ops {
		var h wire.Hash
		binary.LittleEndian.PutUint64(h[:], uint64(i)*0x9e3779b97f4a7c15)
		ops[i] = Outpoint{Hash: h, Index: uint32(i % 3)}
		script := append([]byte{0x76, 0xa9, 0x14}, h[:20]...)
		coins[i] = Coin{Value: int64(i) * 1000, Height: uint32(i), Script: append(script, 0x88, 0xac)}
	}
	set := coinSet{}
	for i := spent; i < n; i++ {
		set[ops[i]] = coins[i]
	}
	l := NewLazyMuHash()
	var m MuHash3072
	b.ReportAllocs()
	for b.Loop() {
		for i := range ops {
			l.insert(ops[i], coins[i])
		}
		for i := 0; i < spent; i++ {
			l.remove(ops[i], coins[i])
		}
		if err := l.Materialize(&m, set); err != nil {
			b.Fatal(err)
		}
	}
}
