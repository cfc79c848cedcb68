package chainstate

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"utxod/backends"
	_ "utxod/backends/all"
	"utxod/params"
	"utxod/script"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// openKV opens store name in dir, skipping the test when the store is not
// part of this build.
func openKV(t testing.TB, name, dir string) backends.KV {
	t.Helper()
	kv, err := backends.Open(name, dir, backends.Options{})
	if errors.Is(err, backends.ErrUnavailable) || errors.Is(err, backends.ErrUnknownBackend) {
		t.Skipf("store %s not in this build: %v", name, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func newMainnetKV(t testing.TB, kv backends.KV, budget int64) *Chainstate {
	p := params.MainNet()
	cs, err := New(Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: NewKVStore(kv, budget)})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func infoJSON(t testing.TB, cs *Chainstate) string {
	t.Helper()
	info, err := cs.Info(HashTypeHashSerialized3)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(info)
	return string(b)
}

var storeNames = []string{"pebble", "rocksdb", "bbolt"}

// TestKVStoreMainnet connects mainnet 0–14131 on every store with a small
// cache (many flushes), compares the reference digests at every reference
// height, then reopens the datadir and gets the same answer.
func TestKVStoreMainnet(t *testing.T) {
	refs := loadReferences(t)
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
					checkReference(t, cs, ref)
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
			spent := utxo.Outpoint{Hash: mustTxid(t, "0437cd7f8525ceed2324359c2d0ba26006d92d856a9c20fa0241106ee5a597c9"), Index: 0}
			if _, found, err := cs.Coin(spent); err != nil || found {
				t.Fatalf("spent coin found=%v err=%v", found, err)
			}
		})
	}
}

// TestKVStoreUnflushedLost: changes after the last flush are not on disk
// after a close without flush; the store reopens at the flushed tip and
// continuing reaches the same final state.
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
	mem := newMainnet(t, NewMemStore())
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
	_, err := New(Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: NewKVStore(kv, 1<<20)})
	if !errors.Is(err, ErrWrongNetwork) {
		t.Fatalf("got %v", err)
	}
	kv.Close()
}
