package kvstore

import (
	"fmt"
	"path/filepath"
	"testing"

	"utxod/backends"
	"utxod/store"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// TestBatchSizeBoundsBatch: the flush batch's size estimate covers every
// part of the batch (coins put and deleted, block and undo locations, block
// data and undo records in the KV, index entries with a reject reason,
// genesis, statistics and tip), so buildBatch allocates its buffer once.
func TestBatchSizeBoundsBatch(t *testing.T) {
	coin := func(h uint32) utxo.Coin {
		return utxo.Coin{Value: int64(h) * 10, Height: h, Script: []byte{0x51, byte(h)}}
	}
	op := func(b byte, i uint32) utxo.Outpoint { return utxo.Outpoint{Hash: wire.Hash{b}, Index: i} }
	for _, name := range storeNames {
		for _, files := range []bool{false, true} {
			t.Run(name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), name)
				kv := openKV(t, name, dir)
				defer kv.Close()
				opts := Options{CacheBytes: 64 << 20}
				if files {
					opts.BlocksDir, opts.UndoDir = filepath.Join(dir, "blocks"), filepath.Join(dir, "undo")
				}
				s := openStore(t, kv, opts)
				defer s.Close()
				var st store.Stats
				st.SetTip(0, wire.Hash{0xee})
				if err := s.SetGenesis(wire.Hash{0xee}, &st); err != nil {
					t.Fatal(err)
				}
				var index []validate.IndexEntry
				for i := range 40 {
					h := wire.Hash{0xb0, byte(i)}
					d := &utxo.Delta{Created: []utxo.Entry{{Outpoint: op(byte(i+1), 0), Coin: coin(uint32(i))}, {Outpoint: op(byte(i+1), 1), Coin: coin(uint32(i))}}}
					if i > 0 {
						// Spends all of the previous transaction: a deletion.
						d.Spent = []utxo.Entry{{Outpoint: op(byte(i), 0), Coin: coin(uint32(i - 1))}, {Outpoint: op(byte(i), 1), Coin: coin(uint32(i - 1))}}
					}
					if err := s.Connect(h, d); err != nil {
						t.Fatal(err)
					}
					if err := s.PutBlock(h, make([]byte, 100+i)); err != nil {
						t.Fatal(err)
					}
					e := validate.IndexEntry{Header: wire.Header{Nonce: uint32(i)}}
					if i%3 == 0 {
						e.RejectReason = "bad-txns-inputs-missingorspent"
					}
					index = append(index, e)
					st.SetTip(uint32(i+1), h)
				}
				s.index = append(s.index, index...)
				if err := s.stageStats(&st); err != nil {
					t.Fatal(err)
				}
				s.w.drain()
				s.forgetWritten()
				dirty, _, coinBytes := s.coins.dirty()
				size, ops := s.batchSize(coinBytes, len(dirty))
				b, err := s.buildBatch()
				if err != nil {
					t.Fatal(err)
				}
				if b.Size() > size || b.Len() > ops {
					t.Fatalf("batch of %d bytes and %d operations, estimated %d and %d", b.Size(), b.Len(), size, ops)
				}
				if b.Len() < len(index) {
					t.Fatalf("batch of %d operations: the test lost its blocks", b.Len())
				}
			})
		}
	}
}

// boundedKV is a KV with a bound on a batch's keys.
type boundedKV struct {
	backends.KV
	keys int
}

func (b boundedKV) MaxBatchKeys() int { return b.keys }

// TestBatchBoundFlush: on a store with a bound on a batch's keys
// (backends.BatchBounder) a flush is due as soon as the batch it would
// write has more keys than that, however small the cache; the count of
// dirty coins it relies on follows creations, spends of coins never
// written (nothing to write) and flushes.
func TestBatchBoundFlush(t *testing.T) {
	coin := utxo.Coin{Value: 1000, Height: 1, Script: []byte{0x51}}
	op := func(b byte) utxo.Outpoint { return utxo.Outpoint{Hash: wire.Hash{0xcc, b}} }
	const bound = 12
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			kv := openKV(t, name, filepath.Join(t.TempDir(), name))
			defer kv.Close()
			s := openStore(t, boundedKV{kv, bound}, Options{CacheBytes: 64 << 20})
			defer s.Close()
			var st store.Stats
			st.SetTip(0, wire.Hash{0xee})
			if err := s.SetGenesis(wire.Hash{0xee}, &st); err != nil {
				t.Fatal(err)
			}
			check := func(when string) {
				t.Helper()
				dirty, _, _ := s.coins.dirty()
				if s.coins.dirtyN != len(dirty) {
					t.Fatalf("%s: %d dirty coins counted, %d in the cache", when, s.coins.dirtyN, len(dirty))
				}
				if err := s.stageStats(&st); err != nil {
					t.Fatal(err)
				}
				b, err := s.buildBatch()
				if err != nil {
					t.Fatal(err)
				}
				// batchSize counts the four keys of genesis, schema,
				// statistics and tip, which a batch may hold fewer of.
				if got := s.NeedsFlush(); got != (b.Len() > bound) && (!got || b.Len() <= bound-4) {
					t.Fatalf("%s: NeedsFlush %v with a batch of %d keys, bound %d", when, got, b.Len(), bound)
				}
			}
			flushes := 0
			for i := range 30 {
				h := wire.Hash{0xb0, byte(i)}
				d := &utxo.Delta{Created: []utxo.Entry{{Outpoint: op(byte(2 * i)), Coin: coin}, {Outpoint: op(byte(2*i + 1)), Coin: coin}}}
				if i%2 == 1 {
					// Spends the previous block's first coin, which a flush may
					// or may not have written.
					d.Spent = []utxo.Entry{{Outpoint: op(byte(2*i - 2)), Coin: coin}}
				}
				if err := s.Connect(h, d); err != nil {
					t.Fatal(err)
				}
				st.SetTip(uint32(i+1), h)
				check(fmt.Sprintf("block %d", i))
				if s.NeedsFlush() {
					if err := s.Flush(nil, &st); err != nil {
						t.Fatal(err)
					}
					flushes++
					if s.coins.dirtyN != 0 || s.NeedsFlush() {
						t.Fatalf("block %d: %d dirty coins and NeedsFlush %v after a flush", i, s.coins.dirtyN, s.NeedsFlush())
					}
				}
			}
			if flushes < 3 {
				t.Fatalf("%d flushes for 30 blocks, bound %d keys", flushes, bound)
			}
		})
	}
}
