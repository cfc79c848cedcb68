package validate

import (
	"fmt"
	"sort"
	"strings"

	"utxod/params"
	"utxod/wire"
)

// This file follows Bitcoin Core's CBlockIndex and CChain (src/chain.h,
// src/chain.cpp) and the header bookkeeping of BlockManager.

// BlockStatus is a set of validation and storage flags of a block-index
// entry. The values are persisted: never renumber them.
type BlockStatus uint32

const (
	// StatusHeaderValid: the header passed CheckBlockHeader and
	// ContextualCheckBlockHeader (Core's BLOCK_VALID_TREE).
	StatusHeaderValid BlockStatus = 1 << iota
	// StatusHaveData: the full block is stored (BLOCK_HAVE_DATA).
	StatusHaveData
	// StatusDataValid: the block passed the context-free and contextual block
	// checks (BLOCK_VALID_TRANSACTIONS).
	StatusDataValid
	// StatusConnected: ConnectBlock succeeded, scripts included
	// (BLOCK_VALID_SCRIPTS).
	StatusConnected
	// StatusHaveUndo: the block's undo data is stored (BLOCK_HAVE_UNDO).
	StatusHaveUndo
	// StatusFailed: the block itself is invalid (BLOCK_FAILED_VALID);
	// RejectReason says why.
	StatusFailed
	// StatusFailedParent: the block descends from an invalid block
	// (BLOCK_FAILED_CHILD).
	StatusFailedParent
	// StatusScriptsAssumed: the block was connected without verifying its
	// input scripts, under assume-valid (AssumeValid); Core keeps no such
	// flag, utxod keeps it to report how far scripts were assumed.
	StatusScriptsAssumed
)

// StatusFailedMask is the set of flags that make a block invalid.
const StatusFailedMask = StatusFailed | StatusFailedParent

// Invalid reports whether s marks the block or an ancestor as invalid.
func (s BlockStatus) Invalid() bool { return s&StatusFailedMask != 0 }

// Has reports whether every flag of f is set in s.
func (s BlockStatus) Has(f BlockStatus) bool { return s&f == f }

// String lists the set flags, e.g. "header-valid|have-data".
func (s BlockStatus) String() string {
	names := []string{"header-valid", "have-data", "data-valid", "connected", "have-undo", "failed", "failed-parent", "scripts-assumed"}
	var parts []string
	for i, n := range names {
		if s&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if rest := s &^ (1<<len(names) - 1); rest != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", uint32(rest)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// ErrOrphanHeader is returned (possibly wrapped) when a header's parent is
// not in the index. It is a *RuleError with Core's reason
// "prev-blk-not-found"; headers whose parent is unknown are kept outside the
// index by the caller.
var ErrOrphanHeader = &RuleError{Reason: "prev-blk-not-found", Detail: "parent header unknown"}

// BlockNode is one entry of the block index: a header linked to its parent,
// with its height, cumulative chain work and validation status. Nodes are
// owned by a BlockIndex, which allocates them in chunks that never move
// (arena.go); change Status through the index so the best header and the
// dirty set stay right.
type BlockNode struct {
	Hash      wire.Hash
	Header    wire.Header
	ChainWork Work // sum of CalcWork over this block and its ancestors
	Parent    *BlockNode
	Height    int32
	Status    BlockStatus
	// Stats are the block's size figures, known once its data was
	// accepted (zero before, and for blocks persisted without them). Set
	// once, before the block can join the active chain.
	Stats BlockStats

	state        nodeState  // here, in the padding after Stats: 208 bytes a node
	RejectReason string     // Core reject reason when Status has StatusFailed
	skip         *BlockNode // Core's pskip: an ancestor chosen for O(log n) lookups
	seq          uint64     // arrival order; ties in chain work keep the lower
}

// nodeState is a node's bookkeeping inside its index.
type nodeState uint8

const (
	nodeDirty    nodeState = 1 << iota // in the dirty list (TakeDirty)
	nodeUnlinked                       // loaded, not yet linked to its parent (Load)
	nodeDead                           // loaded, never linked: its ancestry is missing
)

// skipHeight is Core's GetSkipHeight: the height a node's skip pointer jumps
// back to.
func skipHeight(height int32) int32 {
	if height < 2 {
		return 0
	}
	invertLowestOne := func(n int32) int32 { return n & (n - 1) }
	if height&1 != 0 {
		return invertLowestOne(invertLowestOne(height-1)) + 1
	}
	return invertLowestOne(height)
}

// Ancestor returns the ancestor of n at height (n itself at its own height),
// or nil if height is negative or above n's. It follows Core's
// CBlockIndex::GetAncestor skip list and takes O(log n) steps.
func (n *BlockNode) Ancestor(height int32) *BlockNode {
	if n == nil || height > n.Height || height < 0 {
		return nil
	}
	walk := n
	hw := n.Height
	for hw > height {
		hs := skipHeight(hw)
		hsPrev := skipHeight(hw - 1)
		if walk.skip != nil && (hs == height || (hs > height && !(hsPrev < hs-2 && hsPrev >= height))) {
			// Only follow skip if parent.skip isn't better than skip.parent.
			walk = walk.skip
			hw = hs
		} else {
			if walk.Parent == nil {
				return nil // not linked down to height; cannot happen in an index
			}
			walk = walk.Parent
			hw--
		}
	}
	return walk
}

// medianTimeSpan is the number of blocks whose times make the median time
// past (Core's nMedianTimeSpan).
const medianTimeSpan = 11

// MedianTimePast returns the median of the timestamps of n and its up to ten
// predecessors (Core's GetMedianTimePast; with an even count the upper
// middle element).
func (n *BlockNode) MedianTimePast() int64 {
	var times [medianTimeSpan]int64
	k := 0
	for b := n; b != nil && k < medianTimeSpan; b = b.Parent {
		times[k] = int64(b.Header.Time)
		k++
	}
	s := times[:k]
	// Insertion sort: at most 11 elements.
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if k == 0 {
		return 0
	}
	return s[k/2]
}

// IsAncestorOf reports whether n is a (non-strict) ancestor of d.
func (n *BlockNode) IsAncestorOf(d *BlockNode) bool {
	return n != nil && d != nil && d.Ancestor(n.Height) == n
}

// BlockIndex is the tree of known headers, keyed by hash and rooted at the
// network's genesis block. It tracks the header with the most work among the
// valid ones (BestHeader). A BlockIndex is not safe for concurrent use: the
// caller serializes access (Core's cs_main).
type BlockIndex struct {
	params  *params.Params
	nodes   arena     // every node, in allocation order
	byHash  hashTable // hash → position in nodes
	live    int       // nodes neither unlinked nor dead
	genesis *BlockNode
	best    *BlockNode
	nextSeq uint64
	dirty   []*BlockNode

	workBits uint32 // the last CalcWork, cached: bits change once per
	work     Work   // difficulty period, so a load computes it ~once per 2016 headers
}

// NewBlockIndex returns an index holding only p's genesis block, marked
// header-valid, data-valid and connected.
func NewBlockIndex(p *params.Params) *BlockIndex {
	bi := &BlockIndex{params: p, byHash: newHashTable()}
	h, _ := wire.ParseHeader(p.GenesisBlock) // a short genesis leaves a zero header
	g := bi.newNode(h, h.BlockHash(), nil)
	g.Status = StatusHeaderValid | StatusDataValid | StatusConnected
	bi.genesis = g
	bi.best = g
	return bi
}

// Params returns the network parameters the index was built for.
func (bi *BlockIndex) Params() *params.Params { return bi.params }

// Genesis returns the genesis node.
func (bi *BlockIndex) Genesis() *BlockNode { return bi.genesis }

// Len returns the number of nodes, genesis included.
func (bi *BlockIndex) Len() int { return bi.live }

// Lookup returns the node for hash, or nil.
func (bi *BlockIndex) Lookup(hash wire.Hash) *BlockNode {
	n := bi.find(hash)
	if n == nil || n.state&(nodeUnlinked|nodeDead) != 0 {
		return nil
	}
	return n
}

// find returns the node for hash, linked or not.
func (bi *BlockIndex) find(hash wire.Hash) *BlockNode {
	if i, ok := bi.byHash.find(&bi.nodes, hash); ok {
		return bi.nodes.at(i)
	}
	return nil
}

// BestHeader returns the node with the most chain work among those not
// marked invalid; among equal work the one added first wins, like Core's
// pindexBestHeader.
func (bi *BlockIndex) BestHeader() *BlockNode { return bi.best }

// alloc returns a zero node registered under hash.
func (bi *BlockIndex) alloc(hash wire.Hash) *BlockNode {
	i, n := bi.nodes.alloc()
	n.Hash = hash
	bi.byHash.insert(&bi.nodes, hash, i)
	return n
}

// calcWork is CalcWork(bits) as Work, through a one-entry cache.
func (bi *BlockIndex) calcWork(bits uint32) Work {
	if bits != bi.workBits { // the zero cache is right: CalcWork(0) is 0
		bi.workBits, bi.work = bits, WorkFromBig(CalcWork(bits))
	}
	return bi.work
}

// link makes n a child of parent (nil for a root): height, chain work,
// skip pointer, inherited failure and arrival order.
func (bi *BlockIndex) link(n, parent *BlockNode) {
	n.Parent = parent
	n.seq = bi.nextSeq
	bi.nextSeq++
	bi.live++
	work := bi.calcWork(n.Header.Bits)
	if parent != nil {
		n.Height = parent.Height + 1
		n.ChainWork = parent.ChainWork.Add(work)
		n.skip = parent.Ancestor(skipHeight(n.Height))
		if parent.Status.Invalid() {
			n.Status |= StatusFailedParent
		}
	} else {
		n.ChainWork = work
	}
}

// markDirty adds n to the dirty list once.
func (bi *BlockIndex) markDirty(n *BlockNode) {
	if n.state&nodeDirty == 0 {
		n.state |= nodeDirty
		bi.dirty = append(bi.dirty, n)
	}
}

// newNode links a node for h under parent and registers it. It does not
// touch the best header.
func (bi *BlockIndex) newNode(h wire.Header, hash wire.Hash, parent *BlockNode) *BlockNode {
	n := bi.alloc(hash)
	n.Header = h
	bi.link(n, parent)
	bi.markDirty(n)
	return n
}

// each calls fn for every node in the index until fn returns false.
func (bi *BlockIndex) each(fn func(*BlockNode) bool) {
	bi.nodes.each(func(n *BlockNode) bool {
		return n.state&(nodeUnlinked|nodeDead) != 0 || fn(n)
	})
}

// Better reports whether a should be preferred to b as a chain tip: more
// chainwork, or equal work and seen first (Core's nSequenceId tie-break).
// A nil b loses to anything.
func Better(a, b *BlockNode) bool { return better(a, b) }

// better reports whether a should replace b as best header.
func better(a, b *BlockNode) bool {
	if b == nil {
		return true
	}
	c := a.ChainWork.Cmp(b.ChainWork)
	return c > 0 || (c == 0 && a.seq < b.seq)
}

// consider makes n the best header if it is valid and has more work.
func (bi *BlockIndex) consider(n *BlockNode) {
	if !n.Status.Invalid() && n.ChainWork.Cmp(bi.best.ChainWork) > 0 {
		bi.best = n
	}
}

// recomputeBest scans every node for the best valid header.
func (bi *BlockIndex) recomputeBest() {
	var best *BlockNode
	bi.each(func(n *BlockNode) bool {
		if !n.Status.Invalid() && better(n, best) {
			best = n
		}
		return true
	})
	if best == nil {
		best = bi.genesis // every node invalid: keep a non-nil answer
	}
	bi.best = best
}

// AddHeader links an already-checked header (see AcceptHeader) under its
// parent with status StatusHeaderValid, computing height and chain work. A
// header already present returns its node. An unknown parent returns
// ErrOrphanHeader. A child of an invalid node is marked StatusFailedParent.
func (bi *BlockIndex) AddHeader(h wire.Header) (*BlockNode, error) {
	return bi.Insert(h, StatusHeaderValid, "")
}

// Insert adds a header with a known status and reject reason, as when
// loading a persisted index; height and chain work are recomputed from the
// parent, which must already be present (else ErrOrphanHeader). If the
// header is already present its status and reason are replaced. Failure
// flags in status are kept as given (descendants added later inherit
// StatusFailedParent).
func (bi *BlockIndex) Insert(h wire.Header, status BlockStatus, reason string) (*BlockNode, error) {
	hash := h.BlockHash()
	if n := bi.Lookup(hash); n != nil {
		if n.Status != status || n.RejectReason != reason {
			wasInvalid := n.Status.Invalid()
			n.Status, n.RejectReason = status, reason
			bi.markDirty(n)
			if wasInvalid != status.Invalid() {
				bi.recomputeBest()
			}
		}
		return n, nil
	}
	parent := bi.Lookup(h.PrevBlock)
	if parent == nil {
		return nil, fmt.Errorf("%w: block %s, parent %s", ErrOrphanHeader, hash, h.PrevBlock)
	}
	n := bi.newNode(h, hash, parent)
	n.Status |= status
	n.RejectReason = reason
	bi.consider(n)
	return n, nil
}

// BlockStats are a block's size figures, kept in the block index so that
// they outlive the block's data: transactions, serialized size and weight
// (BIP141). The zero value means unknown.
type BlockStats struct {
	TxCount uint32
	Size    uint32
	Weight  uint32
}

// StatsOf computes b's BlockStats.
func StatsOf(b *wire.Block) BlockStats {
	stripped := wire.HeaderSize + wire.CompactSizeLen(uint64(len(b.Txs)))
	for i := range b.Txs {
		stripped += b.Txs[i].BaseSize()
	}
	return BlockStats{TxCount: uint32(len(b.Txs)), Size: uint32(len(b.Raw)), Weight: uint32(stripped*3 + len(b.Raw))}
}

// IndexEntry is one persisted block-index record for Load and InsertAll.
type IndexEntry struct {
	// Stats are zero for entries persisted without them.
	Stats        BlockStats
	Header       wire.Header
	Status       BlockStatus
	RejectReason string
}

// InsertAll is Load over a slice.
func (bi *BlockIndex) InsertAll(entries []IndexEntry) error {
	return bi.Load(func(fn func(*IndexEntry) error) error {
		for i := range entries {
			if err := fn(&entries[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// Load inserts persisted entries, which walk passes to its fn in any order
// (the entry is only read during the call). Each entry becomes a node at
// once, with no copy kept aside, and the nodes are linked to their parents
// once all are in. An entry already in the index (genesis) only updates its
// status, reason and unknown stats. Entries whose ancestry does not reach
// the index are left out and reported in the returned error (wrapping
// ErrOrphanHeader); all others are inserted. Loaded nodes are not dirty:
// they are what was persisted. An error from walk is returned as is, and
// the index is then unusable.
func (bi *BlockIndex) Load(walk func(fn func(*IndexEntry) error) error) error {
	first := bi.nodes.len()
	err := walk(func(e *IndexEntry) error {
		hash := e.Header.BlockHash()
		if n := bi.find(hash); n != nil {
			if n.state&nodeUnlinked == 0 {
				if _, err := bi.Insert(e.Header, e.Status, e.RejectReason); err == nil && n.Stats == (BlockStats{}) {
					n.Stats = e.Stats
				}
			}
			return nil // a repeated entry: the first stays
		}
		n := bi.alloc(hash)
		n.Header, n.Status, n.RejectReason, n.Stats = e.Header, e.Status, e.RejectReason, e.Stats
		n.state = nodeUnlinked
		return nil
	})
	if err != nil {
		return err
	}
	orphans := 0
	var stack []*BlockNode
	for i := first; i < bi.nodes.len(); i++ {
		if n := bi.nodes.at(uint32(i)); n.state&nodeUnlinked != 0 {
			var dead int
			stack, dead = bi.linkLoaded(n, stack[:0])
			orphans += dead
		}
	}
	if orphans > 0 {
		bi.byHash.rebuild(&bi.nodes, func(n *BlockNode) bool { return n.state&nodeDead == 0 })
		return fmt.Errorf("%w: %d persisted entries do not link to the index", ErrOrphanHeader, orphans)
	}
	return nil
}

// linkLoaded links the unlinked node n after its unlinked ancestors, or
// marks them all dead when their ancestry leaves the index. It returns the
// path it walked (stack's storage, reused by the caller) and how many of
// its nodes died.
func (bi *BlockIndex) linkLoaded(n *BlockNode, stack []*BlockNode) ([]*BlockNode, int) {
	var parent *BlockNode
	for cur := n; ; {
		stack = append(stack, cur)
		p := bi.find(cur.Header.PrevBlock)
		if p == nil || p.state&nodeDead != 0 || len(stack) > bi.nodes.len() {
			for _, d := range stack {
				d.state = nodeDead
			}
			return stack, len(stack)
		}
		if p.state&nodeUnlinked == 0 {
			parent = p
			break
		}
		cur = p
	}
	for k := len(stack) - 1; k >= 0; k-- {
		c := stack[k]
		c.state = 0
		status := c.Status
		c.Status = 0
		bi.link(c, parent)
		c.Status |= status
		bi.consider(c)
		parent = c
	}
	return stack, 0
}

// MarkInvalid marks node as invalid with a Core reject reason and every
// descendant as StatusFailedParent, then re-selects the best header (Core's
// InvalidBlockFound / SetBlockFailureFlags).
func (bi *BlockIndex) MarkInvalid(node *BlockNode, reason string) {
	if node == nil {
		return
	}
	node.Status |= StatusFailed
	node.RejectReason = reason
	bi.markDirty(node)
	bi.each(func(n *BlockNode) bool {
		if n.Height > node.Height && n.Status&StatusFailedParent == 0 && n.Ancestor(node.Height) == node {
			n.Status |= StatusFailedParent
			bi.markDirty(n)
		}
		return true
	})
	if bi.best.Status.Invalid() {
		bi.recomputeBest()
	}
}

// ClearFailure removes the failure flags from node, its descendants and its
// ancestors (Core's ResetBlockFailureFlags, behind reconsiderblock).
func (bi *BlockIndex) ClearFailure(node *BlockNode) {
	if node == nil {
		return
	}
	bi.each(func(n *BlockNode) bool {
		if n.Status.Invalid() && (node.IsAncestorOf(n) || n.IsAncestorOf(node)) {
			n.Status &^= StatusFailedMask
			n.RejectReason = ""
			bi.markDirty(n)
		}
		return true
	})
	bi.recomputeBest()
}

// ClearStatus removes storage flags f (e.g. StatusHaveData when block data is
// pruned) from n and marks it dirty. It does not clear failure flags; use
// ClearFailure for that.
func (bi *BlockIndex) ClearStatus(n *BlockNode, f BlockStatus) {
	f &^= StatusFailedMask
	if n == nil || n.Status&f == 0 {
		return
	}
	n.Status &^= f
	bi.markDirty(n)
}

// AddStatus sets the flags f on n (e.g. StatusHaveData or StatusConnected)
// and records n as dirty. Setting StatusFailed goes through MarkInvalid with
// n's current RejectReason.
func (bi *BlockIndex) AddStatus(n *BlockNode, f BlockStatus) {
	if n == nil || n.Status.Has(f) {
		return
	}
	if f&StatusFailed != 0 {
		bi.MarkInvalid(n, n.RejectReason)
	}
	n.Status |= f
	bi.markDirty(n)
}

// TakeDirty returns the nodes added or changed since the last call, in
// height order, and forgets them; a persister writes exactly these.
func (bi *BlockIndex) TakeDirty() []*BlockNode {
	out := bi.dirty
	bi.dirty = nil
	for _, n := range out {
		n.state &^= nodeDirty
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Height != out[j].Height {
			return out[i].Height < out[j].Height
		}
		return out[i].seq < out[j].seq
	})
	return out
}

// ForEach calls fn for every node in unspecified order until fn returns
// false.
func (bi *BlockIndex) ForEach(fn func(*BlockNode) bool) { bi.each(fn) }

// FindFork returns the last common ancestor of a and b (Core's
// LastCommonAncestor), or nil if either is nil.
func (bi *BlockIndex) FindFork(a, b *BlockNode) *BlockNode {
	return lastCommonAncestor(a, b)
}

func lastCommonAncestor(a, b *BlockNode) *BlockNode {
	if a == nil || b == nil {
		return nil
	}
	if a.Height > b.Height {
		a = a.Ancestor(b.Height)
	} else if b.Height > a.Height {
		b = b.Ancestor(a.Height)
	}
	for a != b && a != nil && b != nil {
		a, b = a.Parent, b.Parent
	}
	if a != b {
		return nil
	}
	return a
}

// Chain is one branch of the index from genesis to a tip, indexed by height
// (Core's CChain). The zero value is an empty chain.
type Chain struct {
	nodes []*BlockNode
}

// Tip returns the last node, or nil for an empty chain.
func (c *Chain) Tip() *BlockNode {
	if len(c.nodes) == 0 {
		return nil
	}
	return c.nodes[len(c.nodes)-1]
}

// Genesis returns the node at height 0, or nil for an empty chain.
func (c *Chain) Genesis() *BlockNode {
	if len(c.nodes) == 0 {
		return nil
	}
	return c.nodes[0]
}

// Height returns the tip's height, or -1 for an empty chain.
func (c *Chain) Height() int32 { return int32(len(c.nodes)) - 1 }

// At returns the node at height, or nil when out of range.
func (c *Chain) At(height int32) *BlockNode {
	if height < 0 || int(height) >= len(c.nodes) {
		return nil
	}
	return c.nodes[height]
}

// Contains reports whether n is on the chain.
func (c *Chain) Contains(n *BlockNode) bool {
	return n != nil && c.At(n.Height) == n
}

// Next returns the successor of n on the chain, or nil if n is the tip or
// not on the chain.
func (c *Chain) Next(n *BlockNode) *BlockNode {
	if !c.Contains(n) {
		return nil
	}
	return c.At(n.Height + 1)
}

// SetTip makes n the tip, refilling heights back to where the old chain and
// n's branch meet; nil empties the chain.
func (c *Chain) SetTip(n *BlockNode) {
	if n == nil {
		clear(c.nodes)
		c.nodes = c.nodes[:0]
		return
	}
	size := int(n.Height) + 1
	if size <= cap(c.nodes) {
		clear(c.nodes[min(size, len(c.nodes)):len(c.nodes)]) // drop stale pointers
		c.nodes = c.nodes[:size]
	} else {
		grown := make([]*BlockNode, size, size+size/8)
		copy(grown, c.nodes)
		c.nodes = grown
	}
	for b := n; b != nil && c.nodes[b.Height] != b; b = b.Parent {
		c.nodes[b.Height] = b
	}
}

// FindFork returns the last node of the chain that is an ancestor of n (or
// n itself), Core's CChain::FindFork; nil if n is nil or shares no node.
func (c *Chain) FindFork(n *BlockNode) *BlockNode {
	if n == nil {
		return nil
	}
	if n.Height > c.Height() {
		n = n.Ancestor(c.Height())
	}
	for n != nil && !c.Contains(n) {
		n = n.Parent
	}
	return n
}
