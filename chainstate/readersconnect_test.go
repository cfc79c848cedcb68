package chainstate

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"utxod/store/kvstore"
	"utxod/utxo"
	"utxod/wire"
)

// readHeldStore is a kvstore whose first read of op once hold is set says
// so on entered and waits for release.
type readHeldStore struct {
	*kvstore.Store
	op      utxo.Outpoint
	hold    atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (h *readHeldStore) Coin(op utxo.Outpoint) (utxo.Coin, bool, error) {
	if op == h.op && h.hold.CompareAndSwap(true, false) {
		h.entered <- struct{}{}
		<-h.release
	}
	return h.Store.Coin(op)
}

// TestLookupsDuringConnect: while a submitted block's connect reads the
// coins it spends, lookups answer the parent's state (the coin unspent, the
// block's outputs absent, the parent as tip), writers wait, and once the
// block is valid it is connected and the lookups answer it.
func TestLookupsDuringConnect(t *testing.T) {
	blocks := mainnetBlocks(t)
	ctx := context.Background()
	name := storeNames[0]
	kv := openKV(t, name, filepath.Join(t.TempDir(), name))
	b, err := wire.ParseBlock(blocks[170])
	if err != nil {
		t.Fatal(err)
	}
	// Block 170 spends block 9's coinbase: the first spend.
	spent := utxo.Outpoint{Hash: b.Txs[1].Inputs[0].PrevHash, Index: b.Txs[1].Inputs[0].PrevIndex}
	created := utxo.Outpoint{Hash: b.Txs[1].TxID}
	h := &readHeldStore{Store: openKVStore(t, kv, 64<<20), op: spent, entered: make(chan struct{}), release: make(chan struct{})}
	cs := newMainnet(t, h)
	for i := 1; i < 170; i++ {
		if _, err := cs.Submit(ctx, blocks[i]); err != nil {
			t.Fatal(err)
		}
	}
	// state is what a reader sees: whether each coin is unspent, and the tip.
	state := func() (spentFound, createdFound bool, tip int32) {
		found, _, ti, err := cs.Coins([]utxo.Outpoint{spent, created})
		if err != nil {
			t.Error(err)
		}
		if tip := cs.Tip(); tip.Height != ti.Height {
			t.Errorf("Tip %d, Coins' tip %d", tip.Height, ti.Height)
		}
		return found[0], found[1], ti.Height
	}
	h.hold.Store(true)
	var res Result
	var serr error
	submitted := start(func() { res, serr = cs.Submit(ctx, blocks[170]) })
	within(t, "the connect's read", func() { <-h.entered })
	within(t, "a lookup during the connect", func() {
		if s, c, tip := state(); !s || c || tip != 169 {
			t.Errorf("during the connect: spent coin unspent %v, created %v, tip %d; want true, false, 169", s, c, tip)
		}
	})
	w, wrote := waits(func() { cs.Stats() })
	if !w {
		t.Fatal("a writer ran during the connect")
	}
	h.release <- struct{}{}
	within(t, "block 170", func() { <-submitted })
	within(t, "the writer", func() { <-wrote })
	if serr != nil || res.Status != StatusConnected || res.Height != 170 {
		t.Fatalf("block 170: %+v %v", res, serr)
	}
	if s, c, tip := state(); s || !c || tip != 170 {
		t.Fatalf("after the connect: spent coin unspent %v, created %v, tip %d; want false, true, 170", s, c, tip)
	}
}
