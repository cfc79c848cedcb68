package spindex

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"utxod/backends"
	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/store/kvstore"
	"utxod/testkit/chaingen"
	"utxod/testkit/testchain"
	"utxod/validate"
)

// TestBuildVerifyDrop: a datadir imported without the index builds it for
// the blocks it keeps (through a failed batch: the half-built index is not
// taken as complete, the next build resumes), equal to the recomputation
// from scratch; Verify passes and catches a changed, a missing and an
// extra key; the built index follows new blocks; Drop removes every key.
func TestBuildVerifyDrop(t *testing.T) {
	defer func(n int) { buildBatchBlocks = n }(buildBatchBlocks)
	buildBatchBlocks = 7
	raws := testchain.Generated(t, chaingen.ProfileModern, 160, 2)
	blocks := parsed(t, raws)
	half := len(raws) * 2 / 3
	for _, name := range testchain.StoreNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			fk := &failKV{KV: testchain.OpenKV(t, name, dir)}
			defer func() { fk.KV.Close() }()
			p := params.RegTest()
			newCS := func(st *kvstore.Store) *chainstate.Chainstate {
				cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: st, KeepBlocks: 100})
				if err != nil {
					t.Fatal(err)
				}
				return cs
			}
			st := openIndexedStore(t, fk, 1<<20)
			cs := newCS(st)
			for i, raw := range raws[:half] {
				if _, err := cs.ProcessBlock(raw); err != nil {
					t.Fatalf("block %d: %v", i, err)
				}
			}
			if err := cs.Flush(); err != nil {
				t.Fatal(err)
			}
			tipHeight := uint32(cs.Tip().Height)
			if _, err := Open(fk); !errors.Is(err, ErrNone) {
				t.Fatalf("Open before a build: %v", err)
			}
			ctx := context.Background()
			// A build whose third batch fails, then one that resumes.
			writes := 0
			fk2 := &countKV{KV: fk.KV, failAt: 3, n: &writes}
			if _, err := Build(ctx, fk2, st, 0, nil); !errors.Is(err, backends.ErrDiskFull) {
				t.Fatalf("failing build: %v", err)
			}
			if m, ok, _ := ReadMeta(fk); !ok || m.State != Building || m.Next <= m.Tip.From {
				t.Fatalf("after a failed build: %+v %v", m, ok)
			}
			if _, err := Open(fk); !errors.Is(err, ErrNone) {
				t.Fatalf("Open of a half-built index: %v", err)
			}
			var last uint64
			m, err := Build(ctx, fk, st, 0, func(done, total uint64) { last = done })
			if err != nil {
				t.Fatal(err)
			}
			if m.State != Complete || m.Tip.Height != tipHeight || m.Tip.From < 2 || m.Tip.From > tipHeight || last != uint64(tipHeight-m.Tip.From+1) {
				t.Fatalf("built %+v (progress %d); kept blocks from %d", m, last, tipHeight-100)
			}
			if _, err := Build(ctx, fk, st, 0, nil); !errors.Is(err, ErrExists) {
				t.Fatalf("second build: %v", err)
			}
			if _, err := Verify(ctx, fk, st, nil); err != nil {
				t.Fatal(err)
			}
			checkVerifyCatches(t, fk.KV, st)
			st.Close()

			// The built index follows the rest of the chain.
			ix, err := Open(fk)
			if err != nil {
				t.Fatal(err)
			}
			st = openIndexedStore(t, fk, 64<<10, ix)
			cs = newCS(st)
			checkIndex(t, ix, cs, blocks)
			for i, raw := range raws[half:] {
				if _, err := cs.ProcessBlock(raw); err != nil {
					t.Fatalf("block %d: %v", half+i, err)
				}
			}
			if err := cs.Flush(); err != nil {
				t.Fatal(err)
			}
			checkIndex(t, ix, cs, blocks)
			rep, err := Verify(ctx, fk, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Blocks that left the kept window are checked by hash only.
			if rep.Checked < 100 || rep.Skipped == 0 || rep.Checked+rep.Skipped != uint64(rep.Meta.Tip.Height-rep.Meta.Tip.From+1) {
				t.Errorf("verify after following: %+v", rep)
			}
			ix.Close()
			st.Close()

			n, err := Drop(ctx, fk, nil)
			if err != nil || n == 0 {
				t.Fatalf("drop: %d keys, %v", n, err)
			}
			it, err := fk.NewIterator(backends.PrefixRange([]byte{Prefix}))
			if err != nil {
				t.Fatal(err)
			}
			if it.Next() {
				t.Errorf("key %x left after Drop", it.Key())
			}
			it.Close()
		})
	}
}

// countKV fails the failAt-th Write.
type countKV struct {
	backends.KV
	failAt int
	n      *int
}

func (c *countKV) Write(b *backends.Batch, m backends.SyncMode) error {
	if *c.n++; *c.n == c.failAt {
		return backends.ErrDiskFull
	}
	return c.KV.Write(b, m)
}

// checkVerifyCatches: Verify fails on a changed row, a missing row and an
// extra key (each undone before the next).
func checkVerifyCatches(t *testing.T, kv backends.KV, src Source) {
	t.Helper()
	it, err := kv.NewIterator(backends.Range{Prefix: []byte{Prefix}, Start: []byte{Prefix, 0}})
	if err != nil {
		t.Fatal(err)
	}
	var k, v []byte
	for it.Next() {
		if len(it.Key()) == rowKeyLen {
			k, v = append([]byte(nil), it.Key()...), append([]byte(nil), it.Value()...)
			break
		}
	}
	it.Close()
	if k == nil {
		t.Fatal("no row")
	}
	write := func(f func(b *backends.Batch)) {
		b := backends.NewBatch()
		f(b)
		if err := kv.Write(b, backends.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	changed := append([]byte(nil), v...)
	changed[0] ^= 1
	extra := append([]byte(nil), k[:5]...)
	extra[4]-- // a height below the first indexed one
	extra = append(extra, k[5:]...)
	for _, c := range []struct {
		name        string
		break_, fix func(b *backends.Batch)
	}{
		{"value", func(b *backends.Batch) { b.Put(k, changed) }, func(b *backends.Batch) { b.Put(k, v) }},
		{"missing", func(b *backends.Batch) { b.Delete(k) }, func(b *backends.Batch) { b.Put(k, v) }},
		{"extra", func(b *backends.Batch) { b.Put(extra, v) }, func(b *backends.Batch) { b.Delete(extra) }},
	} {
		write(c.break_)
		if _, err := Verify(context.Background(), kv, src, nil); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: Verify = %v, want ErrMismatch", c.name, err)
		}
		write(c.fix)
	}
	if _, err := Verify(context.Background(), kv, src, nil); err != nil {
		t.Fatal(err)
	}
}
