package blockgen_test

import (
	"bytes"
	"encoding/hex"
	"testing"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/params"
	"utxod/testkit/blockgen"
	"utxod/validate"
	"utxod/wire"
)

func TestHeightScript(t *testing.T) {
	// Core: CScript() << nHeight (push_int64: OP_0, OP_1NEGATE, OP_1..OP_16,
	// else a minimal CScriptNum push).
	for _, c := range []struct {
		h    int64
		want string
	}{
		{0, "00"}, {-1, "4f"}, {1, "51"}, {16, "60"}, {17, "0111"}, {127, "017f"},
		{128, "028000"}, {255, "02ff00"}, {256, "020001"}, {32767, "02ff7f"},
		{32768, "03008000"}, {227931, "035b7a03"}, {-2, "0182"},
	} {
		if got := hex.EncodeToString(blockgen.HeightScript(c.h)); got != c.want {
			t.Errorf("HeightScript(%d) = %s, want %s", c.h, got, c.want)
		}
	}
	if got := blockgen.CoinbaseScript(1, nil); !bytes.Equal(got, []byte{0x51, 0x00}) {
		t.Errorf("CoinbaseScript(1) = %x, want 5100 (padded to 2 bytes)", got)
	}
}

func TestChainBlocksValidate(t *testing.T) {
	p := params.RegTest()
	c, err := blockgen.NewChain(p)
	if err != nil {
		t.Fatal(err)
	}
	v := validate.New(p, nil, nil)
	key := blockgen.NewKey("blockgen test")
	var nodes []*blockgen.Node
	tip := c.Genesis
	for h := 1; h <= 101; h++ {
		tip = c.Template(tip, key.P2WPKH()).Finish()
		nodes = append(nodes, tip)
	}
	// A segwit spend: the block gets a witness commitment.
	cb := nodes[0].Block.Transactions[0]
	prev := []blockgen.Prevout{{Value: cb.TxOut[0].Value, Script: cb.TxOut[0].PkScript}}
	tx := blockgen.Spend([]btcwire.OutPoint{blockgen.Outpoint(cb, 0)}, blockgen.Out(prev[0].Value-1000, key.P2PKH()))
	if err := key.SignP2WPKH(tx, 0, prev); err != nil {
		t.Fatal(err)
	}
	tpl := c.Template(tip, nil)
	tpl.Coinbase().TxOut[0].Value += 1000
	tpl.AddTx(tx)
	n := tpl.Finish()
	if n.Height != 102 || c.Node(n.Hash) != n || n.Parent != tip {
		t.Fatalf("node bookkeeping: height %d", n.Height)
	}
	b, err := wire.ParseBlock(n.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if b.Hash != n.Hash {
		t.Fatalf("hash %s, node %s", b.Hash, n.Hash)
	}
	if b.Txs[1].TxID != blockgen.TxID(tx) || b.Txs[1].WTxID != blockgen.WTxID(tx) || !b.Txs[1].HasWitness {
		t.Fatal("txid/wtxid differ between utxod's parser and btcd")
	}
	if validate.WitnessCommitmentIndex(b) < 0 {
		t.Fatal("no witness commitment")
	}
	if err := v.CheckBlock(b); err != nil {
		t.Fatalf("CheckBlock: %v", err)
	}
	idx := validate.NewBlockIndex(p)
	for _, x := range append(nodes, n) {
		bx, err := wire.ParseBlock(x.Raw)
		if err != nil {
			t.Fatal(err)
		}
		node, err := idx.AcceptHeader(bx.Header, int64(x.Time()))
		if err != nil {
			t.Fatalf("header %d: %v", x.Height, err)
		}
		if err := v.ContextualCheckBlock(bx, node.Parent); err != nil {
			t.Fatalf("ContextualCheckBlock %d: %v", x.Height, err)
		}
	}
	if mtp := n.Parent.MedianTimePast(); mtp != int64(nodes[95].Time()) {
		t.Errorf("MedianTimePast = %d, want time of height 96 (%d)", mtp, nodes[95].Time())
	}
}
