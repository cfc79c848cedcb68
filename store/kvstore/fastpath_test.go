package kvstore

import (
	"bytes"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"utxod/backends"
	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/testkit/chaingen"
	"utxod/testkit/testchain"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// countingKV counts the reads of coin records that reach the store.
type countingKV struct {
	backends.KV
	coinGets atomic.Int64
}

func (c *countingKV) Get(key []byte) ([]byte, error) {
	if len(key) > 0 && key[0] == prefixCoins {
		c.coinGets.Add(1)
	}
	return c.KV.Get(key)
}

// fastStore is a store over kv with the fast path: block files under
// dir/blocks, trusted cache misses and, except on bbolt, unsynced early
// batches.
func fastStore(t *testing.T, name, dir string, kv backends.KV, budget int64) (*Store, bool) {
	t.Helper()
	s := openStore(t, kv, Options{CacheBytes: budget, UnsyncedEarlyWrites: name != "bbolt",
		BlocksDir: filepath.Join(dir, "blocks"), TrustCacheMisses: true})
	return s, s.CacheMissesTrusted()
}

// TestFastPathSameOnEveryStore replays a generated chain with reorgs with
// the fast path on every store, once with a cache that never fills (no coin
// is ever read from the store) and once with one that a flush empties every
// few blocks (misses read the store again from then on), and requires the
// gettxoutsetinfo object of the in-memory replay, also after reopening; a
// reopened store with coins does not trust its misses.
func TestFastPathSameOnEveryStore(t *testing.T) {
	blocks := testchain.Generated(t, chaingen.ProfileModern, 220, 3)
	mem := newChainstate(t, params.RegTest(), store.NewMem())
	for _, raw := range blocks {
		if _, err := mem.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
	}
	want := infoJSON(t, mem)
	byHash := map[wire.Hash][]byte{}
	for _, raw := range blocks {
		byHash[wire.DoubleSHA256(raw[:wire.HeaderSize])] = raw
	}
	defer func(n int64) { blockFileMax = n }(blockFileMax)
	blockFileMax = 64 << 10 // many files, most of them pruned
	for _, name := range storeNames {
		for _, budget := range []int64{64 << 20, 64 << 10} {
			t.Run(name+"/"+map[bool]string{true: "large", false: "small"}[budget > 1<<20], func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), name)
				kv := &countingKV{KV: openKV(t, name, dir)}
				s, on := fastStore(t, name, dir, kv, budget)
				if !on {
					t.Fatal("a new store does not trust its cache misses")
				}
				cs := keepChainstate(t, s)
				for _, raw := range blocks {
					if _, err := cs.ProcessBlock(raw); err != nil {
						t.Fatal(err)
					}
				}
				if got := infoJSON(t, cs); got != want {
					t.Fatalf("%s:\n%s\nmemory:\n%s", name, got, want)
				}
				reads := kv.coinGets.Load()
				if budget > 1<<20 && reads != 0 {
					t.Fatalf("%d coin reads reached the store while the cache held every coin", reads)
				}
				if budget < 1<<20 && reads == 0 {
					t.Fatal("no coin read reached the store after the cache was emptied")
				}
				if err := cs.Flush(); err != nil {
					t.Fatal(err)
				}
				checkPruned(t, dir, s, byHash)
				kv.Close()
				kv2 := openKV(t, name, dir)
				defer kv2.Close()
				s2, on := fastStore(t, name, dir, kv2, budget)
				if on {
					t.Fatal("a store with coins trusts its cache misses")
				}
				cs = keepChainstate(t, s2)
				if got := infoJSON(t, cs); got != want {
					t.Fatalf("%s after reopen:\n%s\nmemory:\n%s", name, got, want)
				}
				checkBlocks(t, cs, s2, byHash)
				checkPruned(t, dir, s2, byHash)
			})
		}
	}
}

const kept = 20

// keepChainstate is newChainstate keeping the data of only kept blocks.
func keepChainstate(t *testing.T, st store.Store) *chainstate.Chainstate {
	t.Helper()
	p := params.RegTest()
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: st, KeepBlocks: kept})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// checkBlocks requires every block of the active chain the chainstate keeps
// to read back as its bytes, and blocks below that window to be gone.
func checkBlocks(t *testing.T, cs *chainstate.Chainstate, s *Store, byHash map[wire.Hash][]byte) {
	t.Helper()
	tip := cs.Tip()
	read, gone := 0, 0
	for h := int32(1); h <= tip.Height; h++ {
		info, ok := cs.AtHeight(h)
		if !ok {
			t.Fatalf("no block at %d", h)
		}
		raw, err := s.Block(info.Hash)
		switch {
		case err == nil:
			if !bytes.Equal(raw, byHash[info.Hash]) {
				t.Fatalf("block %d reads back as %d other bytes", h, len(raw))
			}
			read++
		case errors.Is(err, store.ErrNoBlock):
			gone++
		default:
			t.Fatalf("block %d: %v", h, err)
		}
	}
	if read < kept || gone == 0 {
		t.Fatalf("%d blocks read back, %d deleted: want the last %d kept and the rest gone", read, gone, kept)
	}
	t.Logf("%d blocks read back, %d deleted", read, gone)
}

// checkPruned requires every block file but the current one to hold a
// block s can read.
func checkPruned(t *testing.T, dir string, s *Store, byHash map[wire.Hash][]byte) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "blocks", "blk*.dat"))
	readable := 0 // the kept blocks and the side branches'
	for h := range byHash {
		if _, err := s.Block(h); err == nil {
			readable++
		}
	}
	if len(files) > readable+1 {
		t.Fatalf("%d block files for %d readable blocks: deleted blocks' files were not pruned", len(files), readable)
	}
}

// TestEarlySyncModes checks which writes an early writer syncs: Sync
// batches by default; with NoSync, batches unsynced and the flush's synced
// batch (or, when the flush has nothing else to write, a KV.Sync) after
// them.
func TestEarlySyncModes(t *testing.T) {
	for _, mode := range []backends.SyncMode{backends.Sync, backends.NoSync} {
		t.Run(mode.String(), func(t *testing.T) {
			kv := &modeKV{KV: openKV(t, "pebble", filepath.Join(t.TempDir(), "pebble"))}
			defer kv.Close()
			s := openStore(t, kv, Options{CacheBytes: 64 << 20, UnsyncedEarlyWrites: mode == backends.NoSync})
			raw := bytes.Repeat([]byte{1}, earlyBatchBytes+1)
			var h [32]byte
			h[0] = 1
			if err := s.PutBlock(h, raw); err != nil { // a full batch: handed off
				t.Fatal(err)
			}
			s.w.drain()
			s.forgetWritten()
			if got := kv.log.String(); got != mode.String()+" " {
				t.Fatalf("early batch written %q, want %q", got, mode.String()+" ")
			}
			kv.log.Reset()
			if err := s.Flush(nil, nil); err != nil {
				t.Fatal(err)
			}
			want := ""
			if mode == backends.NoSync {
				want = "Sync() "
			}
			if got := kv.log.String(); got != want {
				t.Fatalf("flush with nothing else to write: %q, want %q", got, want)
			}
			if got, err := s.Block(h); err != nil || !bytes.Equal(got, raw) {
				t.Fatalf("block after flush: %d bytes, %v", len(got), err)
			}
		})
	}
}

// modeKV logs the durability of every write and sync.
type modeKV struct {
	backends.KV
	log bytes.Buffer
}

func (m *modeKV) Write(b *backends.Batch, mode backends.SyncMode) error {
	m.log.WriteString(mode.String() + " ")
	return m.KV.Write(b, mode)
}

func (m *modeKV) Sync() error {
	m.log.WriteString("Sync() ")
	return m.KV.Sync()
}

// TestConnectCounting checks the transaction count ConnectCounting returns
// against the definition (txids with an unspent output after the block
// minus before), including a BIP30-exception overwrite.
func TestConnectCounting(t *testing.T) {
	kv := openKV(t, "pebble", filepath.Join(t.TempDir(), "pebble"))
	defer kv.Close()
	s := openStore(t, kv, Options{CacheBytes: 64 << 20})
	coin := func(tx byte, vout uint32) utxo.Entry {
		return utxo.Entry{Outpoint: utxo.Outpoint{Hash: wire.Hash{tx}, Index: vout}, Coin: utxo.Coin{Value: 1, Height: 1, Script: []byte{0x51}}}
	}
	steps := []struct {
		name string
		d    utxo.Delta
		want int64
	}{
		{"two new txids", utxo.Delta{Created: []utxo.Entry{coin(1, 0), coin(1, 1), coin(2, 0)}}, 2},
		{"one of two outputs spent", utxo.Delta{Spent: []utxo.Entry{coin(1, 0)}}, 0},
		{"last outputs spent, one new txid", utxo.Delta{Spent: []utxo.Entry{coin(1, 1), coin(2, 0)}, Created: []utxo.Entry{coin(3, 0)}}, -1},
		{"overwrite of an unspent txid", utxo.Delta{Overwritten: []utxo.Entry{coin(3, 0)}, Created: []utxo.Entry{coin(3, 0), coin(3, 1)}}, 0},
		{"overwritten and spent", utxo.Delta{Spent: []utxo.Entry{coin(3, 0), coin(3, 1)}}, -1},
	}
	for i, st := range steps {
		got, err := s.ConnectCounting(wire.Hash{0xb0, byte(i)}, &st.d)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got != st.want {
			t.Fatalf("%s: %d, want %d", st.name, got, st.want)
		}
	}
}

// TestBIP30ImpliedSameState replays a generated chain with reorgs on every
// store with a cache a flush empties every few blocks, on regtest (Core's
// BIP30 check reads each block's own txids) and on regtest with BIP34's
// block hash set, where, as on mainnet after BIP34, the check is implied
// and neither it nor the insert of the outputs reads them: the same
// gettxoutsetinfo as the in-memory replay, with fewer coin reads.
func TestBIP30ImpliedSameState(t *testing.T) {
	blocks := testchain.Generated(t, chaingen.ProfileModern, 220, 3)
	implied := params.RegTest()
	implied.BIP34Hash = wire.DoubleSHA256(blocks[0][:wire.HeaderSize]) // height 1
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			reads := map[bool]int64{}
			for _, bip30 := range []bool{true, false} {
				p := params.RegTest()
				if !bip30 {
					p = implied
				}
				mem := newChainstate(t, p, store.NewMem())
				dir := filepath.Join(t.TempDir(), name)
				kv := &countingKV{KV: openKV(t, name, dir)}
				cs := newChainstate(t, p, openStore(t, kv, Options{CacheBytes: 64 << 10}))
				for _, raw := range blocks {
					_, errMem := mem.ProcessBlock(raw)
					if _, err := cs.ProcessBlock(raw); (err == nil) != (errMem == nil) {
						t.Fatalf("BIP30 checked %v: %v, in memory %v", bip30, err, errMem)
					}
				}
				if got, want := infoJSON(t, cs), infoJSON(t, mem); got != want {
					t.Fatalf("BIP30 checked %v:\n%s\nmemory:\n%s", bip30, got, want)
				}
				reads[bip30] = kv.coinGets.Load()
				if err := cs.Flush(); err != nil {
					t.Fatal(err)
				}
				kv.Close()
			}
			if reads[false] >= reads[true] {
				t.Fatalf("%d coin reads with BIP30 implied, %d with it checked", reads[false], reads[true])
			}
			t.Logf("coin reads: %d with BIP30 checked, %d implied", reads[true], reads[false])
		})
	}
}
