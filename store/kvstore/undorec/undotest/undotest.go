// Package undotest holds the undo record tests' helpers, shared by
// undorec's codec tests and kvstore's store tests.
package undotest

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"utxod/utxo"
	"utxod/wire"
)

// RandomDelta is a block's delta with txids repeated across entries, as
// blocks have (several outputs of one transaction in a row).
func RandomDelta(rng *rand.Rand) *utxo.Delta {
	d := &utxo.Delta{}
	entries := func(n int) []utxo.Entry {
		var out []utxo.Entry
		for len(out) < n {
			var h wire.Hash
			binary.LittleEndian.PutUint64(h[:], rng.Uint64())
			h[31] = byte(rng.IntN(256))
			for k, vout := rng.IntN(3)+1, uint32(rng.IntN(5)); k > 0 && len(out) < n; k-- {
				script := make([]byte, rng.IntN(40))
				for i := range script {
					script[i] = byte(rng.Uint32())
				}
				out = append(out, utxo.Entry{Outpoint: utxo.Outpoint{Hash: h, Index: vout},
					Coin: utxo.Coin{Value: rng.Int64N(utxo.MaxMoney), Height: rng.Uint32(), Coinbase: rng.IntN(2) == 0, Script: script}})
				vout += uint32(rng.IntN(300)) + 1
			}
		}
		return out
	}
	d.Spent, d.Overwritten, d.Created = entries(rng.IntN(20)), entries(rng.IntN(2)), entries(rng.IntN(20))
	return d
}

// SameEntries fails t unless got and want hold the same outpoints in order
// and, with coins, the same coins.
func SameEntries(t *testing.T, what string, got, want []utxo.Entry, coins bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Outpoint != w.Outpoint {
			t.Fatalf("%s %d: outpoint %v, want %v", what, i, g.Outpoint, w.Outpoint)
		}
		if coins && (g.Value != w.Value || g.Height != w.Height || g.Coinbase != w.Coinbase || !bytes.Equal(g.Script, w.Script)) {
			t.Fatalf("%s %d: coin %+v, want %+v", what, i, g.Coin, w.Coin)
		}
	}
}
