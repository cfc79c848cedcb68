package validate

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"utxod/params"
	"utxod/wire"
)

// Core's pow_tests.cpp GetBlockProofEquivalentTime_test: on a chain of
// equal-difficulty blocks exactly one target spacing apart, the equivalent
// time between any two blocks is their time difference, whatever the tip.
func TestBlockProofEquivalentTimeCore(t *testing.T) {
	p := params.RegTest()
	bi := NewBlockIndex(p)
	nodes := append([]*BlockNode{bi.Genesis()}, branch(t, bi, bi.Genesis(), 9999, 0)...)
	r := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		p1, p2, p3 := nodes[r.IntN(len(nodes))], nodes[r.IntN(len(nodes))], nodes[r.IntN(len(nodes))]
		got := BlockProofEquivalentTime(p1, p2, p3, p)
		if want := int64(p1.Header.Time) - int64(p2.Header.Time); got != want {
			t.Fatalf("heights %d,%d,%d: %d, want %d", p1.Height, p2.Height, p3.Height, got, want)
		}
	}
}

func TestBlockProofEquivalentTimeSaturates(t *testing.T) {
	p := params.RegTest()
	tip := &BlockNode{Header: wire.Header{Bits: p.PowLimitBits}, ChainWork: Work{}} // work 2
	far := &BlockNode{ChainWork: WorkFromBig(new(big.Int).Lsh(big.NewInt(1), 200))}
	zero := &BlockNode{ChainWork: Work{}}
	if got := BlockProofEquivalentTime(far, zero, tip, p); got != math.MaxInt64 {
		t.Errorf("positive: %d", got)
	}
	if got := BlockProofEquivalentTime(zero, far, tip, p); got != -math.MaxInt64 {
		t.Errorf("negative: %d", got)
	}
	// 2^62 work at 2 per block is 2^61 blocks of 600 s: beyond int64.
	mid := &BlockNode{ChainWork: WorkFromBig(new(big.Int).Lsh(big.NewInt(1), 62))}
	if got := BlockProofEquivalentTime(mid, zero, tip, p); got != math.MaxInt64 {
		t.Errorf("2^62: %d", got)
	}
	small := &BlockNode{ChainWork: WorkFromBig(big.NewInt(20))}
	if got := BlockProofEquivalentTime(small, zero, tip, p); got != 6000 {
		t.Errorf("10 blocks: %d, want 6000", got)
	}
}

// TestScriptCheckReason walks each condition of Core's ConnectBlock on its
// own (the others holding), with the boundaries Core's comparisons put:
// chain work >= the minimum, equivalent time > two weeks.
func TestScriptCheckReason(t *testing.T) {
	p := params.RegTest()
	bi := NewBlockIndex(p)
	main := branch(t, bi, bi.Genesis(), 3000, 0) // main[i] is at height i+1; regtest work is 2 a block
	side := branch(t, bi, main[99], 10, 1)       // forks after height 100
	tip := main[len(main)-1]
	if bi.BestHeader() != tip {
		t.Fatal("best header is not the main tip")
	}
	at := func(h int32) *BlockNode { return tip.Ancestor(h) }
	const twoWeeksBlocks = twoWeeks / 600 // 2016 blocks of 600 s
	on := AssumeValid{Block: tip.Hash}
	for _, c := range []struct {
		name string
		a    AssumeValid
		node *BlockNode
		want string
	}{
		{"skip", on, at(500), ""},
		{"genesis child", on, at(1), ""},
		{"off", AssumeValid{}, at(500), "assumevalid=0 (always verify)"},
		{"unknown block", AssumeValid{Block: wire.Hash{1}}, at(500), "assumevalid hash not in headers"},
		{"above the assumed block", AssumeValid{Block: at(400).Hash}, at(401), "block height above assumevalid height"},
		{"the assumed block itself", AssumeValid{Block: at(400).Hash}, at(400), ""},
		{"other branch", AssumeValid{Block: side[9].Hash}, at(103), "block not in assumevalid chain"},
		{"below the fork of the assumed branch", AssumeValid{Block: side[9].Hash}, at(100), ""},
		{"not in the best header chain", AssumeValid{Block: side[9].Hash}, side[2], "block not in best header chain"},
		{"work one short", AssumeValid{Block: tip.Hash, MinimumChainWork: new(big.Int).Add(tip.ChainWork.Big(), big.NewInt(1))}, at(500), "best header chainwork below minimumchainwork"},
		{"work exactly the minimum", AssumeValid{Block: tip.Hash, MinimumChainWork: tip.ChainWork.Big()}, at(500), ""},
		{"exactly two weeks", on, at(tip.Height - twoWeeksBlocks), "block too recent relative to best header"},
		{"two weeks and one block", on, at(tip.Height - twoWeeksBlocks - 1), ""},
		{"the tip", on, tip, "block too recent relative to best header"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.a.ScriptCheckReason(bi, c.node); got != c.want {
				t.Fatalf("height %d: %q, want %q", c.node.Height, got, c.want)
			}
			if c.a.SkipScripts(bi, c.node) != (c.want == "") {
				t.Fatal("SkipScripts disagrees")
			}
		})
	}
	// The best header moving to the side branch (more work) takes the
	// main chain above the fork out of the best header chain.
	longer := branch(t, bi, side[9], 3000, 1)
	if bi.BestHeader() != longer[len(longer)-1] {
		t.Fatal("best header did not move")
	}
	if got := on.ScriptCheckReason(bi, at(500)); got != "block not in best header chain" {
		t.Errorf("after the switch: %q", got)
	}
	if got := on.ScriptCheckReason(bi, at(50)); got != "" {
		t.Errorf("below the fork after the switch: %q", got)
	}
}

func TestDefaultAssumeValid(t *testing.T) {
	m := params.MainNet()
	a := DefaultAssumeValid(m)
	if a.Block != m.DefaultAssumeValid || a.MinimumChainWork.Cmp(m.MinimumChainWork) != 0 || !a.Enabled() {
		t.Fatalf("%+v", a)
	}
	a.MinimumChainWork.SetInt64(0)
	if m.MinimumChainWork.Sign() == 0 {
		t.Fatal("DefaultAssumeValid shares the params' big.Int")
	}
	if r := DefaultAssumeValid(params.RegTest()); r.Enabled() || r.MinimumChainWork != nil {
		t.Fatalf("regtest: %+v", r)
	}
}

// Core's uint256::FromUserHex (-assumevalid, -minimumchainwork): optional
// "0x", up to 64 hex digits, left-padded.
func TestParseUser(t *testing.T) {
	full := "00000000000000000000ccebd6d74d9194d8dcdc1d177c478e094bfad51ba5ac"
	fullHash, err := wire.ParseHash(full)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   string
		want wire.Hash
		ok   bool
	}{
		{full, fullHash, true},
		{"0x" + full, fullHash, true},
		{"ccebd6d74d9194d8dcdc1d177c478e094bfad51ba5ac", fullHash, true},
		{"CCEBD6D74D9194D8DCDC1D177C478E094BFAD51BA5AC", fullHash, true},
		{"0", wire.Hash{}, true},
		{"", wire.Hash{}, true},
		{"1", wire.Hash{1}, true},
		{"100", wire.Hash{0, 1}, true},
		{"0" + full, wire.Hash{}, false}, // 65 digits
		{"xyz", wire.Hash{}, false},
		{"0X1", wire.Hash{}, false}, // Core strips only "0x"
		{" 1", wire.Hash{}, false},
	} {
		got, err := ParseUserHash(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseUserHash(%q) = %s, %v", c.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrBadUserHex) {
			t.Errorf("ParseUserHash(%q): error %v is not ErrBadUserHex", c.in, err)
		}
	}
	for _, c := range []struct {
		in   string
		want int64
	}{{"0", 0}, {"10", 16}, {"0x1128", 0x1128}, {"00000000000000000000000000000000000000000000000000000000000000ff", 255}} {
		got, err := ParseUserWork(c.in)
		if err != nil || got.Cmp(big.NewInt(c.want)) != 0 {
			t.Errorf("ParseUserWork(%q) = %v, %v", c.in, got, err)
		}
	}
	if _, err := ParseUserWork("g"); !errors.Is(err, ErrBadUserHex) {
		t.Errorf("ParseUserWork(g): %v", err)
	}
}
