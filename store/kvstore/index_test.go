package kvstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"

	"utxod/backends"
	"utxod/params"
	"utxod/store"
	"utxod/testkit/chaingen"
	"utxod/testkit/testchain"
	"utxod/utxo"
	"utxod/wire"
)

// outpointIndex is a minimal Index with the shape of a scripthash index:
// one key per unspent outpoint ('x' ‖ txid ‖ vout BE) holding the SHA-256
// of its script.
type outpointIndex struct {
	pending map[utxo.Outpoint][]byte // nil: delete
	flushes int
}

func newOutpointIndex() *outpointIndex {
	return &outpointIndex{pending: make(map[utxo.Outpoint][]byte)}
}

func (x *outpointIndex) Prefix() byte { return 'x' }

func (x *outpointIndex) Apply(_ wire.Hash, d *utxo.Delta, connect bool) error {
	del := func(list []utxo.Entry) {
		for _, e := range list {
			x.pending[e.Outpoint] = nil
		}
	}
	put := func(list []utxo.Entry) {
		for _, e := range list {
			h := sha256.Sum256(e.Script)
			x.pending[e.Outpoint] = h[:]
		}
	}
	if connect {
		del(d.Spent)
		del(d.Overwritten)
		put(d.Created)
	} else {
		del(d.Created)
		put(d.Spent)
	}
	return nil
}

func outpointKey(op utxo.Outpoint) []byte {
	return binary.BigEndian.AppendUint32(append([]byte{'x'}, op.Hash[:]...), op.Index)
}

func (x *outpointIndex) AppendBatch(b *backends.Batch) error {
	for op, v := range x.pending {
		if v == nil {
			b.Delete(outpointKey(op))
		} else {
			b.Put(outpointKey(op), v)
		}
	}
	return nil
}

func (x *outpointIndex) Flushed() {
	clear(x.pending)
	x.flushes++
}

// checkIndexMatchesCoins requires the 'x' keys on disk to be exactly the
// store's flushed coin set, each with its script's hash.
func checkIndexMatchesCoins(t *testing.T, kv backends.KV, st *Store, stats *store.Stats) {
	t.Helper()
	sc, err := st.Snapshot(nil, stats)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	want := map[string][]byte{}
	if err := sc.Scan(func(e utxo.Entry) error {
		h := sha256.Sum256(e.Script)
		want[string(outpointKey(e.Outpoint))] = h[:]
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	it, err := kv.NewIterator(backends.PrefixRange([]byte{'x'}))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for it.Next() {
		n++
		if v, ok := want[string(it.Key())]; !ok || !bytes.Equal(v, it.Value()) {
			t.Fatalf("index key %x: %x, coins say %x (present %v)", it.Key(), it.Value(), v, ok)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Fatalf("index has %d keys, the coin set %d coins", n, len(want))
	}
}

// TestIndexInFlushBatch: an Index sees every coin a connect or a reorg's
// disconnect changes and its keys reach disk in the coins' batch. A chain
// with reorgs is connected with a tiny cache (flushes between and inside
// reorgs) while a stretch of flushes fails; after the failures, after the
// last flush and after a reopen the index on disk equals the coin set.
func TestIndexInFlushBatch(t *testing.T) {
	blocks := testchain.Generated(t, chaingen.ProfileModern, 160, 3)
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			fk := &failKV{KV: openKV(t, name, dir)}
			ix := newOutpointIndex()
			if _, err := Open(fk, Options{Indexes: []Index{ix, newOutpointIndex()}}); err == nil {
				t.Fatal("a second index with prefix 'x' was accepted")
			}
			st := openStore(t, fk, Options{CacheBytes: 64 << 10, Indexes: []Index{ix}})
			cs := newChainstate(t, params.RegTest(), st)
			third := len(blocks) / 3
			for i, raw := range blocks {
				fk.failing.Store(i >= third && i < 2*third)
				_, err := cs.ProcessBlock(raw)
				if err != nil && !(fk.failing.Load() && errors.Is(err, backends.ErrDiskFull)) {
					t.Fatalf("block %d: %v", i, err)
				}
			}
			if err := cs.Flush(); err != nil {
				t.Fatal(err)
			}
			if ix.flushes < 3 {
				t.Fatalf("only %d flushes: the test wants many", ix.flushes)
			}
			stats := cs.Stats()
			checkIndexMatchesCoins(t, fk.KV, st, &stats)
			want := infoJSON(t, cs)
			st.Close()
			fk.KV.Close()

			kv := openKV(t, name, dir)
			defer kv.Close()
			st = openStore(t, kv, Options{CacheBytes: 64 << 10, Indexes: []Index{newOutpointIndex()}})
			cs = newChainstate(t, params.RegTest(), st)
			if got := infoJSON(t, cs); got != want {
				t.Fatalf("reopened:\n%s\nwant\n%s", got, want)
			}
			stats = cs.Stats()
			checkIndexMatchesCoins(t, kv, st, &stats)
		})
	}
}

// TestOpenRefusesIndexOwnPrefixes: an index cannot write into the schema's
// key ranges.
func TestOpenRefusesIndexOwnPrefixes(t *testing.T) {
	for _, p := range ownPrefixes {
		if _, err := Open(nullKV{}, Options{Indexes: []Index{nopIndex(p)}}); err == nil {
			t.Fatalf("prefix %q accepted", p)
		}
	}
}

type nopIndex byte

func (p nopIndex) Prefix() byte                           { return byte(p) }
func (nopIndex) Apply(wire.Hash, *utxo.Delta, bool) error { return nil }
func (nopIndex) AppendBatch(*backends.Batch) error        { return nil }
func (nopIndex) Flushed()                                 {}
