package kvstore

import (
	"bytes"
	"path/filepath"
	"sync/atomic"
	"testing"

	"utxod/backends"
	"utxod/internal/chaingen"
	"utxod/internal/testchain"
	"utxod/params"
	"utxod/store"
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

// fastStore is New(kv, budget) with the fast path: trusted cache misses
// and, except on bbolt, unsynced early batches.
func fastStore(t *testing.T, name string, kv backends.KV, budget int64) (*Store, bool) {
	t.Helper()
	s := New(kv, budget)
	if name != "bbolt" {
		s.SetEarlySync(backends.NoSync)
	}
	on, err := s.TrustCacheMisses()
	if err != nil {
		t.Fatal(err)
	}
	return s, on
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
	for _, name := range storeNames {
		for _, budget := range []int64{64 << 20, 64 << 10} {
			t.Run(name+"/"+map[bool]string{true: "large", false: "small"}[budget > 1<<20], func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), name)
				kv := &countingKV{KV: openKV(t, name, dir)}
				s, on := fastStore(t, name, kv, budget)
				if !on {
					t.Fatal("a new store does not trust its cache misses")
				}
				cs := newChainstate(t, params.RegTest(), s)
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
				kv.Close()
				kv2 := openKV(t, name, dir)
				defer kv2.Close()
				s2, on := fastStore(t, name, kv2, budget)
				if on {
					t.Fatal("a store with coins trusts its cache misses")
				}
				cs = newChainstate(t, params.RegTest(), s2)
				if got := infoJSON(t, cs); got != want {
					t.Fatalf("%s after reopen:\n%s\nmemory:\n%s", name, got, want)
				}
			})
		}
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
			s := New(kv, 64<<20)
			if mode == backends.NoSync {
				s.SetEarlySync(backends.NoSync)
			}
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
