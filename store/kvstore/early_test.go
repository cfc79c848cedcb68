package kvstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"utxod/backends"
	"utxod/store"
	"utxod/utxo"
	"utxod/wire"
)

// failKV fails every Write with a disk-full error while failing is set.
type failKV struct {
	backends.KV
	failing atomic.Bool
}

func (f *failKV) Write(b *backends.Batch, m backends.SyncMode) error {
	if f.failing.Load() {
		return fmt.Errorf("test: %w", backends.ErrDiskFull)
	}
	return f.KV.Write(b, m)
}

// TestKVStoreEarlyWrites: undo records and blocks reach the store before
// any flush, and only a few batches of them are held in memory; while the
// store refuses writes they stay pending, the flush fails and keeps them,
// and once the store accepts writes again a flush writes them: after a
// reopen every block disconnects through its undo record back to the coin
// set a memory replay had at that height.
func TestKVStoreEarlyWrites(t *testing.T) {
	defer func(n int) { earlyBatchBytes = n }(earlyBatchBytes)
	earlyBatchBytes = 8 << 10
	blocks := mainnetBlocks(t)[:1601]
	hashes := make([]wire.Hash, len(blocks))
	for h, raw := range blocks {
		hashes[h] = wire.DoubleSHA256(raw[:wire.HeaderSize])
	}
	mem := newMainnet(t, store.NewMem())
	var at1000 utxo.ChainstateInfo
	var stats1000 store.Stats
	for h, raw := range blocks {
		if _, err := mem.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
		if h == 1000 {
			var err error
			if at1000, err = mem.Info("hash_serialized_3"); err != nil {
				t.Fatal(err)
			}
			stats1000 = mem.Stats()
		}
	}
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			fk := &failKV{KV: openKV(t, name, dir)}
			st := openStore(t, fk, Options{CacheBytes: 1 << 30}) // no flush for the coins' sake
			cs := newMainnet(t, st)
			const bound = 4 * (8<<10 + 4<<10) // filling, one queued, one writing, each overshooting by up to a block's data; one batch of slack
			for h, raw := range blocks[:1201] {
				if _, err := cs.ProcessBlock(raw); err != nil {
					t.Fatalf("height %d: %v", h, err)
				}
				if st.held > bound {
					t.Fatalf("height %d: %d bytes of undo and blocks held, want ≤ %d", h, st.held, bound)
				}
			}
			st.w.drain()
			if _, err := fk.KV.Get(hashKey(prefixUndo, hashes[500])); err != nil {
				t.Fatalf("undo record of block 500 not in the store before any flush: %v", err)
			}
			if _, err := fk.KV.Get(hashKey(prefixBlock, hashes[1100])); err != nil {
				t.Fatalf("block 1100 not in the store before any flush: %v", err)
			}

			fk.failing.Store(true)
			for h, raw := range blocks[1201:1501] {
				if _, err := cs.ProcessBlock(raw); err != nil {
					t.Fatalf("height %d: %v", 1201+h, err)
				}
			}
			if err := cs.Flush(); !errors.Is(err, backends.ErrDiskFull) {
				t.Fatalf("flush on a failing store: %v, want ErrDiskFull", err)
			}
			if st.held <= bound {
				t.Fatalf("%d bytes held after failed writes, want the failed stretch kept (> %d)", st.held, bound)
			}
			// Reads still see the pending data.
			if _, err := st.Undo(hashes[1300]); err != nil {
				t.Fatalf("undo of block 1300 while pending: %v", err)
			}
			fk.failing.Store(false)
			for h, raw := range blocks[1501:] {
				if _, err := cs.ProcessBlock(raw); err != nil {
					t.Fatalf("height %d: %v", 1501+h, err)
				}
			}
			if err := cs.Flush(); err != nil {
				t.Fatal(err)
			}
			if st.held != 0 {
				t.Fatalf("%d bytes held after a successful flush", st.held)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			if err := fk.KV.Close(); err != nil {
				t.Fatal(err)
			}

			kv := openKV(t, name, dir)
			defer kv.Close()
			st = openStore(t, kv, Options{CacheBytes: 1 << 30})
			cs = newMainnet(t, st)
			if got, want := infoJSON(t, cs), infoJSON(t, mem); got != want {
				t.Fatalf("reopened:\n%s\nwant\n%s", got, want)
			}
			if _, err := st.Block(hashes[1400]); err != nil {
				t.Fatalf("block 1400 (written by the recovering flush): %v", err)
			}
			// Disconnect 1600..1001 through the undo records on disk,
			// then compare the coins with the memory replay's at 1000.
			for h := len(blocks) - 1; h > 1000; h-- {
				d, err := st.Undo(hashes[h])
				if err != nil {
					t.Fatalf("undo of block %d: %v", h, err)
				}
				if err := st.Disconnect(hashes[h], hashes[h-1], d); err != nil {
					t.Fatalf("disconnect %d: %v", h, err)
				}
			}
			sc, err := st.Snapshot(nil, &stats1000)
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			var hs utxo.HashSerialized3
			if err := sc.Scan(func(e utxo.Entry) error { return hs.Add(e.Outpoint, e.Coin) }); err != nil {
				t.Fatal(err)
			}
			if got := hs.Sum(); got != *at1000.HashSerialized3 || hs.Count() != at1000.TxOuts {
				t.Fatalf("disconnected to 1000: hash_serialized_3 %s over %d coins, want %s over %d", got, hs.Count(), at1000.HashSerialized3, at1000.TxOuts)
			}
		})
	}
}
