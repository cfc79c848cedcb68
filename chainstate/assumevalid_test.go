package chainstate

import (
	"encoding/json"
	"io"
	"math/big"
	"path/filepath"
	"sync"
	"testing"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/testkit/blockgen"
	"utxod/testkit/raceflag"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// The assume-valid tests run regtest chains whose block avBad has one
// fault, under avBurial-1 = 2017 more blocks: with regtest's constant work
// (2 a block) and 600-second spacing, block h is (tip-h)×600 seconds of
// equivalent work under the tip, so with the tip as best header every block
// up to avBad is more than two weeks (1209600 s = 2016 blocks) under it and
// block avBad+1 is exactly two weeks under: not more.
const (
	avBad    = 102
	avBurial = 2018
	avTip    = avBad + avBurial - 1
)

const scriptEvalFalse = "block-script-verify-flag-failed (Script evaluated without error but finished with a false/empty top stack element)"

type avChain struct {
	nodes []*blockgen.Node // nodes[h] is the main-chain block at height h
	side  []*blockgen.Node // three blocks forking after height avBad-1
}

var (
	avOnce   sync.Mutex
	avChains = map[string]*avChain{}
)

// avFixture builds (once) the chain with fault "sig" (block avBad spends a
// coinbase with a corrupted signature; amounts are right) or "amount" (the
// signature is right; the coinbase claims one satoshi more than subsidy and
// fee).
func avFixture(t testing.TB, fault string) *avChain {
	avOnce.Lock()
	defer avOnce.Unlock()
	if c := avChains[fault]; c != nil {
		return c
	}
	c, err := blockgen.NewChain(params.RegTest())
	if err != nil {
		t.Fatal(err)
	}
	key := blockgen.NewKey("assume-valid tests")
	ch := &avChain{nodes: []*blockgen.Node{c.Genesis}}
	tip := c.Genesis
	for h := int32(1); h <= avTip; h++ {
		var tpl *blockgen.Template
		if h < avBad {
			tpl = c.Template(tip, key.P2PKH())
		} else {
			tpl = c.Template(tip, nil)
		}
		if h == avBad {
			cb := ch.nodes[1].Block.Transactions[0]
			tx := blockgen.Spend([]btcwire.OutPoint{blockgen.Outpoint(cb, 0)}, blockgen.Out(cb.TxOut[0].Value-1000, blockgen.OpTrue))
			if err := key.SignP2PKH(tx, 0, cb.TxOut[0].PkScript); err != nil {
				t.Fatal(err)
			}
			tpl.AddTx(tx)
			tpl.Coinbase().TxOut[0].Value += 1000
			switch fault {
			case "sig":
				tx.TxIn[0].SignatureScript[10] ^= 1 // inside the DER signature
			case "amount":
				tpl.Coinbase().TxOut[0].Value++
			default:
				t.Fatalf("unknown fault %q", fault)
			}
		}
		tip = tpl.Finish()
		ch.nodes = append(ch.nodes, tip)
	}
	side := ch.nodes[avBad-1]
	for range 3 {
		tpl := c.Template(side, nil)
		tpl.Coinbase().TxIn[0].SignatureScript = append(tpl.Coinbase().TxIn[0].SignatureScript, 0x51) // differ from the main chain
		side = tpl.Finish()
		ch.side = append(ch.side, side)
	}
	avChains[fault] = ch
	return ch
}

func headersOf(t testing.TB, nodes []*blockgen.Node) []wire.Header {
	var hs []wire.Header
	for _, n := range nodes {
		h, err := wire.ParseHeader(n.Raw)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	return hs
}

// skipShortRace skips a long sequential test in make test's -race -short
// pass (it ran in the plain pass; the stream, view and pipeline tests cover
// the chainstate's goroutines under the race detector).
func skipShortRace(t *testing.T) {
	if raceflag.Enabled && testing.Short() {
		t.Skip("sequential; run without -race or without -short")
	}
}

func newAV(t testing.TB, st store.Store, av validate.AssumeValid) *Chainstate {
	p := params.RegTest()
	cs, err := New(Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: st, AssumeValid: av})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// digestJSON is gettxoutsetinfo with both digests, without the
// assume-valid fields.
func digestJSON(t testing.TB, cs *Chainstate) string {
	t.Helper()
	info, err := cs.Info(HashTypeHashSerialized3)
	if err != nil {
		t.Fatal(err)
	}
	mu, err := cs.Info(HashTypeMuHash)
	if err != nil {
		t.Fatal(err)
	}
	info.MuHash = mu.MuHash
	info.AssumeValid, info.AssumedValidHeight = nil, nil
	b, _ := json.Marshal(info)
	return string(b)
}

// avResult is what one run saw.
type avResult struct {
	tip       int32
	reason    string // of the first rejected block ("" if none)
	errHeight int32
	info      utxo.ChainstateInfo
}

// avRun learns the headers of the main chain up to headersTo (and of the
// side branch when side), then submits the main chain's blocks up to
// headersTo in order, one by one (checking that a rejection leaves the
// chainstate exactly as before it) or as one pipelined stream, stopping at
// the first rejection.
func avRun(t *testing.T, ch *avChain, av validate.AssumeValid, headersTo int, side, stream bool) avResult {
	t.Helper()
	cs := newAV(t, store.NewMem(), av)
	hs := headersOf(t, ch.nodes[1:headersTo+1])
	if side {
		hs = append(hs, headersOf(t, ch.side)...)
	}
	if hr := cs.AcceptHeaders(hs); hr.Added != len(hs) || hr.Invalid != 0 || len(hr.Unlinked) != 0 {
		t.Fatalf("headers: %+v", hr)
	}
	if best := cs.BestHeader(); best.Hash != ch.nodes[headersTo].Hash {
		t.Fatalf("best header at %d, want %d", best.Height, headersTo)
	}
	if cs.Tip().Height != 0 {
		t.Fatal("headers moved the chain")
	}
	res := avResult{errHeight: -1}
	raws := make([][]byte, 0, headersTo)
	for _, n := range ch.nodes[1 : headersTo+1] {
		raws = append(raws, n.Raw)
	}
	if stream {
		i := 0
		err := cs.ProcessStream(StreamConfig{Depth: 8, StopHeight: -1}, func() ([]byte, int64, error) {
			if i == len(raws) {
				return nil, 0, io.EOF
			}
			i++
			return raws[i-1], int64(i), nil
		}, func(o Outcome) bool {
			if o.Err != nil {
				res.reason, res.errHeight = validate.Reason(o.Err), o.Result.Height
				return false
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	} else {
		for i, raw := range raws {
			before := infoJSON(t, cs)
			r, err := cs.ProcessBlock(raw)
			if err != nil {
				res.reason, res.errHeight = validate.Reason(err), r.Height
				if after := infoJSON(t, cs); after != before {
					t.Fatalf("rejected block %d changed the chainstate:\n%s\n%s", i+1, before, after)
				}
				break
			}
			if r.Status != StatusConnected {
				t.Fatalf("block %d: %s", i+1, r.Status)
			}
		}
	}
	res.tip = cs.Tip().Height
	info, err := cs.Info(HashTypeMuHash)
	if err != nil {
		t.Fatal(err)
	}
	res.info = info
	// A rejection leaves the state of the block before it.
	if res.reason != "" {
		ref := newAV(t, store.NewMem(), validate.AssumeValid{})
		for _, raw := range raws[:res.errHeight-1] {
			if _, err := ref.ProcessBlock(raw); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := digestJSON(t, cs), digestJSON(t, ref); got != want {
			t.Fatalf("state after the rejection:\n%s\nwant (blocks before it, fully verified):\n%s", got, want)
		}
	}
	return res
}

func heightOrNone(p *int32) int32 {
	if p == nil {
		return -1
	}
	return *p
}

func TestAssumeValid(t *testing.T) {
	skipShortRace(t)
	sig, amount := avFixture(t, "sig"), avFixture(t, "amount")
	tipHash := sig.nodes[avTip].Hash
	on := validate.AssumeValid{Block: tipHash}
	p := params.RegTest()
	bestWork := new(big.Int).Mul(validate.CalcWork(p.PowLimitBits), big.NewInt(avTip+1)) // genesis included
	cases := []struct {
		name      string
		ch        *avChain
		av        validate.AssumeValid
		headersTo int
		side      bool
		reason    string // "" accepted to headersTo
		assumed   int32  // assumed_valid_height, -1 none
	}{
		{"bad signature below the assumed block: skipped", sig, on, avTip, false, "", avBad},
		{"bad signature, assume-valid 0", sig, validate.AssumeValid{}, avTip, false, scriptEvalFalse, -1},
		{"bad signature above the assumed block", sig, validate.AssumeValid{Block: sig.nodes[avBad-1].Hash}, avTip, false, scriptEvalFalse, avBad - 1},
		{"bad amount below the assumed block", amount, validate.AssumeValid{Block: amount.nodes[avTip].Hash}, avTip, false, "bad-cb-amount", avBad - 1},
		{"bad amount, assume-valid 0", amount, validate.AssumeValid{}, avTip, false, "bad-cb-amount", -1},
		{"not an ancestor of the assumed block", sig, validate.AssumeValid{Block: sig.side[2].Hash}, avTip, true, scriptEvalFalse, avBad - 1},
		{"assumed block not in the headers", sig, validate.AssumeValid{Block: wire.Hash{7}}, avTip, false, scriptEvalFalse, -1},
		{"best header below the minimum chain work", sig, validate.AssumeValid{Block: tipHash, MinimumChainWork: new(big.Int).Add(bestWork, big.NewInt(1))}, avTip, false, scriptEvalFalse, -1},
		{"best header at exactly the minimum chain work", sig, validate.AssumeValid{Block: tipHash, MinimumChainWork: bestWork}, avTip, false, "", avBad},
		{"two weeks of work past the block, not more", sig, validate.AssumeValid{Block: sig.nodes[avTip-1].Hash}, avTip - 1, false, scriptEvalFalse, avBad - 1},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			name := c.name
			if stream {
				name += ", stream"
			}
			t.Run(name, func(t *testing.T) {
				r := avRun(t, c.ch, c.av, c.headersTo, c.side, stream)
				if r.reason != c.reason {
					t.Fatalf("rejection %q at %d, want %q", r.reason, r.errHeight, c.reason)
				}
				wantTip := int32(c.headersTo)
				if c.reason != "" {
					wantTip = avBad - 1
					if r.errHeight != avBad {
						t.Fatalf("rejected at %d, want %d", r.errHeight, avBad)
					}
				}
				if r.tip != wantTip {
					t.Fatalf("tip %d, want %d", r.tip, wantTip)
				}
				if got := heightOrNone(r.info.AssumedValidHeight); got != c.assumed {
					t.Errorf("assumed_valid_height %d, want %d", got, c.assumed)
				}
				if c.av.Enabled() != (r.info.AssumeValid != nil) || (r.info.AssumeValid != nil && *r.info.AssumeValid != c.av.Block) {
					t.Errorf("assume_valid %v, want %s", r.info.AssumeValid, c.av.Block)
				}
			})
		}
	}
}

// TestAssumeValidSameDigests: a valid chain ends at the same coin set and
// digests with and without assume-valid (only the scripts' verification
// differs), and the scripts of every block more than 2016 blocks under the
// tip were assumed.
func TestAssumeValidSameDigests(t *testing.T) {
	ch := avFixture(t, "amount") // valid up to avBad-1
	good := ch.nodes[:avBad]
	// A valid chain of avBurial+100 blocks on block avBad-1.
	c, err := blockgen.NewChain(params.RegTest())
	if err != nil {
		t.Fatal(err)
	}
	tip := good[len(good)-1]
	nodes := append([]*blockgen.Node(nil), good...)
	for range avBurial + 100 {
		tip = c.Template(tip, nil).Finish()
		nodes = append(nodes, tip)
	}
	run := func(av validate.AssumeValid) (*Chainstate, string) {
		cs := newAV(t, store.NewMem(), av)
		cs.AcceptHeaders(headersOf(t, nodes[1:]))
		for _, n := range nodes[1:] {
			if _, err := cs.ProcessBlock(n.Raw); err != nil {
				t.Fatal(err)
			}
		}
		return cs, digestJSON(t, cs)
	}
	full, want := run(validate.AssumeValid{})
	av, got := run(validate.AssumeValid{Block: tip.Hash})
	if got != want {
		t.Fatalf("assume-valid:\n%s\nfull:\n%s", got, want)
	}
	checkScratchMuHash(t, av)
	info, _ := av.Info(HashTypeNone)
	if h, want := heightOrNone(info.AssumedValidHeight), int32(len(nodes)-1)-2017; h != want {
		t.Errorf("assumed_valid_height %d, want %d", h, want)
	}
	if info, _ := full.Info(HashTypeNone); info.AssumedValidHeight != nil {
		t.Error("full validation reports assumed scripts")
	}
}

// TestAssumeValidNeedsHeaders: without headers first, the assumed block is
// not in the index when the faulty block connects, so its scripts are
// verified (Core: "assumevalid hash not in headers").
func TestAssumeValidNeedsHeaders(t *testing.T) {
	ch := avFixture(t, "sig")
	cs := newAV(t, store.NewMem(), validate.AssumeValid{Block: ch.nodes[avTip].Hash})
	for h := 1; h <= avTip; h++ {
		_, err := cs.ProcessBlock(ch.nodes[h].Raw)
		if h < avBad && err != nil {
			t.Fatal(err)
		}
		if h == avBad {
			if got := validate.Reason(err); got != scriptEvalFalse {
				t.Fatalf("block %d: %q, want %q", h, got, scriptEvalFalse)
			}
			break
		}
	}
	if cs.Tip().Height != avBad-1 {
		t.Fatalf("tip %d", cs.Tip().Height)
	}
}

// TestHeadersFirstOutOfOrder: with every header known first, blocks that
// arrive before their parent wait for it (the parent's header alone does
// not make them connectable) and the end state is the in-order one.
func TestHeadersFirstOutOfOrder(t *testing.T) {
	ch := avFixture(t, "amount")
	nodes := ch.nodes[1:avBad] // valid blocks
	hs := headersOf(t, nodes)
	// Headers in reverse order: AcceptHeaders links them anyway.
	rev := make([]wire.Header, len(hs))
	for i := range hs {
		rev[len(hs)-1-i] = hs[i]
	}
	inOrder := newAV(t, store.NewMem(), validate.AssumeValid{})
	for _, n := range nodes {
		if _, err := inOrder.ProcessBlock(n.Raw); err != nil {
			t.Fatal(err)
		}
	}
	cs := newAV(t, store.NewMem(), validate.AssumeValid{})
	if hr := cs.AcceptHeaders(rev); hr.Added != len(hs) || len(hr.Unlinked) != 0 {
		t.Fatalf("%+v", hr)
	}
	if hr := cs.AcceptHeaders(rev[:5]); hr.Known != 5 || hr.Added != 0 {
		t.Fatalf("again: %+v", hr)
	}
	for i := 0; i+1 < len(nodes); i += 2 {
		r, err := cs.ProcessBlock(nodes[i+1].Raw)
		if err != nil || r.Status != StatusOrphan {
			t.Fatalf("block %d before its parent: %s %v", i+2, r.Status, err)
		}
		if r, err = cs.ProcessBlock(nodes[i].Raw); err != nil || r.Status != StatusConnected {
			t.Fatalf("block %d: %s %v", i+1, r.Status, err)
		}
	}
	if len(nodes)%2 == 1 {
		if _, err := cs.ProcessBlock(nodes[len(nodes)-1].Raw); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := infoJSON(t, cs), infoJSON(t, inOrder); got != want {
		t.Fatalf("out of order:\n%s\nin order:\n%s", got, want)
	}
	// Unlinked headers come back; an invalid one is refused with its
	// descendants.
	orphanHdr := hs[3]
	orphanHdr.PrevBlock = wire.Hash{9}
	bad := hs[2]
	bad.Nonce++
	for validate.CheckBlockHeader(&bad, bad.BlockHash(), params.RegTest()) == nil {
		bad.Nonce++ // find a nonce that misses regtest's target
	}
	child := hs[3]
	child.PrevBlock = bad.BlockHash()
	fresh := newAV(t, store.NewMem(), validate.AssumeValid{})
	hr := fresh.AcceptHeaders([]wire.Header{child, orphanHdr, hs[0], hs[1], bad})
	if hr.Added != 2 || hr.Invalid != 2 || len(hr.Unlinked) != 1 || hr.Unlinked[0] != orphanHdr || validate.Reason(hr.FirstErr) != "high-hash" {
		t.Fatalf("%+v", hr)
	}
}

// TestAssumeValidPersists: the assumed height survives a restart (with
// another setting) on every store.
func TestAssumeValidPersists(t *testing.T) {
	skipShortRace(t)
	ch := avFixture(t, "sig")
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			kv := openKV(t, name, dir)
			cs := newAV(t, openKVStore(t, kv, 64<<10), validate.AssumeValid{Block: ch.nodes[avTip].Hash})
			cs.AcceptHeaders(headersOf(t, ch.nodes[1:]))
			for _, n := range ch.nodes[1:] {
				if _, err := cs.ProcessBlock(n.Raw); err != nil {
					t.Fatal(err)
				}
			}
			want := digestJSON(t, cs)
			if err := cs.Flush(); err != nil {
				t.Fatal(err)
			}
			kv.Close()
			kv = openKV(t, name, dir)
			defer kv.Close()
			cs = newAV(t, openKVStore(t, kv, 64<<10), validate.AssumeValid{})
			info, err := cs.Info(HashTypeNone)
			if err != nil {
				t.Fatal(err)
			}
			if info.AssumeValid != nil || heightOrNone(info.AssumedValidHeight) != avBad || info.Height != avTip {
				t.Fatalf("after reopening: %+v", info)
			}
			if got := digestJSON(t, cs); got != want {
				t.Fatalf("reopened:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestAssumeValidReorg: a reorganisation below the assumed height lowers
// it to the fork; the new branch, off the assumed block's chain, has every
// script verified.
func TestAssumeValidReorg(t *testing.T) {
	ch := avFixture(t, "sig")
	cs := newAV(t, store.NewMem(), validate.AssumeValid{Block: ch.nodes[avTip].Hash})
	cs.AcceptHeaders(headersOf(t, ch.nodes[1:]))
	for _, n := range ch.nodes[1:] {
		if _, err := cs.ProcessBlock(n.Raw); err != nil {
			t.Fatal(err)
		}
	}
	c, err := blockgen.NewChain(params.RegTest())
	if err != nil {
		t.Fatal(err)
	}
	const fork = 50
	tip := ch.nodes[fork]
	var branch []*blockgen.Node
	for tip.Height <= avTip {
		tpl := c.Template(tip, nil)
		tpl.Coinbase().TxIn[0].SignatureScript = append(tpl.Coinbase().TxIn[0].SignatureScript, 0x52)
		tip = tpl.Finish()
		branch = append(branch, tip)
	}
	cs.AcceptHeaders(headersOf(t, branch))
	for _, n := range branch {
		if _, err := cs.ProcessBlock(n.Raw); err != nil {
			t.Fatal(err)
		}
	}
	if cs.Tip().Hash != tip.Hash {
		t.Fatalf("no reorg: tip %d", cs.Tip().Height)
	}
	info, _ := cs.Info(HashTypeNone)
	if h := heightOrNone(info.AssumedValidHeight); h != fork {
		t.Fatalf("assumed_valid_height %d, want %d", h, fork)
	}
}
