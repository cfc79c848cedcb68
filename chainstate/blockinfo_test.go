package chainstate

import (
	"bytes"
	"errors"
	"math/big"
	"testing"

	"utxod/store"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// TestReaderCopies: the read API answers from one view and hands out
// copies: BlockInfo of the tip and of older blocks, ActiveFrom runs, Coins
// with the tip, and BlockData for the blocks still stored (the last
// KeepBlocks), store.ErrNoBlock for pruned ones.
func TestReaderCopies(t *testing.T) {
	blocks := mainnetBlocks(t)[:401]
	cs := newMainnet(t, store.NewMem())
	for _, raw := range blocks {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
	}
	hash := func(h int) wire.Hash { return wire.DoubleSHA256(blocks[h][:wire.HeaderSize]) }
	tip := cs.Tip()
	if tip.Height != 400 || tip.Hash != hash(400) || !tip.InActiveChain || tip.Next != (wire.Hash{}) || tip.TipHeight != 400 {
		t.Fatalf("tip %+v", tip)
	}
	b, ok := cs.AtHeight(100)
	if !ok || b.Hash != hash(100) || b.Next != hash(101) || b.Header.PrevBlock != hash(99) {
		t.Fatalf("block 100: %+v", b)
	}
	// Lookup and AtHeight read the same chain work: 101 blocks' (genesis included).
	if l, ok := cs.Lookup(hash(100)); !ok || l.Hash != b.Hash || l.ChainWork != b.ChainWork || l.ChainWork.Big().Cmp(validate.CalcWork(l.Header.Bits).Mul(validate.CalcWork(l.Header.Bits), big.NewInt(101))) != 0 {
		t.Fatalf("lookup of block 100: %+v (chain work 101 blocks at difficulty 1)", l)
	}
	if _, ok := cs.AtHeight(401); ok {
		t.Fatal("a block above the tip")
	}
	run := cs.ActiveFrom(hash(395), 10)
	if len(run) != 6 {
		t.Fatalf("%d blocks from 395, want 6", len(run))
	}
	for i, bi := range run {
		if bi.Hash != hash(395+i) {
			t.Fatalf("run[%d] is %s", i, bi.Hash)
		}
	}
	if run := cs.ActiveFrom(wire.Hash{1}, 10); len(run) != 0 {
		t.Fatal("a run from an unknown block")
	}

	last, err := wire.ParseBlock(blocks[400])
	if err != nil {
		t.Fatal(err)
	}
	ops := []utxo.Outpoint{{Hash: last.Txs[0].TxID}, {Hash: wire.Hash{2}}}
	found, coins, at, err := cs.Coins(ops)
	if err != nil || !found[0] || found[1] || len(coins) != 1 || coins[0].Height != 400 || at.Hash != tip.Hash {
		t.Fatalf("coins: %v %+v %+v %v", found, coins, at, err)
	}
	coins[0].Script[0] ^= 0xff // the caller's copy
	if c, _, _ := cs.Coin(ops[0]); c.Script[0] == coins[0].Script[0] {
		t.Fatal("Coins handed out the store's script")
	}

	raw, err := cs.BlockData(hash(400))
	if err != nil || !bytes.Equal(raw, blocks[400]) {
		t.Fatalf("block 400: %d bytes, %v", len(raw), err)
	}
	raw[0] ^= 0xff
	if again, _ := cs.BlockData(hash(400)); !bytes.Equal(again, blocks[400]) {
		t.Fatal("BlockData handed out the store's bytes")
	}
	if _, err := cs.BlockData(hash(100)); !errors.Is(err, store.ErrNoBlock) {
		t.Fatalf("block 100 (pruned): %v, want ErrNoBlock", err)
	}
}
