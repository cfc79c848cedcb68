package chainstate

import (
	"math/rand/v2"
	"testing"

	"utxod/utxo"
)

// TestLazyMuHashMatchesDirect replays random insertions and removals —
// cancelling pairs, re-additions, BIP30-style duplicates of one outpoint
// with other bytes, and outpoints whose 64-bit keys collide — through the
// lazy record and directly through MuHash3072, materialising at random
// points, and requires the same digest.
func TestLazyMuHashMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	var pool []utxo.Outpoint
	for i := 0; i < 64; i++ {
		var op utxo.Outpoint
		for j := range op.Hash {
			op.Hash[j] = byte(rng.Uint32())
		}
		op.Index = uint32(rng.IntN(3))
		pool = append(pool, op)
		// A twin with the same first eight bytes and index: the same key.
		twin := op
		twin.Hash[31] ^= 0xff
		pool = append(pool, twin)
	}
	if outpointKey(pool[0]) != outpointKey(pool[1]) || pool[0] == pool[1] {
		t.Fatal("the twins do not collide")
	}
	for round := 0; round < 20; round++ {
		lazy := newLazyMuHash()
		var direct, got utxo.MuHash3072
		for n := 0; n < 2000; n++ {
			op := pool[rng.IntN(len(pool))]
			c := utxo.Coin{Value: int64(rng.IntN(3)), Height: uint32(rng.IntN(2)), Script: []byte{0x51}}
			if rng.IntN(2) == 0 {
				lazy.insert(op, c)
				direct.InsertCoin(op, c)
			} else {
				lazy.remove(op, c)
				direct.RemoveCoin(op, c)
			}
			if rng.IntN(500) == 0 {
				lazy.materialize(&got)
			}
		}
		lazy.materialize(&got)
		if got.Finalize() != direct.Finalize() {
			t.Fatalf("round %d: lazy %x, direct %x", round, got.Finalize(), direct.Finalize())
		}
	}
}
