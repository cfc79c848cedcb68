package kvstore

import (
	"path/filepath"
	"testing"

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
