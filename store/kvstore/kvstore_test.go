package kvstore

import (
	"errors"
	"path/filepath"
	"testing"

	"utxod/backends"
	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/testkit/testchain"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

var (
	mainnetBlocks = testchain.MainnetBlocks
	storeNames    = testchain.StoreNames
	openKV        = testchain.OpenKV
)

func infoJSON(t testing.TB, cs *chainstate.Chainstate) string { return testchain.InfoJSON(t, cs) }

// newChainstate builds a chainstate for p over st with the shipped script
// engine.
func newChainstate(t testing.TB, p *params.Params, st store.Store) *chainstate.Chainstate {
	t.Helper()
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// openStore is Open(kv, opts), failing t on an error.
func openStore(t testing.TB, kv backends.KV, opts Options) *Store {
	t.Helper()
	s, err := Open(kv, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newMainnet(t testing.TB, st store.Store) *chainstate.Chainstate {
	return newChainstate(t, params.MainNet(), st)
}

func newMainnetKV(t testing.TB, kv backends.KV, budget int64) *chainstate.Chainstate {
	return newMainnet(t, openStore(t, kv, Options{CacheBytes: budget}))
}

// TestKVStoreMainnet connects mainnet 0–14131 on every store with a small
// cache (many flushes), compares the reference digests at every reference
// height, then reopens the datadir and gets the same answer.
func TestKVStoreMainnet(t *testing.T) {
	refs := testchain.References(t)
	blocks := mainnetBlocks(t)
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			kv := openKV(t, name, dir)
			cs := newMainnetKV(t, kv, 256<<10)
			for h, raw := range blocks {
				if _, err := cs.ProcessBlock(raw); err != nil {
					t.Fatalf("height %d: %v", h, err)
				}
				if ref, ok := refs[int32(h)]; ok {
					testchain.CheckReference(t, cs, ref)
				}
			}
			want := infoJSON(t, cs)
			if err := cs.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := kv.Close(); err != nil {
				t.Fatal(err)
			}
			kv = openKV(t, name, dir)
			defer kv.Close()
			cs = newMainnetKV(t, kv, 256<<10)
			if got := infoJSON(t, cs); got != want {
				t.Fatalf("after reopen:\n%s\nwant\n%s", got, want)
			}
			// The last coinbase is there with its creation facts; the
			// coin block 170 spent (block 9's coinbase) is not.
			last, err := wire.ParseBlock(blocks[14131])
			if err != nil {
				t.Fatal(err)
			}
			c, found, err := cs.Coin(utxo.Outpoint{Hash: last.Txs[0].TxID, Index: 0})
			if err != nil || !found || c.Value != 50*100_000_000 || c.Height != 14131 || !c.Coinbase {
				t.Fatalf("coin: %+v %v %v", c, found, err)
			}
			spent := utxo.Outpoint{Hash: testchain.MustHash(t, "0437cd7f8525ceed2324359c2d0ba26006d92d856a9c20fa0241106ee5a597c9"), Index: 0}
			if _, found, err := cs.Coin(spent); err != nil || found {
				t.Fatalf("spent coin found=%v err=%v", found, err)
			}
		})
	}
}

// TestKVStoreReopenAtFlushedTip: changes after the last flush are not on
// disk after a close without flush; the store reopens at the flushed tip
// and continuing reaches the same final state.
func TestKVStoreReopenAtFlushedTip(t *testing.T) {
	blocks := mainnetBlocks(t)[:3001]
	dir := t.TempDir()
	kv := openKV(t, "pebble", dir)
	cs := newMainnetKV(t, kv, 1<<30)
	for _, raw := range blocks[:2001] {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
	}
	if err := cs.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, raw := range blocks[2001:2500] {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
	}
	kv.Close() // no flush: blocks 2001–2499 are lost
	kv = openKV(t, "pebble", dir)
	defer kv.Close()
	cs = newMainnetKV(t, kv, 1<<30)
	if h := cs.Tip().Height; h != 2000 {
		t.Fatalf("reopened at %d, want 2000", h)
	}
	for _, raw := range blocks[1:] {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
	}
	mem := newMainnet(t, store.NewMem())
	for _, raw := range blocks {
		if _, err := mem.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := infoJSON(t, cs), infoJSON(t, mem); a != b {
		t.Fatalf("kv %s\nmem %s", a, b)
	}
}

func TestKVStoreWrongNetwork(t *testing.T) {
	dir := t.TempDir()
	kv := openKV(t, "pebble", dir)
	cs := newMainnetKV(t, kv, 1<<20)
	if err := cs.Flush(); err != nil {
		t.Fatal(err)
	}
	p := params.RegTest()
	_, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: openStore(t, kv, Options{CacheBytes: 1 << 20})})
	if !errors.Is(err, chainstate.ErrWrongNetwork) {
		t.Fatalf("got %v", err)
	}
	kv.Close()
}

// checkScratchMuHash recomputes the MuHash3072 of the coin set from
// scratch (one insert per coin of a snapshot scan) and compares it with the
// incrementally maintained value of the same snapshot.
func checkScratchMuHash(t *testing.T, cs *chainstate.Chainstate) {
	t.Helper()
	snap, err := cs.SnapshotCoins()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	got, n := testchain.ScratchMuHash(t, snap.Scan)
	info := snap.Stats.Info()
	if got != *info.MuHash || n != info.TxOuts {
		t.Fatalf("from scratch: muhash %s over %d coins; incremental %s over %d", got, n, info.MuHash, info.TxOuts)
	}
}
