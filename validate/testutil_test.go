package validate_test

import (
	"reflect"
	"sync"
	"testing"
	"time"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/testkit/blockgen"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// The reject tests share one regtest base chain, built once:
//
//	heights 1..101   coinbase 50 BTC to key (P2PKH)
//	height  102      tx fund spends coinbase(1) into fundOuts outputs:
//	                 0,1 → P2WPKH(key) 10 BTC; 2,3 → P2PKH(key) 10 BTC;
//	                 4 → OP_TRUE 9.999 BTC (fee 0.001 BTC)
//	heights 103..110 coinbase only
//
// Each test replays it into a fresh chainstate (a few ms) and submits one
// block on the tip (height 111), where coinbases of heights 2..11 are
// mature and fund's outputs are spendable.

const (
	coin      = 100_000_000
	baseTip   = 110
	fundFee   = 100_000
	fundValue = 10 * coin
)

// clockUnix is the chainstate's clock: well after the base chain, so
// "now + 2h" is a fixed time the tests control.
var clockUnix int64

type baseChain struct {
	chain *blockgen.Chain
	key   *blockgen.Key
	other *blockgen.Key
	raws  [][]byte
	nodes []*blockgen.Node // nodes[h] is the block at height h
	fund  *btcwire.MsgTx
}

var (
	baseOnce sync.Once
	base     *baseChain
	baseErr  error
)

func getBase(t *testing.T) *baseChain {
	t.Helper()
	baseOnce.Do(func() { base, baseErr = buildBase() })
	if baseErr != nil {
		t.Fatal(baseErr)
	}
	return base
}

func buildBase() (*baseChain, error) {
	p := params.RegTest()
	c, err := blockgen.NewChain(p)
	if err != nil {
		return nil, err
	}
	b := &baseChain{chain: c, key: blockgen.NewKey("utxod reject tests"), other: blockgen.NewKey("someone else")}
	b.nodes = append(b.nodes, c.Genesis)
	tip := c.Genesis
	for h := int32(1); h <= baseTip; h++ {
		tpl := c.Template(tip, b.key.P2PKH())
		if h == 102 {
			cb1 := b.nodes[1].Block.Transactions[0]
			fund := blockgen.Spend([]btcwire.OutPoint{blockgen.Outpoint(cb1, 0)},
				blockgen.Out(fundValue, b.key.P2WPKH()),
				blockgen.Out(fundValue, b.key.P2WPKH()),
				blockgen.Out(fundValue, b.key.P2PKH()),
				blockgen.Out(fundValue, b.key.P2PKH()),
				blockgen.Out(50*coin-4*fundValue-fundFee, blockgen.OpTrue),
			)
			if err := b.key.SignP2PKH(fund, 0, cb1.TxOut[0].PkScript); err != nil {
				return nil, err
			}
			tpl.AddTx(fund)
			tpl.Coinbase().TxOut[0].Value += fundFee
			b.fund = fund
		}
		tip = tpl.Finish()
		b.nodes = append(b.nodes, tip)
		b.raws = append(b.raws, tip.Raw)
	}
	clockUnix = int64(tip.Time()) + 3600
	return b, nil
}

// env is one chainstate at the base tip.
type env struct {
	t     *testing.T
	base  *baseChain
	cs    *chainstate.Chainstate
	v     *validate.Validator
	clock int64 // the chainstate's clock (Unix seconds), clockUnix at start
}

func newEnv(t *testing.T) *env {
	t.Helper()
	b := getBase(t)
	p := params.RegTest()
	v := validate.New(p, script.NewEngine(), nil)
	e := &env{t: t, base: b, v: v, clock: clockUnix}
	cs, err := chainstate.New(chainstate.Config{
		Params: p, Validator: v, Store: store.NewMem(),
		Now: func() time.Time { return time.Unix(e.clock, 0) },
	})
	if err != nil {
		t.Fatal(err)
	}
	e.cs = cs
	for i, raw := range b.raws {
		res, err := cs.ProcessBlock(raw)
		if err != nil || res.Status != chainstate.StatusConnected {
			t.Fatalf("base block %d: %s, %v", i+1, res.Status, err)
		}
	}
	return e
}

// newMainnetEnv is a mainnet chainstate at genesis (no base chain).
func newMainnetEnv(t *testing.T) *env {
	t.Helper()
	p := params.MainNet()
	v := validate.New(p, script.NewEngine(), nil)
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: v, Store: store.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, cs: cs, v: v}
}

// tipNode is the base tip's block-index entry, in an index of the test's
// own (the chainstate hands out copies, not its nodes).
func (e *env) tipNode() *validate.BlockNode {
	e.t.Helper()
	idx := validate.NewBlockIndex(params.RegTest())
	var n *validate.BlockNode
	for _, raw := range e.base.raws {
		h, err := wire.ParseHeader(raw)
		if err != nil {
			e.t.Fatal(err)
		}
		if n, err = idx.AddHeader(h); err != nil {
			e.t.Fatal(err)
		}
	}
	if n.Hash != e.cs.Tip().Hash {
		e.t.Fatalf("base chain ends at %s, the chainstate at %s", n.Hash, e.cs.Tip().Hash)
	}
	return n
}

// tip is the base chain's last block.
func (e *env) tip() *blockgen.Node { return e.base.nodes[baseTip] }

// template starts a block on the base tip paying the subsidy to OP_TRUE.
func (e *env) template() *blockgen.Template {
	return e.base.chain.Template(e.tip(), nil)
}

// coinbaseOut is the coinbase output of the base block at height h
// (50 BTC to key, P2PKH).
func (e *env) coinbaseOut(h int) (btcwire.OutPoint, blockgen.Prevout) {
	cb := e.base.nodes[h].Block.Transactions[0]
	return blockgen.Outpoint(cb, 0), blockgen.Prevout{Value: cb.TxOut[0].Value, Script: cb.TxOut[0].PkScript}
}

// fundOut is output i of the funding transaction.
func (e *env) fundOut(i uint32) (btcwire.OutPoint, blockgen.Prevout) {
	f := e.base.fund
	return blockgen.Outpoint(f, i), blockgen.Prevout{Value: f.TxOut[i].Value, Script: f.TxOut[i].PkScript}
}

// spendP2PKH returns a signed transaction spending the given P2PKH outputs
// of key to outs.
func (e *env) spendP2PKH(ops []btcwire.OutPoint, prev []blockgen.Prevout, outs ...*btcwire.TxOut) *btcwire.MsgTx {
	e.t.Helper()
	tx := blockgen.Spend(ops, outs...)
	for i := range ops {
		if err := e.base.key.SignP2PKH(tx, i, prev[i].Script); err != nil {
			e.t.Fatal(err)
		}
	}
	return tx
}

// spendP2WPKH returns a signed transaction spending the given P2WPKH outputs
// of key to outs.
func (e *env) spendP2WPKH(ops []btcwire.OutPoint, prev []blockgen.Prevout, outs ...*btcwire.TxOut) *btcwire.MsgTx {
	e.t.Helper()
	tx := blockgen.Spend(ops, outs...)
	for i := range ops {
		if err := e.base.key.SignP2WPKH(tx, i, prev); err != nil {
			e.t.Fatal(err)
		}
	}
	return tx
}

// snapshot is what must not change when a block is rejected.
type snapshot struct {
	tipHash [32]byte
	tipH    int32
	stats   chainstate.Stats
	info    utxo.ChainstateInfo // with hash_serialized_3
	hs3     [32]byte
	muhash  [32]byte
}

func (e *env) snapshot() snapshot {
	e.t.Helper()
	info, err := e.cs.Info(chainstate.HashTypeHashSerialized3)
	if err != nil {
		e.t.Fatal(err)
	}
	mu, err := e.cs.Info(chainstate.HashTypeMuHash)
	if err != nil {
		e.t.Fatal(err)
	}
	s := snapshot{tipHash: e.cs.Tip().Hash, tipH: e.cs.Tip().Height, stats: e.cs.Stats(), info: info}
	if info.HashSerialized3 == nil || mu.MuHash == nil {
		e.t.Fatal("gettxoutsetinfo without digests")
	}
	s.hs3, s.muhash = *info.HashSerialized3, *mu.MuHash
	return s
}

func (e *env) sameAs(before snapshot) {
	e.t.Helper()
	after := e.snapshot()
	if after.tipHash != before.tipHash || after.tipH != before.tipH {
		e.t.Errorf("tip moved: %x@%d → %x@%d", before.tipHash, before.tipH, after.tipHash, after.tipH)
	}
	// Stats is compared field by field: its MuHash3072 is an unreduced
	// fraction whose representation depends on history (the digest in
	// info is what must match).
	bs, as := before.stats, after.stats
	bs.MuHash, as.MuHash = utxo.MuHash3072{}, utxo.MuHash3072{}
	if !reflect.DeepEqual(as, bs) {
		e.t.Errorf("Stats changed:\n before %+v\n after  %+v", bs, as)
	}
	if after.hs3 != before.hs3 || after.muhash != before.muhash || !reflect.DeepEqual(after.info, before.info) {
		e.t.Errorf("gettxoutsetinfo changed:\n before %+v\n after  %+v", before.info, after.info)
	}
}

// reject submits raw, expects the exact Core reject reason and an
// unchanged chainstate.
func (e *env) reject(raw []byte, reason string) {
	e.t.Helper()
	before := e.snapshot()
	res, err := e.cs.ProcessBlock(raw)
	if err == nil {
		e.t.Fatalf("block accepted (%s), want rejection %q", res.Status, reason)
	}
	if got := validate.Reason(err); got != reason {
		e.t.Fatalf("reason %q (%v), want %q", got, err, reason)
	}
	if got, want := validate.IsMutated(err), coreMutated[reason]; got != want {
		e.t.Fatalf("%q: Mutated %v, want %v", reason, got, want)
	}
	e.sameAs(before)
}

// coreMutated is the set of reject reasons Core reports as
// BlockValidationResult::BLOCK_MUTATED (validation.cpp: CheckMerkleRoot and
// CheckWitnessMalleation); every other block failure is BLOCK_CONSENSUS or
// a header result.
var coreMutated = map[string]bool{
	"bad-txnmrklroot":          true,
	"bad-txns-duplicate":       true,
	"bad-witness-nonce-size":   true,
	"bad-witness-merkle-match": true,
	"unexpected-witness":       true,
}

// rejectOneOf is reject with several acceptable reasons.
func (e *env) rejectOneOf(raw []byte, reasons ...string) {
	e.t.Helper()
	before := e.snapshot()
	res, err := e.cs.ProcessBlock(raw)
	if err == nil {
		e.t.Fatalf("block accepted (%s), want rejection %q", res.Status, reasons)
	}
	got := validate.Reason(err)
	ok := false
	for _, r := range reasons {
		ok = ok || got == r
	}
	if !ok {
		e.t.Fatalf("reason %q (%v), want one of %q", got, err, reasons)
	}
	e.sameAs(before)
}

// accept submits raw and expects it connected.
func (e *env) accept(raw []byte) {
	e.t.Helper()
	res, err := e.cs.ProcessBlock(raw)
	if err != nil {
		e.t.Fatalf("block rejected: %v", err)
	}
	if res.Status != chainstate.StatusConnected {
		e.t.Fatalf("block status %s, want connected", res.Status)
	}
}

// mapView is a utxo.View over a map, for ConnectBlock tests that need
// coins no real chain can hold.
type mapView map[utxo.Outpoint]utxo.Coin

func (m mapView) Coin(op utxo.Outpoint) (utxo.Coin, bool, error) {
	c, ok := m[op]
	return c, ok, nil
}
