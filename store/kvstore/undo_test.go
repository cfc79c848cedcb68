package kvstore

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"utxod/store"
	"utxod/store/kvstore/undorec/undotest"
	"utxod/utxo"
	"utxod/wire"
)

// TestUndoReadsCreatedCoins: a version-2 undo record of the tip gives back
// the coins the block created, from the cache and, after a flush empties
// it, from the store; a record whose created coin is no longer in the set
// (the block is not the tip) is refused.
func TestUndoReadsCreatedCoins(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	d := undotest.RandomDelta(rng)
	d.Spent, d.Overwritten = nil, nil
	for i := range d.Created {
		// One height and flag per transaction, as the record codec needs.
		d.Created[i].Value, d.Created[i].Height, d.Created[i].Coinbase = int64(i+1), 5, false
	}
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			s := openStore(t, openKV(t, name, dir), Options{CacheBytes: 1})
			defer s.Close()
			blk := wire.Hash{7}
			if err := s.Connect(blk, d); err != nil {
				t.Fatal(err)
			}
			check := func(when string) {
				t.Helper()
				got, err := s.Undo(blk)
				if err != nil {
					t.Fatalf("%s: %v", when, err)
				}
				undotest.SameEntries(t, when, got.Created, d.Created, true)
			}
			check("cached")
			var st store.Stats
			st.SetTip(1, blk)
			if err := s.Flush(nil, &st); err != nil {
				t.Fatal(err)
			}
			check("read from the store")
			// The next block spends one of them: blk's record can no
			// longer be filled in.
			next := &utxo.Delta{Spent: []utxo.Entry{d.Created[0]}}
			if err := s.Connect(wire.Hash{8}, next); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Undo(blk); !errors.Is(err, ErrBadUndo) {
				t.Fatalf("undo of a block whose created coin is spent: %v", err)
			}
		})
	}
}
