package shindex

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/dchest/siphash"

	"utxod/backends"
	_ "utxod/backends/all"
	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/scripthash"
	"utxod/scripthash/indextest"
	"utxod/store"
	"utxod/store/kvstore"
	"utxod/testkit/chaingen"
	"utxod/testkit/testchain"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// failKV fails every Write with a disk-full error while failing is set, or
// once failAfter more writes have succeeded (when it is positive).
type failKV struct {
	backends.KV
	failing   atomic.Bool
	failAfter atomic.Int32
}

func (f *failKV) Write(b *backends.Batch, m backends.SyncMode) error {
	if f.failing.Load() {
		return fmt.Errorf("test: %w", backends.ErrDiskFull)
	}
	if n := f.failAfter.Load(); n > 0 {
		if f.failAfter.Add(-1) == 0 {
			f.failing.Store(true)
		}
	}
	return f.KV.Write(b, m)
}

func newChainstate(t testing.TB, st store.Store) *chainstate.Chainstate {
	t.Helper()
	p := params.RegTest()
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// openStore opens a store over kv with a coins cache of budget bytes and
// the indexes ixs.
func openStore(t testing.TB, kv backends.KV, budget int64, ixs ...kvstore.Index) *kvstore.Store {
	t.Helper()
	st, err := kvstore.Open(kv, kvstore.Options{CacheBytes: budget, Indexes: ixs})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// wantRows collects the coins of scan, whose index checkRowsMatch builds.
func wantRows(t *testing.T, scan func(func(utxo.Entry) error) error) []utxo.Entry {
	t.Helper()
	var want []utxo.Entry
	if err := scan(func(e utxo.Entry) error {
		e.Script = bytes.Clone(e.Script)
		want = append(want, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return want
}

// rowsOf is the index the coins call for under the id key k, built
// independently of the index's code paths: full key → value.
func rowsOf(coins []utxo.Entry, k IDKey) map[string][]byte {
	rows := map[string][]byte{}
	for _, e := range coins {
		h := sha256.Sum256(e.Script)
		id := siphash.Hash(binary.LittleEndian.Uint64(k[:8]), binary.LittleEndian.Uint64(k[8:]), h[:])
		key := []byte{'S'}
		key = binary.BigEndian.AppendUint64(key, id)
		key = append(key, byte(e.Height>>16), byte(e.Height>>8), byte(e.Height))
		key = append(key, e.Hash[:]...)
		switch v := e.Index; {
		case v < 128:
			key = append(key, byte(v))
		case v < 1<<14:
			key = append(key, byte(0x80+v/256), byte(v%256))
		case v < 1<<21:
			key = append(key, byte(0xc0+v/65536), byte(v/256%256), byte(v%256))
		default:
			key = append(key, 0xe0, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
		}
		v := uint64(e.Value) * 2
		if e.Coinbase {
			v++
		}
		var vb []byte
		for v >= 0x80 {
			vb = append(vb, byte(v)|0x80)
			v >>= 7
		}
		rows[string(key)] = append(vb, byte(v))
	}
	return rows
}

// checkRowsMatch requires the rows on disk to be exactly the index of the
// coins want and the meta key to be Complete at tip.
func checkRowsMatch(t *testing.T, kv backends.Reader, coins []utxo.Entry, tip scripthash.Tip) {
	t.Helper()
	m, ok, err := ReadMeta(kv)
	if err != nil || !ok || m.State != Complete || m.Tip != tip {
		t.Fatalf("meta %+v ok=%v err=%v; want complete at %+v", m, ok, err, tip)
	}
	want := rowsOf(coins, m.Key)
	it, err := kv.NewIterator(backends.PrefixRange([]byte{'S'}))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for it.Next() {
		if len(it.Key()) == 1 {
			continue // meta
		}
		n++
		if v, ok := want[string(it.Key())]; !ok || !bytes.Equal(v, it.Value()) {
			t.Fatalf("row %x = %x; the coins say %x (present %v)", it.Key(), it.Value(), v, ok)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Fatalf("index has %d rows, the coin set %d coins", n, len(want))
	}
}

func csTip(cs *chainstate.Chainstate) scripthash.Tip {
	st := cs.Stats()
	return scripthash.Tip{Height: st.Height, Hash: st.BestBlock, TxOuts: st.TxOuts}
}

// checkLookups asks the index for every scripthash of the coin set (all
// rows, summaries, and a page of two after the first row) and compares
// with a brute-force answer from a scan of the chainstate at the same tip.
// The lookup runs first: the scan flushes, so the lookup sees pending rows.
func checkLookups(t *testing.T, ix *Index, cs *chainstate.Chainstate) {
	t.Helper()
	var hashes []scripthash.Hash
	seen := map[scripthash.Hash]bool{{0x42}: true}
	hashes = append(hashes, scripthash.Hash{0x42}) // absent
	var coins []utxo.Entry
	// The set of scripthashes comes from a scan before and the answer check
	// from a scan after the lookup; no block connects in between.
	if _, err := cs.ScanCoins(func(e utxo.Entry) error {
		if h := scripthash.Of(e.Script); !seen[h] {
			seen[h] = true
			hashes = append(hashes, h)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var qs []scripthash.Query
	for _, h := range hashes {
		qs = append(qs, scripthash.Query{Hash: h, Limit: scripthash.NoLimit, Summary: true})
	}
	res, err := ix.Lookup(context.Background(), qs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ScanCoins(func(e utxo.Entry) error {
		e.Script = bytes.Clone(e.Script)
		coins = append(coins, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if res.Tip != csTip(cs) {
		t.Fatalf("lookup at %+v, chainstate at %+v", res.Tip, csTip(cs))
	}
	by := map[scripthash.Hash][]scripthash.UTXO{}
	for _, e := range coins {
		h := scripthash.Of(e.Script)
		by[h] = append(by[h], scripthash.UTXO{Outpoint: e.Outpoint, Value: e.Value, Height: e.Height, Coinbase: e.Coinbase})
	}
	for i, h := range hashes {
		want := by[h]
		sort.Slice(want, func(a, b int) bool { return want[a].Position().Less(want[b].Position()) })
		a := res.Answers[i]
		var sum int64
		for _, u := range want {
			sum += u.Value
		}
		if a.Count != uint64(len(want)) || a.Sum != sum || a.More || len(a.UTXOs) != len(want) {
			t.Fatalf("%s: %d rows count %d sum %d more %v; want %d rows sum %d", h, len(a.UTXOs), a.Count, a.Sum, a.More, len(want), sum)
		}
		for j := range want {
			if a.UTXOs[j] != want[j] {
				t.Fatalf("%s row %d: %+v, want %+v", h, j, a.UTXOs[j], want[j])
			}
		}
	}
}

// TestIndexFollowsCoins: the index sees every coin a connect or a reorg's
// disconnect changes and reaches disk in the coins' batch. A chain with
// reorgs connects with a tiny cache (flushes between and inside reorgs)
// while a stretch of flushes fails; lookups with pending rows equal a scan
// of the coins at the same tip; after the failures, after the last flush
// and after a reopen the rows on disk equal those the coin set calls for.
func TestIndexFollowsCoins(t *testing.T) {
	blocks := testchain.Generated(t, chaingen.ProfileModern, 160, 3)
	for _, name := range testchain.StoreNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			fk := &failKV{KV: testchain.OpenKV(t, name, dir)}
			ix, err := Create(fk, params.RegTest().GenesisHash)
			if err != nil {
				t.Fatal(err)
			}
			st := openStore(t, fk, 64<<10, ix)
			cs := newChainstate(t, st)
			third := len(blocks) / 3
			for i, raw := range blocks {
				fk.failing.Store(i >= third && i < 2*third)
				_, err := cs.ProcessBlock(raw)
				if err != nil && !(fk.failing.Load() && errors.Is(err, backends.ErrDiskFull)) {
					t.Fatalf("block %d: %v", i, err)
				}
				if i == third-1 || i == 2*third+5 || i == len(blocks)-3 {
					fk.failing.Store(false)
					checkLookups(t, ix, cs)
				}
			}
			fk.failing.Store(false)
			if err := cs.Flush(); err != nil {
				t.Fatal(err)
			}
			checkRowsMatch(t, fk.KV, wantRows(t, func(fn func(utxo.Entry) error) error { _, err := cs.ScanCoins(fn); return err }), csTip(cs))
			tip := csTip(cs)
			ix.Close()
			if _, err := ix.Lookup(context.Background(), []scripthash.Query{{Limit: 1}}); !errors.Is(err, backends.ErrClosed) {
				t.Errorf("lookup after Close: %v", err)
			}
			st.Close()
			fk.KV.Close()

			kv := testchain.OpenKV(t, name, dir)
			defer kv.Close()
			if _, err := Create(kv, params.RegTest().GenesisHash); !errors.Is(err, ErrNotNew) {
				t.Fatalf("Create on a datadir with a chainstate: %v", err)
			}
			ix, err = Open(kv)
			if err != nil {
				t.Fatal(err)
			}
			if ix.Tip() != tip {
				t.Fatalf("reopened at %+v, want %+v", ix.Tip(), tip)
			}
			st = openStore(t, kv, 64<<10, ix)
			cs = newChainstate(t, st)
			checkLookups(t, ix, cs)
			if _, err := Verify(context.Background(), kv, nil); err != nil {
				t.Fatal(err)
			}
			checkVerifyCatches(t, kv)
		})
	}
}

// checkVerifyCatches: Verify fails on a changed value, a missing row and
// an extra row (each undone before the next).
func checkVerifyCatches(t *testing.T, kv backends.KV) {
	t.Helper()
	it, err := kv.NewIterator(backends.Range{Prefix: []byte{'S'}, Start: []byte{'S', 0}})
	if err != nil {
		t.Fatal(err)
	}
	if !it.Next() {
		t.Fatal("no row")
	}
	k, v := bytes.Clone(it.Key()), bytes.Clone(it.Value())
	it.Close()
	write := func(f func(b *backends.Batch)) {
		b := backends.NewBatch()
		f(b)
		if err := kv.Write(b, backends.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	extra := bytes.Clone(k)
	extra[len(extra)-1] ^= 0x80 // not a key
	rk, err := parseDiskKey(k)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(rk[kVout:], 1<<20) // a key, of no coin
	other := appendDiskKey(nil, &rk)
	lk := makeRowKeyID(^uint64(0), 1, utxo.Outpoint{})
	last := appendDiskKey(nil, &lk)
	for _, c := range []struct {
		name         string
		break_, undo func(b *backends.Batch)
	}{
		{"value", func(b *backends.Batch) { b.Put(k, append(bytes.Clone(v), 0)) }, func(b *backends.Batch) { b.Put(k, v) }},
		{"missing", func(b *backends.Batch) { b.Delete(k) }, func(b *backends.Batch) { b.Put(k, v) }},
		{"extra", func(b *backends.Batch) { b.Put(extra, v) }, func(b *backends.Batch) { b.Delete(extra) }},
		{"no coin's", func(b *backends.Batch) { b.Put(other, v) }, func(b *backends.Batch) { b.Delete(other) }},
		{"last", func(b *backends.Batch) { b.Put(last, v) }, func(b *backends.Batch) { b.Delete(last) }},
	} {
		write(c.break_)
		if _, err := Verify(context.Background(), kv, nil); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: Verify = %v, want ErrMismatch", c.name, err)
		}
		write(c.undo)
	}
	if _, err := Verify(context.Background(), kv, nil); err != nil {
		t.Fatal(err)
	}
}

// TestBuildDrop: a datadir imported without the index builds it (through
// failed batches: the half-built index is not taken as complete, and the
// next build starts over), follows new blocks with it, refuses a second build,
// and drops it; a datadir whose coins moved on without the index refuses
// to open it.
func TestBuildDrop(t *testing.T) {
	defer func(n, b, r int) { buildBatchRows, appendBatchBytes, minRunRows = n, b, r }(buildBatchRows, appendBatchBytes, minRunRows)
	// Several runs to merge, several append batches.
	buildBatchRows, appendBatchBytes, minRunRows = 10, 10*maxDiskKey, 7
	blocks := testchain.Generated(t, chaingen.ProfileModern, 120, 2)
	half := len(blocks) / 2
	for _, name := range testchain.StoreNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			fk := &failKV{KV: testchain.OpenKV(t, name, dir)}
			defer fk.KV.Close()
			st := openStore(t, fk, 1<<20)
			cs := newChainstate(t, st)
			for i, raw := range blocks[:half] {
				if _, err := cs.ProcessBlock(raw); err != nil {
					t.Fatalf("block %d: %v", i, err)
				}
			}
			if err := cs.Flush(); err != nil {
				t.Fatal(err)
			}
			tip := csTip(cs)
			if tip.TxOuts < 3*uint64(buildBatchRows) {
				t.Fatalf("only %d coins: the test wants several batches", tip.TxOuts)
			}
			want := wantRows(t, func(fn func(utxo.Entry) error) error { _, err := cs.ScanCoins(fn); return err })
			st.Close()

			if _, err := Open(fk); !errors.Is(err, ErrNone) {
				t.Fatalf("Open without an index: %v", err)
			}
			// The fourth write fails (the first clears old rows, the
			// second marks the index Building, the third writes rows).
			fk.failAfter.Store(3)
			if _, err := BuildWith(context.Background(), fk, BuildOptions{Memory: 1, TmpDir: t.TempDir()}, nil); !errors.Is(err, backends.ErrDiskFull) {
				t.Fatalf("build over a failing store: %v", err)
			}
			fk.failing.Store(false)
			if m, ok, err := ReadMeta(fk); err != nil || !ok || m.State != Building {
				t.Fatalf("after a failed build: meta %+v %v %v", m, ok, err)
			}
			if _, err := Open(fk); !errors.Is(err, ErrNone) {
				t.Fatalf("Open of a half-built index: %v", err)
			}
			var last uint64
			sortDir := t.TempDir()
			if _, err := BuildWith(context.Background(), fk, BuildOptions{Memory: 1, TmpDir: sortDir}, func(done, total uint64) {
				if done < last {
					t.Errorf("progress went back from %d to %d", last, done)
				}
				last = done
				if total != tip.TxOuts {
					t.Errorf("progress total %d, want %d", total, tip.TxOuts)
				}
			}); err != nil {
				t.Fatal(err)
			}
			if last != tip.TxOuts {
				t.Errorf("progress ended at %d of %d", last, tip.TxOuts)
			}
			if left, _ := os.ReadDir(sortDir); len(left) != 0 {
				t.Errorf("the build left %d run directories", len(left))
			}
			checkRowsMatch(t, fk, want, tip)
			if _, err := Verify(context.Background(), fk, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := Build(context.Background(), fk, nil); !errors.Is(err, ErrExists) {
				t.Fatalf("second build: %v", err)
			}

			// The built index follows the rest of the chain.
			ix, err := Open(fk)
			if err != nil {
				t.Fatal(err)
			}
			st = openStore(t, fk, 1<<20, ix)
			cs = newChainstate(t, st)
			for i, raw := range blocks[half : len(blocks)-10] {
				if _, err := cs.ProcessBlock(raw); err != nil {
					t.Fatalf("block %d: %v", half+i, err)
				}
			}
			checkLookups(t, ix, cs)
			checkRowsMatch(t, fk, wantRows(t, func(fn func(utxo.Entry) error) error { _, err := cs.ScanCoins(fn); return err }), csTip(cs))
			st.Close()

			n, err := Drop(context.Background(), fk, nil)
			if err != nil || n != csTip(cs).TxOuts {
				t.Fatalf("drop: %d rows, %v; want %d", n, err, csTip(cs).TxOuts)
			}
			it, err := fk.NewIterator(backends.PrefixRange([]byte{'S'}))
			if err != nil {
				t.Fatal(err)
			}
			if it.Next() {
				t.Fatalf("key %x left after drop", it.Key())
			}
			it.Close()

			// Blocks connected without the index make a rebuilt one stale.
			if _, err := Build(context.Background(), fk, nil); err != nil {
				t.Fatal(err)
			}
			st = openStore(t, fk, 1<<20)
			cs = newChainstate(t, st)
			for _, raw := range blocks[len(blocks)-10:] {
				if _, err := cs.ProcessBlock(raw); err != nil {
					t.Fatal(err)
				}
			}
			if err := cs.Flush(); err != nil {
				t.Fatal(err)
			}
			st.Close()
			if _, err := Open(fk); !errors.Is(err, ErrStale) {
				t.Fatalf("Open after blocks connected without the index: %v", err)
			}
		})
	}
}

// TestConformance runs scripthash/indextest on every store, in three
// states: every row built on disk; the rows of two connected blocks still
// pending (created rows, deleted rows of coins on disk, a row created and
// deleted in the window); and the same after the flush.
func TestConformance(t *testing.T) {
	for _, name := range testchain.StoreNames {
		for _, mode := range []string{"built", "pending", "flushed"} {
			t.Run(name+"/"+mode, func(t *testing.T) {
				indextest.Run(t, func(t *testing.T, coins []utxo.Entry, tip scripthash.Tip) scripthash.Index {
					return conformanceIndex(t, name, mode, coins, tip)
				})
			})
		}
	}
}

func conformanceIndex(t *testing.T, name, mode string, coins []utxo.Entry, tip scripthash.Tip) scripthash.Index {
	kv := testchain.OpenKV(t, name, filepath.Join(t.TempDir(), name))
	t.Cleanup(func() { kv.Close() })
	// The base state: coins (all of them, or the first part and some that
	// the blocks spend), at tip.Height-2 unless built at the tip.
	var a, b1, b2, spent, passing []utxo.Entry
	for i, e := range coins {
		switch {
		case mode == "built" || e.Hash[31]%3 == 0:
			a = append(a, e)
		case e.Hash[31]%3 == 1:
			b1 = append(b1, e)
		default:
			b2 = append(b2, e)
		}
		if i < 40 && mode != "built" { // coins of the many-output script the blocks spend
			x := e
			x.Hash[0] ^= 0x5a
			x.Script = indextest.ManyScript
			spent = append(spent, x)
			y := x
			y.Hash[1] ^= 0xa5
			y.Height = tip.Height - 1
			passing = append(passing, y)
		}
	}
	base := append(append([]utxo.Entry(nil), a...), spent...)
	sort.Slice(base, func(i, j int) bool { return bytes.Compare(base[i].Hash[:], base[j].Hash[:]) < 0 })
	baseTip := tip
	if mode != "built" {
		baseTip.Height -= 2
		baseTip.Hash = wire.Hash{0x01}
	}
	baseTip.TxOuts = uint64(len(base))
	st := openStore(t, kv, 1<<30)
	stats := store.Stats{Height: baseTip.Height, BestBlock: baseTip.Hash, TxOuts: baseTip.TxOuts, BogoSize: 100 * baseTip.TxOuts}
	if err := st.SetGenesis(baseTip.Hash, &stats); err != nil {
		t.Fatal(err)
	}
	if err := st.Connect(baseTip.Hash, &utxo.Delta{Created: base}); err != nil {
		t.Fatal(err)
	}
	if err := st.Flush(nil, &stats); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := Build(context.Background(), kv, nil); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(kv)
	if err != nil {
		t.Fatal(err)
	}
	if mode == "built" {
		if ix.Tip() != tip {
			t.Fatalf("built at %+v, want %+v", ix.Tip(), tip)
		}
		return ix
	}
	st = openStore(t, kv, 1<<30, ix)
	t.Cleanup(func() { st.Close() })
	if err := st.Connect(wire.Hash{0x02}, &utxo.Delta{Spent: spent, Created: append(b1, passing...)}); err != nil {
		t.Fatal(err)
	}
	if err := st.Connect(tip.Hash, &utxo.Delta{Spent: passing, Created: b2}); err != nil {
		t.Fatal(err)
	}
	if ix.Tip() != tip {
		t.Fatalf("index at %+v, want %+v", ix.Tip(), tip)
	}
	if mode == "flushed" {
		stats := store.Stats{Height: tip.Height, BestBlock: tip.Hash, TxOuts: tip.TxOuts, BogoSize: 100 * tip.TxOuts}
		if err := st.Flush(nil, &stats); err != nil {
			t.Fatal(err)
		}
		if ix.PendingBytes() != 0 {
			t.Fatal("rows still pending after the flush")
		}
	} else if ix.PendingBytes() == 0 && len(coins) > 0 {
		t.Fatal("no rows pending")
	}
	return ix
}

// TestBatchSizeBounds checks that BatchSize bounds what AppendBatch adds,
// so the flush's pre-sized batch never grows.
func TestBatchSizeBounds(t *testing.T) {
	blocks := testchain.Generated(t, chaingen.ProfileModern, 160, 0)
	kv := testchain.OpenKV(t, "pebble", t.TempDir())
	defer kv.Close()
	ix, err := Create(kv, params.RegTest().GenesisHash)
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t, kv, 1<<30, ix)
	cs := newChainstate(t, st)
	for i, raw := range blocks {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
	}
	n, ops := ix.BatchSize()
	b := backends.NewBatch()
	if err := ix.AppendBatch(b); err != nil {
		t.Fatal(err)
	}
	if b.Len() < 200 {
		t.Fatalf("only %d pending rows: the test needs unflushed blocks", b.Len())
	}
	if b.Size() > n || b.Len() > ops {
		t.Errorf("AppendBatch added %d bytes in %d ops, BatchSize said %d in %d", b.Size(), b.Len(), n, ops)
	}
	if n > 2*b.Size() {
		t.Errorf("BatchSize %d is more than twice the %d bytes added", n, b.Size())
	}
}
