package spindex

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"

	"utxod/backends"
	_ "utxod/backends/all"
	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/silentpayments"
	"utxod/store"
	"utxod/store/kvstore"
	"utxod/testkit/chaingen"
	"utxod/testkit/testchain"
	"utxod/utxo"
	"utxod/validate"
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

func newChainstate(t testing.TB, st store.Store) *chainstate.Chainstate {
	t.Helper()
	p := params.RegTest()
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// parsed maps every generated block by hash.
func parsed(t testing.TB, raws [][]byte) map[wire.Hash]*wire.Block {
	t.Helper()
	m := map[wire.Hash]*wire.Block{}
	for _, raw := range raws {
		b, err := wire.ParseBlock(raw)
		if err != nil {
			t.Fatal(err)
		}
		m[b.Hash] = b
	}
	return m
}

// csChain is the hashes of cs's active chain, by height.
func csChain(t testing.TB, cs *chainstate.Chainstate) []wire.Hash {
	t.Helper()
	tip := cs.Tip()
	chain := make([]wire.Hash, tip.Height+1)
	for h := range chain {
		bi, ok := cs.AtHeight(int32(h))
		if !ok {
			t.Fatalf("no block at height %d", h)
		}
		chain[h] = bi.Hash
	}
	return chain
}

// oracleStats counts what the chain exercised.
type oracleStats struct {
	rows, partlySpent, fullySpent, spentInBlock int
}

// recompute is the index the active chain calls for, computed from scratch
// and independently of the index's code paths: the chain is replayed from
// genesis with an outpoint → script map (so an input spending an output of
// its own block finds it like any other), each transaction's tweak comes
// from silentpayments.ComputeTweak (checked against BIP352's vectors), and
// the unspent counts from the outputs left in the map at the end.
func recompute(t testing.TB, blocks map[wire.Hash]*wire.Block, chain []wire.Hash, from int) ([]silentpayments.BlockTweaks, oracleStats) {
	t.Helper()
	type outKey struct {
		txid wire.Hash
		vout uint32
	}
	type made struct {
		height int32
		txid   wire.Hash
	}
	set := map[outKey][]byte{}
	var out []silentpayments.BlockTweaks
	var st oracleStats
	rowsOf := map[made]*silentpayments.TweakRow{}
	var order []made
	for h := 1; h < len(chain); h++ {
		b := blocks[chain[h]]
		if b == nil {
			t.Fatalf("no block %s", chain[h])
		}
		bt := silentpayments.BlockTweaks{Height: int32(h), Hash: b.Hash}
		createdHere := map[wire.Hash]bool{}
		for i := range b.Txs {
			tx := &b.Txs[i]
			scripts := make([][]byte, len(tx.Inputs))
			if i > 0 {
				for j, in := range tx.Inputs {
					k := outKey{in.PrevHash, in.PrevIndex}
					s, ok := set[k]
					if !ok {
						t.Fatalf("height %d: %s spends unknown %s:%d", h, tx.TxID, in.PrevHash, in.PrevIndex)
					}
					scripts[j] = s
					if createdHere[in.PrevHash] && len(s) == 34 && s[0] == 0x51 && s[1] == 0x20 {
						st.spentInBlock++
					}
					delete(set, k)
				}
			}
			if tweak, ok, err := silentpayments.ComputeTweak(tx, scripts); err != nil {
				t.Fatal(err)
			} else if ok && h >= from {
				r := silentpayments.TweakRow{Txid: tx.TxID, Tweak: tweak}
				outs, maxValue := silentpayments.TaprootOutputs(tx)
				r.MaxValue = maxValue
				for _, o := range outs {
					r.Outputs = append(r.Outputs, o.Index)
				}
				bt.Rows = append(bt.Rows, r)
			}
			for v, o := range tx.Outputs {
				if len(o.Script) > 0 && o.Script[0] == 0x6a { // OP_RETURN: never a coin
					continue
				}
				set[outKey{tx.TxID, uint32(v)}] = o.Script
			}
			createdHere[tx.TxID] = true
		}
		if h >= from {
			out = append(out, bt)
		}
	}
	for i := range out {
		for j := range out[i].Rows {
			m := made{out[i].Height, out[i].Rows[j].Txid}
			rowsOf[m] = &out[i].Rows[j]
			order = append(order, m)
		}
	}
	for _, m := range order {
		r := rowsOf[m]
		for _, v := range r.Outputs {
			if _, ok := set[outKey{m.txid, v}]; ok {
				r.Unspent++
			}
		}
		st.rows++
		switch {
		case r.Unspent == 0:
			st.fullySpent++
		case int(r.Unspent) < len(r.Outputs):
			st.partlySpent++
		}
	}
	for i := range out {
		slices.SortFunc(out[i].Rows, func(a, b silentpayments.TweakRow) int { return compareHash(a.Txid, b.Txid) })
	}
	return out, st
}

func compareHash(a, b wire.Hash) int {
	for i := range a {
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	return 0
}

// checkIndex compares every block the index covers with recompute at cs's
// tip, and the index's tip with the chainstate's.
func checkIndex(t testing.TB, ix *Index, cs *chainstate.Chainstate, blocks map[wire.Hash]*wire.Block) oracleStats {
	t.Helper()
	chain := csChain(t, cs)
	tip, got, err := ix.Blocks(context.Background(), 0, len(chain)+5)
	if err != nil {
		t.Fatal(err)
	}
	if tip.Height != int32(len(chain)-1) || tip.Hash != chain[len(chain)-1] {
		t.Fatalf("index at %d %s, chain at %d %s", tip.Height, tip.Hash, len(chain)-1, chain[len(chain)-1])
	}
	want, st := recompute(t, blocks, chain, int(tip.From))
	if len(got) != len(want) {
		t.Fatalf("index has %d blocks [%d, %d], want %d", len(got), tip.From, tip.Height, len(want))
	}
	for i := range want {
		if got[i].Rows == nil {
			got[i].Rows = nil
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("height %d:\n got %+v\nwant %+v", want[i].Height, got[i], want[i])
		}
	}
	return st
}

func csHeight(cs *chainstate.Chainstate) uint32 { return uint32(cs.Tip().Height) }

// TestIndexFollowsChain: connects, reorganisations and flushes (a tiny
// cache, and a stretch of failing flushes) leave the index equal to a
// recomputation from scratch over the active chain, with pending changes
// merged (before a flush), on disk (after it) and after a reopen; the
// unspent counts follow taproot spends across blocks (cut-through).
func TestIndexFollowsChain(t *testing.T) {
	raws := testchain.Generated(t, chaingen.ProfileModern, 160, 3)
	blocks := parsed(t, raws)
	for _, name := range testchain.StoreNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			fk := &failKV{KV: testchain.OpenKV(t, name, dir)}
			ix, err := Create(fk, params.RegTest().GenesisHash)
			if err != nil {
				t.Fatal(err)
			}
			st := openIndexedStore(t, fk, 64<<10, ix)
			cs := newChainstate(t, st)
			third := len(raws) / 3
			for i, raw := range raws {
				fk.failing.Store(i >= third && i < 2*third)
				_, err := cs.ProcessBlock(raw)
				if err != nil && !(fk.failing.Load() && errors.Is(err, backends.ErrDiskFull)) {
					t.Fatalf("block %d: %v", i, err)
				}
				if i == third-1 || i == 2*third+5 || i == len(raws)-3 {
					fk.failing.Store(false)
					checkIndex(t, ix, cs, blocks)
				}
			}
			fk.failing.Store(false)
			if err := cs.Flush(); err != nil {
				t.Fatal(err)
			}
			stats := checkIndex(t, ix, cs, blocks)
			t.Logf("%d rows, %d partly and %d fully spent, %d taproot outputs spent in their own block", stats.rows, stats.partlySpent, stats.fullySpent, stats.spentInBlock)
			if stats.rows < 100 || stats.partlySpent == 0 || stats.fullySpent == 0 {
				t.Fatalf("the chain does not exercise cut-through: %+v", stats)
			}
			tip := ix.State()
			ix.Close()
			if _, _, err := ix.Blocks(context.Background(), 0, 1); !errors.Is(err, backends.ErrClosed) {
				t.Errorf("Blocks after Close: %v", err)
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
			if ix.State() != tip {
				t.Fatalf("reopened at %+v, want %+v", ix.State(), tip)
			}
			st = openIndexedStore(t, kv, 64<<10, ix)
			cs = newChainstate(t, st)
			checkIndex(t, ix, cs, blocks)
		})
	}
}

// TestCrashKeepsIndexWithCoins: blocks connected after the last flush are
// lost with the coins when the process dies (the store is closed without a
// flush): the reopened index is at the coins' tip, equal to the
// recomputation there, and follows the rest of the chain (reconnecting the
// lost blocks) to the same end as a run without the crash.
func TestCrashKeepsIndexWithCoins(t *testing.T) {
	raws := testchain.Generated(t, chaingen.ProfileModern, 120, 2)
	blocks := parsed(t, raws)
	name := "pebble"
	dir := filepath.Join(t.TempDir(), name)
	kv := testchain.OpenKV(t, name, dir)
	ix, err := Create(kv, params.RegTest().GenesisHash)
	if err != nil {
		t.Fatal(err)
	}
	st := openIndexedStore(t, kv, 1<<30, ix) // no flush but the explicit one
	cs := newChainstate(t, st)
	half := len(raws) / 2
	for i, raw := range raws[:half] {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
	}
	if err := cs.Flush(); err != nil {
		t.Fatal(err)
	}
	flushed := ix.State()
	for i, raw := range raws[half : half+20] {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatalf("block %d: %v", half+i, err)
		}
	}
	if ix.State() == flushed {
		t.Fatal("no block connected after the flush")
	}
	// The crash: nothing after the flush reaches disk.
	ix.Close()
	st.Close()
	kv.Close()

	kv = testchain.OpenKV(t, name, dir)
	defer kv.Close()
	stats, ok, err := kvstore.ReadState(kv)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	ix, err = Open(kv)
	if err != nil {
		t.Fatal(err)
	}
	if got := ix.State(); got != flushed || got.Hash != stats.BestBlock || got.Height != stats.Height {
		t.Fatalf("reopened index at %+v, flushed at %+v, coins at %d %s", got, flushed, stats.Height, stats.BestBlock)
	}
	st = openIndexedStore(t, kv, 64<<10, ix)
	cs = newChainstate(t, st)
	checkIndex(t, ix, cs, blocks)
	for i, raw := range raws[half:] {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatalf("block %d: %v", half+i, err)
		}
	}
	checkIndex(t, ix, cs, blocks)
	if err := cs.Flush(); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ix, cs, blocks)
}

// TestIndexContract: the kvstore.Index side of the index: a prefix of its
// own, connects only through ApplyBlock, the meta key written with every
// flush that moved the tip, nothing pending after Flushed, the height
// check, and the row codec's round trip and rejections.
func TestIndexContract(t *testing.T) {
	kv := testchain.OpenKV(t, "pebble", t.TempDir())
	defer kv.Close()
	ix, err := Create(kv, params.RegTest().GenesisHash)
	if err != nil {
		t.Fatal(err)
	}
	openIndexedStore(t, kv, 1<<20, ix) // the store accepts its prefix
	if err := ix.Apply(wire.Hash{1}, &utxo.Delta{}, true); !errors.Is(err, ErrNeedBlock) {
		t.Fatalf("Apply(connect) = %v, want ErrNeedBlock", err)
	}
	raws := testchain.Generated(t, chaingen.ProfileModern, 3, 0)
	b, err := wire.ParseBlock(raws[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.ApplyBlock(b, 5, &utxo.Delta{}); err == nil {
		t.Fatal("ApplyBlock at the wrong height succeeded")
	}
	if err := ix.ApplyBlock(b, 1, &utxo.Delta{}); err != nil {
		t.Fatal(err)
	}
	if ix.PendingBytes() == 0 {
		t.Fatal("no pending bytes after a block")
	}
	_, ops := ix.BatchSize()
	batch := backends.NewBatch()
	if err := ix.AppendBatch(batch); err != nil {
		t.Fatal(err)
	}
	// The store's FlushOps bound counts on BatchSize's operations.
	if batch.Len() != ops {
		t.Fatalf("AppendBatch added %d operations, BatchSize said %d", batch.Len(), ops)
	}
	if err := kv.Write(batch, backends.Sync); err != nil {
		t.Fatal(err)
	}
	ix.Flushed()
	if ix.PendingBytes() != 0 {
		t.Fatalf("%d pending bytes after Flushed", ix.PendingBytes())
	}
	m, ok, err := ReadMeta(kv)
	if err != nil || !ok || m.State != Complete || m.Tip.Height != 1 || m.Tip.Hash != b.Hash || m.Tip.From != 1 {
		t.Fatalf("meta %+v ok %v err %v", m, ok, err)
	}
	// Disconnecting it leaves nothing but the meta key.
	ix.SetTip(params.RegTest().GenesisHash)
	if err := ix.Apply(b.Hash, &utxo.Delta{}, false); err != nil {
		t.Fatal(err)
	}
	ix.SetTip(params.RegTest().GenesisHash)
	batch = backends.NewBatch()
	if err := ix.AppendBatch(batch); err != nil {
		t.Fatal(err)
	}
	if err := kv.Write(batch, backends.Sync); err != nil {
		t.Fatal(err)
	}
	ix.Flushed()
	it, err := kv.NewIterator(backends.PrefixRange([]byte{Prefix}))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for it.Next() {
		n++
	}
	it.Close()
	if n != 1 {
		t.Fatalf("%d keys after disconnecting the only block, want the meta key alone", n)
	}
	if got := ix.Tip(); got.Height != 0 || got.From != 1 {
		t.Fatalf("tip %+v", got)
	}

	r := row{maxValue: 1234, unspent: 1, outs: []uint32{0, 7}}
	r.tweak[0] = 2
	enc := encodeRow(nil, &r)
	back, err := decodeRow(enc)
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip %+v %v", back, err)
	}
	for _, bad := range [][]byte{enc[:20], append(enc, 0), enc[:len(enc)-1]} {
		if _, err := decodeRow(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decodeRow(%x) = %v", bad, err)
		}
	}
	over := encodeRow(nil, &row{unspent: 3, outs: []uint32{1}})
	if _, err := decodeRow(over); !errors.Is(err, ErrCorrupt) {
		t.Errorf("unspent above the outputs decoded: %v", err)
	}
}
