package chainstate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"utxod/store"
	"utxod/store/kvstore"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// heldStore is a kvstore whose next flush is due when full is set, and whose
// staged write waits for release once it has said so on entered (failing
// with fail instead of writing, when that is set).
type heldStore struct {
	*kvstore.Store
	full    atomic.Bool
	entered chan struct{}
	release chan struct{}
	fail    error
}

func (h *heldStore) NeedsFlush() bool { return h.full.Load() || h.Store.NeedsFlush() }

func (h *heldStore) StageFlush(index []validate.IndexEntry, stats *store.Stats) (func() error, func(error) error, error) {
	commit, finish, err := h.Store.StageFlush(index, stats)
	if err != nil || commit == nil {
		return commit, finish, err
	}
	return func() error {
		h.entered <- struct{}{}
		<-h.release
		if h.fail != nil {
			return h.fail
		}
		return commit()
	}, finish, nil
}

// start runs f on a goroutine; done closes when it returns.
func start(f func()) (done chan struct{}) {
	done = make(chan struct{})
	go func() {
		f()
		close(done)
	}()
	return done
}

// within fails t unless f returns within 10 s.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	select {
	case <-start(f):
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no answer in 10 s", what)
	}
}

// waits reports whether f is still running after 50 ms, then lets it
// finish in the background (done closes).
func waits(f func()) (bool, chan struct{}) {
	done := start(f)
	select {
	case <-done:
		return false, done
	case <-time.After(50 * time.Millisecond):
		return true, done
	}
}

// TestFlushAfterAnswer: a submitted block that fills the store is answered
// before its flush (not durable yet). While the flush writes its batch,
// lookups answer from the block and the flushed tip has not moved; writers
// and the next block wait for it. A flush that fails moves no flushed tip;
// the next submission retries it first and is refused with its error while
// it fails, and the next flush writes everything.
func TestFlushAfterAnswer(t *testing.T) {
	blocks := mainnetBlocks(t)
	ctx := context.Background()
	name := storeNames[0]
	dir := filepath.Join(t.TempDir(), name)
	kv := openKV(t, name, dir)
	h := &heldStore{Store: openKVStore(t, kv, 64<<20), entered: make(chan struct{}), release: make(chan struct{})}
	cs := newMainnet(t, h)
	// Block 170 spends block 9's coinbase: the first spend.
	for i := 1; i < 170; i++ {
		if _, err := cs.Submit(ctx, blocks[i]); err != nil {
			t.Fatal(err)
		}
	}
	b, err := wire.ParseBlock(blocks[170])
	if err != nil {
		t.Fatal(err)
	}
	created := utxo.Outpoint{Hash: b.Txs[0].TxID}
	spent := utxo.Outpoint{Hash: b.Txs[1].Inputs[0].PrevHash, Index: b.Txs[1].Inputs[0].PrevIndex}
	// answers are the reads a flush's write must not change.
	answers := func() string {
		_, c, cerr := cs.Coin(created)
		_, s, serr := cs.Coin(spent)
		outs, _, oerr := cs.SpentOutputs(b.Hash)
		raw, berr := cs.BlockData(b.Hash)
		return fmt.Sprint(c, cerr, s, serr, outs, oerr, len(raw), berr)
	}
	submit := func(i int) (res Result, err error) {
		t.Helper()
		within(t, fmt.Sprintf("block %d", i), func() { res, err = cs.Submit(ctx, blocks[i]) })
		return res, err
	}
	entered := func() {
		t.Helper()
		within(t, "the flush's write", func() { <-h.entered })
	}
	h.full.Store(true)
	res, err := submit(170)
	if err != nil || res.Status != StatusConnected || res.Durable || res.Flushed.Height != 0 {
		t.Fatalf("block 170: %+v %v", res, err)
	}
	entered()
	var during string
	within(t, "a lookup during the flush's write", func() { during = answers() })
	if tip, f := cs.Tip(), cs.Flushed(); tip.Height != 170 || f.Height != 0 {
		t.Fatalf("during the write: tip %d, flushed %d", tip.Height, f.Height)
	}
	if w, _ := waits(func() { cs.Stats() }); !w {
		t.Fatal("a writer ran during the flush's write")
	}
	h.full.Store(false)
	w, next := waits(func() { _, _ = cs.Submit(ctx, blocks[171]) })
	if !w {
		t.Fatal("the next block went in during the flush's write")
	}
	h.release <- struct{}{}
	within(t, "block 171 after the flush", func() { <-next })
	if f := cs.Flushed(); f.Height != 170 {
		t.Fatalf("flushed %d after the write", f.Height)
	}
	if after := answers(); during != after || !strings.HasPrefix(after, "true <nil> false <nil> [[{") {
		t.Fatalf("answers during the write %q, after it %q", during, after)
	}

	// A failed flush: the block stays connected, the flushed tip stays, and
	// the next submission retries it first.
	h.fail = errors.New("disk gone")
	h.full.Store(true)
	if res, err := submit(172); err != nil || res.Status != StatusConnected {
		t.Fatalf("block 172: %+v %v", res, err)
	}
	entered()
	h.release <- struct{}{}
	var rerr error
	w, retried := waits(func() { _, rerr = cs.Submit(ctx, blocks[173]) })
	if !w {
		t.Fatal("block 173 did not wait for the failed flush's retry")
	}
	entered()
	h.release <- struct{}{}
	within(t, "block 173 refused", func() { <-retried })
	if !errors.Is(rerr, h.fail) {
		t.Fatalf("block 173 while the flush fails: %v", rerr)
	}
	if tip, f := cs.Tip(), cs.Flushed(); tip.Height != 172 || f.Height != 170 {
		t.Fatalf("after the failures: tip %d, flushed %d", tip.Height, f.Height)
	}
	h.fail = nil
	h.full.Store(false)
	w, retried = waits(func() { res, rerr = cs.Submit(ctx, blocks[173]) })
	if !w {
		t.Fatal("block 173 did not wait for the second retry")
	}
	entered()
	h.release <- struct{}{}
	within(t, "block 173 after the retry", func() { <-retried })
	if rerr != nil || res.Status != StatusConnected || res.Flushed.Height != 172 {
		t.Fatalf("block 173 after the retry: %+v %v", res, rerr)
	}
	go func() {
		<-h.entered
		h.release <- struct{}{}
	}()
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	kv = openKV(t, name, dir)
	defer kv.Close()
	cs = newMainnet(t, openKVStore(t, kv, 64<<20))
	if tip := cs.Tip(); tip.Height != 173 {
		t.Fatalf("reopened at %d, want 173", tip.Height)
	}
	if _, found, err := cs.Coin(created); err != nil || !found {
		t.Fatalf("block 170's coinbase output after reopening: %v %v", found, err)
	}
}
