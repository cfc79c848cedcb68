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
	for _, op := range randomOutpoints(rng, 64) {
		// A twin with the same first eight bytes and index: the same key.
		twin := op
		twin.Hash[31] ^= 0xff
		pool = append(pool, op, twin)
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

// TestLazyMuHashQueueMatchesDirect sends random blocks of changes through
// the recording goroutine (enqueue) and, every other block, records them in
// place (recordNow, the default), reading pending and materialising at
// random points while it may be running, and requires the digest of the
// same changes applied directly, in order.
func TestLazyMuHashQueueMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	pool := randomOutpoints(rng, 256)
	for round := 0; round < 10; round++ {
		lazy := newLazyMuHash()
		var direct, got utxo.MuHash3072
		for blk := 0; blk < 300; blk++ {
			var removed, added []utxo.Entry
			for n := rng.IntN(40); n > 0; n-- {
				e := utxo.Entry{Outpoint: pool[rng.IntN(len(pool))],
					Coin: utxo.Coin{Value: int64(rng.IntN(3)), Height: uint32(rng.IntN(2)), Script: []byte{0x51}}}
				if rng.IntN(2) == 0 {
					removed = append(removed, e)
				} else {
					added = append(added, e)
				}
			}
			for _, e := range removed {
				direct.RemoveCoin(e.Outpoint, e.Coin)
			}
			for _, e := range added {
				direct.InsertCoin(e.Outpoint, e.Coin)
			}
			if blk%2 == 0 {
				lazy.enqueue([][]utxo.Entry{removed}, [][]utxo.Entry{added})
			} else {
				lazy.wait() // recordNow runs with the queue idle
				lazy.recordNow([][]utxo.Entry{removed}, [][]utxo.Entry{added})
			}
			switch rng.IntN(60) {
			case 0:
				lazy.materialize(&got)
			case 1:
				if may := lazy.mayExceed(0); lazy.pending() > 0 && !may {
					t.Fatal("mayExceed(0) false with changes pending")
				}
			}
		}
		lazy.materialize(&got)
		if got.Finalize() != direct.Finalize() {
			t.Fatalf("round %d: queued %x, direct %x", round, got.Finalize(), direct.Finalize())
		}
	}
}

// randomOutpoints returns n outpoints with random txids and indexes 0–2.
func randomOutpoints(rng *rand.Rand, n int) []utxo.Outpoint {
	pool := make([]utxo.Outpoint, n)
	for i := range pool {
		for j := range pool[i].Hash {
			pool[i].Hash[j] = byte(rng.Uint32())
		}
		pool[i].Index = uint32(rng.IntN(3))
	}
	return pool
}

// TestLazyMuHashBoundCountsRecordNow: changes recorded in place count
// toward the bound that triggers a materialisation between flushes, as
// queued ones do (without it the record grows until the next flush).
func TestLazyMuHashBoundCountsRecordNow(t *testing.T) {
	lazy := newLazyMuHash()
	ops := randomOutpoints(rand.New(rand.NewPCG(1, 2)), 3)
	var added []utxo.Entry
	for _, op := range ops {
		added = append(added, utxo.Entry{Outpoint: op, Coin: utxo.Coin{Value: 1, Script: []byte{0x51}}})
	}
	lazy.recordNow(nil, [][]utxo.Entry{added})
	if !lazy.mayExceed(2) || lazy.pending() != 3 {
		t.Fatalf("mayExceed(2) %v, pending %d after recording 3 coins in place", lazy.mayExceed(2), lazy.pending())
	}
	var m utxo.MuHash3072
	lazy.materialize(&m)
	if lazy.mayExceed(0) {
		t.Fatal("the bound survived the materialisation")
	}
}
