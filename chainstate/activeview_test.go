package chainstate

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/testkit/chaingen"
	"utxod/validate"
	"utxod/wire"
)

// TestMain checks every publication of every chainstate the package's
// tests build against the locked answers (checkViewLocked).
func TestMain(m *testing.M) {
	verifyView = checkViewLocked
	os.Exit(m.Run())
}

// checkViewLocked compares the view just published with the chain (node,
// status, reject reason) at the top 2048 heights and every 61st below,
// infoLocked's whole answer at the tip and every 997th height, and panics
// on a difference: a status change that did not reach the view. cs.mu is
// held.
func checkViewLocked(cs *Chainstate) {
	v := cs.view.load()
	tip := cs.chain.Tip()
	if v.height != tip.Height {
		panic(fmt.Sprintf("view at height %d, chain at %d", v.height, tip.Height))
	}
	for h := int32(0); h <= tip.Height; h++ {
		if h < tip.Height-2048 && h%61 != 0 {
			continue
		}
		n, e := cs.chain.At(h), v.at(h)
		if n == nil && e == nil {
			continue
		}
		if n == nil || e == nil || e.node != n || e.status != n.Status || e.reason != n.RejectReason {
			panic(fmt.Sprintf("view at height %d: %+v, chain %+v", h, e, n))
		}
		if h == tip.Height || h%997 == 0 {
			if got, want := v.info(e), cs.infoLocked(n); !reflect.DeepEqual(got, want) {
				panic(fmt.Sprintf("view at height %d: %+v, locked %+v", h, got, want))
			}
		}
	}
}

// lockedAt is AtHeight as it was before the view: under cs.mu.
func lockedAt(cs *Chainstate, h int32) (BlockInfo, bool) {
	n := cs.chain.At(h)
	if n == nil {
		return BlockInfo{}, false
	}
	return cs.infoLocked(n), true
}

// viewIndex builds branches of header-only nodes: AddHeader checks no
// proof of work, so the headers need only link.
type viewIndex struct {
	bi    *validate.BlockIndex
	nonce uint32
}

func newViewIndex() *viewIndex {
	return &viewIndex{bi: validate.NewBlockIndex(params.RegTest())}
}

// branch returns n new nodes on top of parent.
func (x *viewIndex) branch(t *testing.T, parent *validate.BlockNode, n int) []*validate.BlockNode {
	t.Helper()
	out := make([]*validate.BlockNode, 0, n)
	for range n {
		x.nonce++
		h := wire.Header{Version: 1, PrevBlock: parent.Hash, Time: parent.Header.Time + 600 - x.nonce%7*60, Bits: parent.Header.Bits, Nonce: x.nonce}
		node, err := x.bi.AddHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, node)
		parent = node
	}
	return out
}

// viewWant is what a view must answer at one height, recorded from the
// chain when the view was published.
type viewWant struct {
	node   *validate.BlockNode
	status validate.BlockStatus
	reason string
	mtp    int64
	next   wire.Hash
}

func recordChain(c *validate.Chain) []viewWant {
	out := make([]viewWant, c.Height()+1)
	for h := range out {
		n := c.At(int32(h))
		if n == nil {
			continue
		}
		out[h] = viewWant{node: n, status: n.Status, reason: n.RejectReason, mtp: n.MedianTimePast()}
		if next := c.At(int32(h) + 1); next != nil {
			out[h].next = next.Hash
		}
	}
	return out
}

// checkView compares v with want at every height and one above.
func checkView(t *testing.T, what string, v *activeView, want []viewWant) {
	t.Helper()
	if int(v.height) != len(want)-1 {
		t.Fatalf("%s: view height %d, want %d", what, v.height, len(want)-1)
	}
	for h, w := range want {
		e := v.at(int32(h))
		if w.node == nil {
			if e != nil {
				t.Fatalf("%s: height %d has a block, want none", what, h)
			}
			continue
		}
		if e == nil {
			t.Fatalf("%s: height %d missing", what, h)
		}
		bi := v.info(e)
		n := w.node
		if bi.Hash != n.Hash || bi.Header != n.Header || bi.Height != int32(h) || bi.ChainWork.Cmp(n.ChainWork) != 0 ||
			bi.Status != w.status || bi.RejectReason != w.reason || bi.MedianTime != w.mtp || !bi.InActiveChain ||
			bi.Next != w.next || bi.TipHeight != v.height {
			t.Fatalf("%s: height %d is %+v, want %+v", what, h, bi, w)
		}
	}
	if v.at(v.height+1) != nil || v.at(-1) != nil {
		t.Fatalf("%s: a block outside 0..%d", what, v.height)
	}
}

// TestActiveView drives the writer through extensions, reorganisations and
// status changes across leaf (128) and mid (16,384) boundaries; after each
// step the new view must equal the chain, and every view published before
// must still answer what it answered when it was published.
func TestActiveView(t *testing.T) {
	x := newViewIndex()
	g := x.bi.Genesis()
	main := x.branch(t, g, midSize*leafSize+300) // tips up to 16,684
	at := func(h int) *validate.BlockNode {
		if h == 0 {
			return g
		}
		return main[h-1]
	}
	var fork1, fork2, fork3 []*validate.BlockNode
	type step struct {
		name string
		do   func(c *validate.Chain, w *viewWriter)
	}
	steps := []step{
		{"genesis", func(c *validate.Chain, w *viewWriter) { c.SetTip(g) }},
		{"extend by one", func(c *validate.Chain, w *viewWriter) { c.SetTip(at(1)) }},
		{"extend to 127", func(c *validate.Chain, w *viewWriter) { c.SetTip(at(127)) }},
		{"extend across a leaf", func(c *validate.Chain, w *viewWriter) { c.SetTip(at(128)) }},
		{"extend to 300", func(c *validate.Chain, w *viewWriter) { c.SetTip(at(300)) }},
		{"reorg to a shorter branch", func(c *validate.Chain, w *viewWriter) {
			fork1 = x.branch(t, at(250), 20) // tip 270
			c.SetTip(fork1[19])
		}},
		{"extend the short branch over heights published before", func(c *validate.Chain, w *viewWriter) {
			fork1 = append(fork1, x.branch(t, fork1[19], 60)...) // tip 330
			c.SetTip(fork1[79])
		}},
		{"reorg back to a longer branch", func(c *validate.Chain, w *viewWriter) { c.SetTip(at(400)) }},
		{"status of a deep block", func(c *validate.Chain, w *viewWriter) {
			x.bi.ClearStatus(at(5), validate.StatusHeaderValid)
			w.touch(at(5))
		}},
		{"status of a block off the chain changes nothing", func(c *validate.Chain, w *viewWriter) {
			x.bi.ClearStatus(fork1[3], validate.StatusHeaderValid)
			w.touch(fork1[3])
		}},
		{"invalid from a height", func(c *validate.Chain, w *viewWriter) {
			x.bi.MarkInvalid(at(390), "bad-test")
			w.touchFrom(390)
		}},
		{"extend across a mid", func(c *validate.Chain, w *viewWriter) {
			x.bi.ClearFailure(at(390))
			w.touchFrom(390)
			c.SetTip(at(midSize*leafSize + 10))
		}},
		{"reorg across a mid", func(c *validate.Chain, w *viewWriter) {
			fork2 = x.branch(t, at(midSize*leafSize-5), 40)
			c.SetTip(fork2[39])
		}},
		{"many statuses (rescan)", func(c *validate.Chain, w *viewWriter) {
			for h := 1; h <= touchedMax+1; h++ {
				x.bi.AddStatus(at(h), validate.StatusHaveData)
				w.touch(at(h))
			}
		}},
		{"shrink, then extend a new branch past the old tip", func(c *validate.Chain, w *viewWriter) {
			c.SetTip(at(1000))
			w.publish(c)
			fork3 = x.branch(t, at(990), midSize*leafSize)
			c.SetTip(fork3[len(fork3)-1])
		}},
		{"one block back", func(c *validate.Chain, w *viewWriter) { c.SetTip(fork3[len(fork3)-2]) }},
	}
	var c validate.Chain
	w := newViewWriter()
	type held struct {
		name string
		v    *activeView
		want []viewWant
	}
	var views []held
	for _, s := range steps {
		s.do(&c, w)
		w.publish(&c)
		v := w.load()
		want := recordChain(&c)
		checkView(t, s.name, v, want)
		views = append(views, held{s.name, v, want})
		for _, old := range views {
			checkView(t, "after "+s.name+", the view of "+old.name, old.v, old.want)
		}
	}
	// Publishing an unchanged chain keeps the view.
	before := w.load()
	w.publish(&c)
	if w.load() != before {
		t.Fatal("an unchanged chain published a new view")
	}
}

// TestActiveViewDetached: a snapshot base without its headers is a chain
// with one node at its height and none below, as infoLocked sees it.
func TestActiveViewDetached(t *testing.T) {
	x := newViewIndex()
	base := x.bi.AddDetached(wire.Hash{7}, 840_000, 0)
	var c validate.Chain
	c.SetTip(base)
	w := newViewWriter()
	w.publish(&c)
	checkView(t, "detached base", w.load(), recordChain(&c))
	if n := len(w.mids); n != 840_000>>(leafBits+midBits)+1 {
		t.Fatalf("%d mids", n)
	}
	for _, m := range w.mids[:len(w.mids)-1] {
		if m != nil {
			t.Fatal("pieces allocated below the base")
		}
	}
}

// viewChain is a generated regtest chain with reorganisations.
func viewChain(t *testing.T, blocks, reorgs int) [][]byte {
	t.Helper()
	data, _, err := chaingen.Generate(chaingen.Config{Profile: chaingen.ProfileModern, Seed: 11, Blocks: blocks, Reorgs: reorgs, MaxTxs: 4})
	if err != nil {
		t.Fatal(err)
	}
	raws, err := wire.ReadAllBlocks(bytes.NewReader(data), params.RegTest().Magic)
	if err != nil {
		t.Fatal(err)
	}
	return raws
}

// newKeeping is a regtest chainstate that prunes block data 8 blocks under
// the tip, so that active blocks change status inside short chains.
func newKeeping(t *testing.T) *Chainstate {
	t.Helper()
	p := params.RegTest()
	cs, err := New(Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: store.NewMem(), KeepBlocks: 8})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestViewEqualsLocked: after each block of a chain with reorganisations
// and pruning, Tip and AtHeight at every height (and one above) equal
// what the locked path answers.
func TestViewEqualsLocked(t *testing.T) {
	raws := viewChain(t, 60, 2)
	cs := newKeeping(t)
	reorgs := 0
	for i, raw := range raws {
		before := cs.Tip()
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		cs.mu.RLock()
		wantTip := cs.infoLocked(cs.chain.Tip())
		want := make([]BlockInfo, cs.chain.Height()+2)
		ok := make([]bool, len(want))
		for h := range want {
			want[h], ok[h] = lockedAt(cs, int32(h))
		}
		cs.mu.RUnlock()
		if tip := cs.Tip(); !reflect.DeepEqual(tip, wantTip) {
			t.Fatalf("block %d: tip %+v, locked %+v", i, tip, wantTip)
		}
		for h := range want {
			got, gok := cs.AtHeight(int32(h))
			if gok != ok[h] || !reflect.DeepEqual(got, want[h]) {
				t.Fatalf("block %d, height %d: %v %+v, locked %v %+v", i, h, gok, got, ok[h], want[h])
			}
		}
		if at, ok := cs.AtHeight(before.Height); ok && at.Hash != before.Hash {
			reorgs++
		}
	}
	if reorgs == 0 {
		t.Fatal("the chain never reorganised")
	}
	if tip := cs.Tip(); tip.Height < 60 {
		t.Fatalf("tip %d", tip.Height)
	}
	pruned, _ := cs.AtHeight(1)
	if pruned.Status.Has(validate.StatusHaveData) || !pruned.Status.Has(validate.StatusConnected) {
		t.Fatalf("block 1 status %v: want connected, data pruned", pruned.Status)
	}
}

// TestViewConcurrentReaders (run with -race): readers call Tip and AtHeight
// and walk held views while blocks connect and the chain reorganises. Each
// answer must be consistent in itself, each view a chain (every block the
// parent of the next), and the tip never behind a tip seen before by the
// same reader, except by a reorganisation (a different block at that height).
func TestViewConcurrentReaders(t *testing.T) {
	raws := viewChain(t, 48, 2)
	cs := newKeeping(t)
	var done atomic.Bool
	var wg sync.WaitGroup
	var reads atomic.Int64
	for g := range 3 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 2))
			for !done.Load() {
				tip := cs.Tip()
				if !tip.InActiveChain || tip.TipHeight != tip.Height || tip.Next != (wire.Hash{}) {
					t.Errorf("tip %+v", tip)
					return
				}
				h := rng.Int32N(tip.Height + 2)
				if b, ok := cs.AtHeight(h); ok {
					if b.Height != h || !b.InActiveChain || b.TipHeight < h || (b.Next == (wire.Hash{})) != (b.TipHeight == h) {
						t.Errorf("height %d: %+v", h, b)
						return
					}
				}
				v := cs.view.load()
				for k := int32(1); k <= v.height; k++ {
					child, parent := v.at(k), v.at(k-1)
					if child.node.Header.PrevBlock != parent.node.Hash || v.info(parent).Next != child.node.Hash {
						t.Errorf("view at %d: height %d does not follow %d", v.height, k, k-1)
						return
					}
				}
				reads.Add(1)
			}
		})
	}
	for i, raw := range raws {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Errorf("block %d: %v", i, err)
		}
	}
	done.Store(true)
	wg.Wait()
	t.Logf("%d blocks, %d reads", len(raws), reads.Load())
}
