package api

import (
	"crypto/sha256"
	"encoding/json"
	"testing"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/address"
	"utxod/chainstate"
	"utxod/params"
	"utxod/testkit/blockgen"
)

// regtest is a regtest chainstate fed with blocks built by blockgen.
type regtest struct {
	t     testing.TB
	p     *params.Params
	cs    *chainstate.Chainstate
	gen   *blockgen.Chain
	tip   *blockgen.Node
	srv   *Server
	nonce int
}

func newRegtest(t testing.TB, cfg Config) *regtest {
	t.Helper()
	p := params.RegTest()
	cs := newChainstate(t, p)
	g, err := blockgen.NewChain(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Chain, cfg.Params, cfg.Token = cs, p, testToken
	if cfg.Coins == nil && cfg.Index == nil {
		cfg.Coins = cs
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &regtest{t: t, p: p, cs: cs, gen: g, tip: g.Genesis, srv: srv}
}

// payout is one coinbase output.
type payout struct {
	script []byte
	value  int64
}

// mine connects a block on parent (nil: the tip) whose coinbase pays outs
// (the subsidy to OP_TRUE when empty) and which holds txs.
func (r *regtest) mineOn(parent *blockgen.Node, outs []payout, txs ...*btcwire.MsgTx) *blockgen.Node {
	r.t.Helper()
	if parent == nil {
		parent = r.tip
	}
	tpl := r.gen.Template(parent, nil)
	if len(outs) > 0 {
		cb := tpl.Coinbase()
		cb.TxOut = nil
		for _, o := range outs {
			cb.AddTxOut(&btcwire.TxOut{Value: o.value, PkScript: o.script})
		}
	}
	// A distinct coinbase per block even when the outputs repeat.
	r.nonce++
	tpl.Coinbase().TxIn[0].SignatureScript = blockgen.CoinbaseScript(tpl.Height, []byte{byte(r.nonce), byte(r.nonce >> 8)})
	tpl.AddTx(txs...)
	n := tpl.Finish()
	res, err := r.cs.ProcessBlock(n.Raw)
	if err != nil {
		r.t.Fatalf("block %d: %v", n.Height, err)
	}
	if res.Status == chainstate.StatusConnected || r.cs.Tip().Hash == n.Hash {
		r.tip = n
	}
	return n
}

func (r *regtest) mine(outs ...payout) *blockgen.Node { return r.mineOn(nil, outs) }

// mineN connects n empty blocks.
func (r *regtest) mineN(n int) {
	for range n {
		r.mine()
	}
}

// anyoneScript is P2WSH(OP_TRUE): spendable with the witness [OP_TRUE],
// and it has an address.
var anyoneScript = func() []byte {
	h := sha256.Sum256([]byte{0x51})
	return address.WitnessScript(0, h[:])
}()

// spendAnyone spends outpoints of anyoneScript to outs.
func spendAnyone(prev []btcwire.OutPoint, outs []payout) *btcwire.MsgTx {
	tx := btcwire.NewMsgTx(2)
	for _, op := range prev {
		tx.AddTxIn(&btcwire.TxIn{PreviousOutPoint: op, Sequence: 0xffffffff, Witness: btcwire.TxWitness{{0x51}}})
	}
	for _, o := range outs {
		tx.AddTxOut(&btcwire.TxOut{Value: o.value, PkScript: o.script})
	}
	return tx
}

func (r *regtest) addr(script []byte) string {
	r.t.Helper()
	a, ok := address.FromScript(script, r.p)
	if !ok {
		r.t.Fatalf("no address for %x", script)
	}
	return a
}

func (r *regtest) get(target string, v any) int {
	r.t.Helper()
	rec := do(r.t, r.srv, "GET", target, nil)
	if v != nil && rec.Code == 200 {
		if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
			r.t.Fatalf("%s: %v: %s", target, err, rec.Body)
		}
	}
	return rec.Code
}

// mustAt is the active chain's block at height h.
func mustAt(t testing.TB, cs *chainstate.Chainstate, h int32) chainstate.BlockInfo {
	t.Helper()
	b, ok := cs.AtHeight(h)
	if !ok {
		t.Fatalf("no active block at height %d", h)
	}
	return b
}
