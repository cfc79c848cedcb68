package chainstate

import (
	"math"
	"slices"
	"sync/atomic"

	"utxod/validate"
)

// The active chain as Tip and AtHeight read it, without the chainstate's
// lock: an address lookup dates each row by height, and must not wait for
// the block being validated under the write lock.
//
// Contract. A published activeView is never modified; it describes the
// chain as it was when a write hold of cs.mu ended (cs.unlock publishes
// before it unlocks), so it never shows the middle of a block, a reorg or a
// pipelined import (whose unverified blocks stay invisible), and a reader
// that saw a locked answer finds a view at least that new. Status and
// RejectReason are copies taken at publication: they do change for active
// blocks (StatusConnected, StatusHaveUndo and StatusScriptsAssumed as a
// block connects, StatusHaveData cleared when its data leaves the reorg
// window), so every index status change in this package goes through
// addStatus, clearStatus or markInvalid, which tell the writer.
//
// Layout. Heights map to mids of midSize leaves of leafSize entries. The
// writer (under cs.mu) keeps a draft sharing these pieces with the
// published views and writes a slot in place only where no published view
// can read it: the piece was created since the last publication, or the
// slot is above every height ever published. Otherwise it copies the leaf
// (and the mid and directory above it), so extending the chain writes one
// slot, and a reorganisation or a status change copies the pieces it
// rewrites.

const (
	leafBits = 7
	leafSize = 1 << leafBits // entries per leaf (5 KiB)
	midBits  = 7
	midSize  = 1 << midBits // leaves per mid: 16,384 heights
)

// viewEntry is one height of the active chain. The node's Hash, Header,
// Height, Parent and ChainWork are set when the block index creates it and
// never change, so readers use them without the lock; its Status and
// RejectReason change under the lock and are copied here.
type viewEntry struct {
	node   *validate.BlockNode // nil: no node at this height (a detached snapshot base's ancestors)
	mtp    int64
	status validate.BlockStatus
	reason string
}

type viewLeaf struct {
	gen uint64 // the writer generation that created it
	e   [leafSize]viewEntry
}

type viewMid struct {
	gen    uint64
	leaves [midSize]*viewLeaf
}

// activeView is one published picture of the active chain, heights 0 to
// height.
type activeView struct {
	height int32
	mids   []*viewMid
}

// at returns the entry at h, or nil above the tip or where the chain has no
// node.
func (v *activeView) at(h int32) *viewEntry {
	if h < 0 || h > v.height {
		return nil
	}
	m := v.mids[h>>(leafBits+midBits)]
	if m == nil {
		return nil
	}
	l := m.leaves[(h>>leafBits)&(midSize-1)]
	if l == nil {
		return nil
	}
	e := &l.e[h&(leafSize-1)]
	if e.node == nil {
		return nil
	}
	return e
}

// info is infoLocked's answer for e, from this view.
func (v *activeView) info(e *viewEntry) BlockInfo {
	n := e.node
	bi := BlockInfo{
		Hash:          n.Hash,
		Header:        n.Header,
		Height:        n.Height,
		ChainWork:     n.ChainWork,
		Status:        e.status,
		RejectReason:  e.reason,
		Stats:         n.Stats, // set before the block joined the active chain
		MedianTime:    e.mtp,
		InActiveChain: true,
		TipHeight:     v.height,
	}
	if tip := v.at(v.height); tip != nil {
		bi.TipHash = tip.node.Hash
	}
	if next := v.at(n.Height + 1); next != nil {
		bi.Next = next.node.Hash
	}
	return bi
}

// touchedMax bounds the nodes remembered between publications; beyond it
// (a long import under one hold) the next publication compares every
// height instead.
const touchedMax = 4096

// viewWriter publishes activeViews. Only cur is read without cs.mu.
type viewWriter struct {
	cur atomic.Pointer[activeView]

	mids    []*viewMid // the draft; it never shrinks
	midsGen uint64     // generation of mids' backing array
	height  int32      // the draft's tip height
	maxPub  int32      // the highest height any published view has had
	gen     uint64     // generation of pieces not yet published

	touched []*validate.BlockNode // status changed since the last publication
	from    int32                 // rewrite every height from here (markInvalid)
	rescan  bool                  // compare every height
}

func newViewWriter() *viewWriter {
	return &viewWriter{height: -1, maxPub: -1, gen: 1, from: math.MaxInt32}
}

// load returns the current view.
func (w *viewWriter) load() *activeView { return w.cur.Load() }

// touch notes that n's status changed.
func (w *viewWriter) touch(n *validate.BlockNode) {
	if w.rescan {
		return
	}
	w.touched = append(w.touched, n)
	if len(w.touched) > touchedMax {
		w.rescan, w.touched = true, nil
	}
}

// touchFrom notes that every active block from height h up may have
// changed status.
func (w *viewWriter) touchFrom(h int32) { w.from = min(w.from, h) }

// draft returns the draft's entry at h (zero if never written).
func (w *viewWriter) draft(h int32) viewEntry {
	mi := int(h >> (leafBits + midBits))
	if h < 0 || mi >= len(w.mids) || w.mids[mi] == nil {
		return viewEntry{}
	}
	l := w.mids[mi].leaves[(h>>leafBits)&(midSize-1)]
	if l == nil {
		return viewEntry{}
	}
	return l.e[h&(leafSize-1)]
}

// publish brings the draft to chain c and publishes it if anything a reader
// sees changed: the heights above the last block both share, the touched
// nodes still on c, and the tip height. Callers hold cs.mu exclusively.
func (w *viewWriter) publish(c *validate.Chain) {
	tip := c.Height()
	from := int32(0)
	if !w.rescan {
		// Nodes are unique and a chain is a path, so below the highest
		// height where draft and chain agree they agree everywhere.
		h := min(tip, w.height)
		for h >= 0 && w.draft(h).node != c.At(h) {
			h--
		}
		from = min(h+1, w.from)
	}
	changed := tip != w.height
	mtp := medianWindow{c: c}
	for h := from; h <= tip; h++ {
		changed = w.refresh(h, c.At(h), &mtp) || changed
	}
	for _, n := range w.touched {
		if n.Height < from && c.Contains(n) {
			changed = w.refresh(n.Height, n, nil) || changed
		}
	}
	w.touched, w.from, w.rescan = w.touched[:0], math.MaxInt32, false
	w.height = tip
	if !changed {
		return
	}
	w.cur.Store(&activeView{height: tip, mids: w.mids})
	w.maxPub = max(w.maxPub, tip)
	w.gen++
}

// refresh makes the draft's entry at h describe n as it is now, reporting
// whether it had to change; mtp, when given, is at or just past h's.
func (w *viewWriter) refresh(h int32, n *validate.BlockNode, mtp *medianWindow) bool {
	old := w.draft(h)
	if n == nil {
		if old.node == nil {
			return false
		}
		w.set(h, viewEntry{})
		return true
	}
	if old.node == n && old.status == n.Status && old.reason == n.RejectReason {
		return false
	}
	e := viewEntry{node: n, mtp: old.mtp, status: n.Status, reason: n.RejectReason}
	if old.node != n {
		if mtp != nil {
			e.mtp = mtp.at(h)
		} else {
			e.mtp = n.MedianTimePast()
		}
	}
	w.set(h, e)
	return true
}

// set writes the draft's entry at h, copying the leaf, mid and directory
// that a published view may read.
func (w *viewWriter) set(h int32, e viewEntry) {
	mi, li, ei := int(h>>(leafBits+midBits)), int(h>>leafBits)&(midSize-1), int(h)&(leafSize-1)
	if mi >= len(w.mids) {
		if e.node == nil {
			return
		}
		// Slots past the draft's length were never in a published view.
		grown := append(w.mids, make([]*viewMid, mi+1-len(w.mids))...)
		if len(w.mids) == 0 || &grown[0] != &w.mids[0] {
			w.midsGen = w.gen // a new array
		}
		w.mids = grown
	}
	m := w.mids[mi]
	var l *viewLeaf
	if m != nil {
		l = m.leaves[li]
	}
	if l != nil && (l.gen == w.gen || h > w.maxPub) {
		l.e[ei] = e
		return
	}
	if l == nil && e.node == nil {
		return
	}
	nl := &viewLeaf{gen: w.gen}
	if l != nil {
		nl.e = l.e
	}
	nl.e[ei] = e
	leafStart := int32(mi)<<(leafBits+midBits) | int32(li)<<leafBits
	if m != nil && (m.gen == w.gen || leafStart > w.maxPub) {
		m.leaves[li] = nl
		return
	}
	nm := &viewMid{gen: w.gen}
	if m != nil {
		nm.leaves = m.leaves
	}
	nm.leaves[li] = nl
	if w.midsGen != w.gen && int32(mi)<<(leafBits+midBits) <= w.maxPub {
		w.mids = slices.Clone(w.mids)
		w.midsGen = w.gen
	}
	w.mids[mi] = nm
}

// medianWindow is BlockNode.MedianTimePast for ascending heights of one
// chain, reading each block's time once rather than eleven times (a
// publication after the open of a ~900k-block chain asks for every height).
type medianWindow struct {
	c     *validate.Chain
	times [11]int64 // ring: height x's time at x%11
	next  int32     // the height after the last read; 0: nothing read
	run   int32     // consecutive heights with a node ending at next-1
}

// at returns the median time past of the chain's node at h (not nil).
func (m *medianWindow) at(h int32) int64 {
	if m.next == 0 || h < m.next-1 || h > m.next+10 {
		m.next, m.run = max(0, h-10), 0
	}
	for ; m.next <= h; m.next++ {
		n := m.c.At(m.next)
		if n == nil {
			m.run = 0
			continue
		}
		if n.Parent == nil || n.Parent != m.c.At(m.next-1) {
			m.run = 0 // the parent links stop here (genesis, a detached base)
		}
		m.times[m.next%11] = int64(n.Header.Time)
		m.run++
	}
	var s [11]int64
	k := min(m.run, 11)
	for i := range k {
		s[i] = m.times[(h-i)%11]
	}
	slices.Sort(s[:k])
	return s[k/2]
}
