package validate

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"utxod/params"
	"utxod/wire"
)

// branch appends n synthetic headers (no proof of work) on top of from;
// salt makes sibling branches hash differently.
func branch(t testing.TB, bi *BlockIndex, from *BlockNode, n int, salt uint32) []*BlockNode {
	t.Helper()
	out := make([]*BlockNode, 0, n)
	tip := from
	for i := 0; i < n; i++ {
		h := wire.Header{Version: 4, PrevBlock: tip.Hash, Time: tip.Header.Time + 600, Bits: bi.params.PowLimitBits, Nonce: salt}
		node, err := bi.AddHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, node)
		tip = node
	}
	return out
}

func TestSkipHeight(t *testing.T) {
	// Values of Core's GetSkipHeight worked by hand from its definition.
	for _, tc := range []struct{ h, want int32 }{
		{0, 0}, {1, 0}, {2, 0}, {3, 1}, {4, 0}, {5, 1}, {6, 4}, {7, 1}, {8, 0}, {12, 8}, {13, 1}, {1000, 992}, {1001, 961},
	} {
		if got := skipHeight(tc.h); got != tc.want {
			t.Errorf("skipHeight(%d) = %d, want %d", tc.h, got, tc.want)
		}
	}
}

// Like Core's skiplist_test: Ancestor agrees with a plain walk at every
// height, and the skip pointers point strictly back.
func TestAncestorSkipList(t *testing.T) {
	bi := NewBlockIndex(params.RegTest())
	nodes := append([]*BlockNode{bi.Genesis()}, branch(t, bi, bi.Genesis(), 20000, 0)...)
	for i, n := range nodes {
		if n.Height != int32(i) {
			t.Fatalf("height %d at %d", n.Height, i)
		}
		if i >= 2 && (n.skip == nil || n.skip.Height >= n.Height || nodes[n.skip.Height] != n.skip) {
			t.Fatalf("bad skip at %d", i)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		from := nodes[r.IntN(len(nodes))]
		h := int32(r.IntN(int(from.Height) + 1))
		if got := from.Ancestor(h); got != nodes[h] {
			t.Fatalf("Ancestor(%d) from %d wrong", h, from.Height)
		}
	}
	tip := nodes[len(nodes)-1]
	if tip.Ancestor(-1) != nil || tip.Ancestor(tip.Height+1) != nil || tip.Ancestor(tip.Height) != tip {
		t.Error("Ancestor bounds")
	}
	var nilNode *BlockNode
	if nilNode.Ancestor(0) != nil {
		t.Error("nil Ancestor")
	}
}

func TestMedianTimePast(t *testing.T) {
	bi := NewBlockIndex(params.RegTest())
	g := bi.Genesis()
	times := []uint32{g.Header.Time}
	tip := g
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 40; i++ {
		ts := g.Header.Time + uint32(r.IntN(5000))
		h := wire.Header{Version: 4, PrevBlock: tip.Hash, Time: ts, Bits: 0x207fffff}
		n, err := bi.AddHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, ts)
		tip = n
		// Reference: Core sorts the last min(11, height+1) times and takes
		// element count/2.
		lo := max(0, len(times)-11)
		w := slices.Clone(times[lo:])
		slices.Sort(w)
		if got, want := n.MedianTimePast(), int64(w[len(w)/2]); got != want {
			t.Fatalf("height %d: MTP %d, want %d", n.Height, got, want)
		}
	}
	if g.MedianTimePast() != int64(g.Header.Time) {
		t.Error("genesis MTP")
	}
}

func TestBestHeaderAndInvalid(t *testing.T) {
	bi := NewBlockIndex(params.RegTest())
	g := bi.Genesis()
	main := branch(t, bi, g, 5, 0) // heights 1..5
	if bi.BestHeader() != main[4] {
		t.Fatal("best is not the main tip")
	}
	// Equal work: a second branch of the same height does not take over.
	side := branch(t, bi, main[1], 3, 1) // heights 3..5 off height 2
	if bi.BestHeader() != main[4] {
		t.Fatal("equal-work branch replaced the first-seen tip")
	}
	// More work wins.
	longer := branch(t, bi, side[2], 1, 1) // height 6
	if bi.BestHeader() != longer[0] {
		t.Fatal("more-work branch did not become best")
	}
	if got := bi.FindFork(main[4], longer[0]); got != main[1] {
		t.Fatalf("FindFork = height %d", got.Height)
	}
	if bi.FindFork(main[4], main[2]) != main[2] || bi.FindFork(nil, main[2]) != nil {
		t.Error("FindFork on one branch")
	}
	// Invalidating the side branch's first block fails its descendants and
	// brings the best header back to the first-seen main tip.
	bi.MarkInvalid(side[0], "bad-txnmrklroot")
	if !side[0].Status.Has(StatusFailed) || side[0].RejectReason != "bad-txnmrklroot" {
		t.Errorf("side[0] status %v", side[0].Status)
	}
	for _, n := range append(side[1:], longer...) {
		if !n.Status.Has(StatusFailedParent) {
			t.Errorf("descendant at %d not failed: %v", n.Height, n.Status)
		}
	}
	for _, n := range main {
		if n.Status.Invalid() {
			t.Errorf("main block %d marked invalid", n.Height)
		}
	}
	if bi.BestHeader() != main[4] {
		t.Fatalf("best after invalidation at height %d", bi.BestHeader().Height)
	}
	// New children of an invalid node are born invalid.
	child := branch(t, bi, longer[0], 2, 1)
	if !child[1].Status.Invalid() || bi.BestHeader() != main[4] {
		t.Error("child of invalid node became valid or best")
	}
	// Reconsider: everything comes back and the most-work tip wins again.
	bi.ClearFailure(side[0])
	if side[0].Status.Invalid() || child[1].Status.Invalid() || bi.BestHeader() != child[1] {
		t.Errorf("after ClearFailure best at %d", bi.BestHeader().Height)
	}
	if bi.Len() != 1+5+3+1+2 {
		t.Errorf("Len = %d", bi.Len())
	}
}

func TestChainWork(t *testing.T) {
	bi := NewBlockIndex(params.RegTest())
	nodes := branch(t, bi, bi.Genesis(), 10, 0)
	for _, n := range nodes {
		want := big.NewInt(2 * int64(n.Height+1)) // 2 per regtest block, genesis included
		if n.ChainWork.Big().Cmp(want) != 0 {
			t.Errorf("height %d chainwork %s", n.Height, n.ChainWork)
		}
	}
}

func TestOrphanAndDuplicate(t *testing.T) {
	bi := NewBlockIndex(params.RegTest())
	h := wire.Header{Version: 4, PrevBlock: wire.Hash{1}, Bits: 0x207fffff}
	_, err := bi.AddHeader(h)
	if !errors.Is(err, ErrOrphanHeader) || Reason(err) != "prev-blk-not-found" {
		t.Fatalf("orphan: %v", err)
	}
	if bi.Len() != 1 {
		t.Fatal("orphan was added")
	}
	a := branch(t, bi, bi.Genesis(), 1, 0)[0]
	again, err := bi.AddHeader(a.Header)
	if err != nil || again != a || bi.Len() != 2 {
		t.Fatal("re-adding a header did not return the existing node")
	}
}

func TestChain(t *testing.T) {
	bi := NewBlockIndex(params.RegTest())
	g := bi.Genesis()
	main := branch(t, bi, g, 10, 0)
	side := branch(t, bi, main[3], 8, 7) // heights 5..12 off height 4

	var c Chain
	if c.Tip() != nil || c.Height() != -1 || c.Genesis() != nil || c.At(0) != nil {
		t.Fatal("empty chain")
	}
	c.SetTip(main[9])
	if c.Tip() != main[9] || c.Height() != 10 || c.Genesis() != g {
		t.Fatal("SetTip main")
	}
	for _, n := range main {
		if c.At(n.Height) != n || !c.Contains(n) {
			t.Fatalf("main height %d missing", n.Height)
		}
	}
	if c.Next(main[2]) != main[3] || c.Next(main[9]) != nil || c.Next(side[0]) != nil {
		t.Error("Next")
	}
	if c.FindFork(side[7]) != main[3] || c.FindFork(main[5]) != main[5] {
		t.Error("Chain.FindFork")
	}
	// Reorg to the longer side branch.
	c.SetTip(side[7])
	if c.Height() != 12 || c.Contains(main[4]) || !c.Contains(main[3]) || !c.Contains(side[0]) {
		t.Fatal("reorg")
	}
	for _, n := range side {
		if c.At(n.Height) != n {
			t.Fatalf("side height %d missing", n.Height)
		}
	}
	// Back to a shorter tip.
	c.SetTip(main[1])
	if c.Height() != 2 || c.Tip() != main[1] || c.At(3) != nil || c.Contains(side[0]) {
		t.Fatal("rewind")
	}
	c.SetTip(main[9])
	if c.At(5) != main[4] {
		t.Fatal("re-extend")
	}
	c.SetTip(nil)
	if c.Tip() != nil {
		t.Fatal("clear")
	}
}

func TestInsertAllAndDirty(t *testing.T) {
	p := params.RegTest()
	src := NewBlockIndex(p)
	main := branch(t, src, src.Genesis(), 30, 0)
	side := branch(t, src, main[9], 5, 9)
	src.MarkInvalid(side[1], "bad-cb-amount")
	src.AddStatus(main[0], StatusHaveData|StatusDataValid)

	var entries []IndexEntry
	for _, n := range src.TakeDirty() {
		entries = append(entries, IndexEntry{Header: n.Header, Status: n.Status, RejectReason: n.RejectReason})
	}
	if len(entries) != src.Len() {
		t.Fatalf("%d dirty, %d nodes", len(entries), src.Len())
	}
	if len(src.TakeDirty()) != 0 {
		t.Fatal("dirty set not cleared")
	}
	r := rand.New(rand.NewPCG(5, 6))
	r.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	// An entry whose parent is unknown is skipped and reported, and so is
	// its child: neither can be looked up.
	orphan := wire.Header{PrevBlock: wire.Hash{9}}
	child := wire.Header{PrevBlock: orphan.BlockHash()}
	entries = append(entries, IndexEntry{Header: child}, IndexEntry{Header: orphan})

	dst := NewBlockIndex(p)
	err := dst.InsertAll(entries)
	if !errors.Is(err, ErrOrphanHeader) {
		t.Fatalf("InsertAll: %v", err)
	}
	if dst.Len() != src.Len() {
		t.Fatalf("loaded %d nodes, want %d", dst.Len(), src.Len())
	}
	if dst.Lookup(orphan.BlockHash()) != nil || dst.Lookup(child.BlockHash()) != nil {
		t.Fatal("an entry that does not link is in the index")
	}
	n := 0
	dst.ForEach(func(*BlockNode) bool { n++; return true })
	if n != src.Len() {
		t.Fatalf("ForEach visits %d nodes, want %d", n, src.Len())
	}
	src.ForEach(func(n *BlockNode) bool {
		m := dst.Lookup(n.Hash)
		if m == nil || m.Height != n.Height || m.ChainWork.Cmp(n.ChainWork) != 0 || m.Status != n.Status || m.RejectReason != n.RejectReason {
			t.Errorf("node %d differs after reload", n.Height)
		}
		return true
	})
	if dst.BestHeader().Hash != src.BestHeader().Hash {
		t.Error("best header differs after reload")
	}
}

func TestBlockStatusString(t *testing.T) {
	if s := (StatusHeaderValid | StatusFailedParent).String(); s != "header-valid|failed-parent" {
		t.Error(s)
	}
	if s := BlockStatus(0).String(); s != "none" {
		t.Error(s)
	}
}

func BenchmarkAncestor(b *testing.B) {
	bi := NewBlockIndex(params.RegTest())
	nodes := branch(b, bi, bi.Genesis(), 100000, 0)
	tip := nodes[len(nodes)-1]
	i := int32(0)
	for b.Loop() {
		tip.Ancestor(i % tip.Height)
		i += 7919
	}
}

func BenchmarkAddHeader(b *testing.B) {
	bi := NewBlockIndex(params.RegTest())
	tip := bi.Genesis()
	for b.Loop() {
		n, err := bi.AddHeader(wire.Header{Version: 4, PrevBlock: tip.Hash, Time: tip.Header.Time + 1, Bits: 0x207fffff})
		if err != nil {
			b.Fatal(err)
		}
		tip = n
	}
}
