package chainstate

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"utxod/params"
	"utxod/store"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// Status is the outcome of submitting a valid block.
type Status string

const (
	StatusConnected  Status = "connected"   // on the active chain
	StatusSideBranch Status = "side-branch" // stored, on a branch with less work
	StatusOrphan     Status = "orphan"      // parent unknown; held until it arrives
	StatusDuplicate  Status = "duplicate"   // already known
)

// Result describes a processed block.
type Result struct {
	Hash   wire.Hash `json:"hash"`
	Height int32     `json:"height"`
	Status Status    `json:"status"`
	// Txs and Inputs count the block's transactions and non-coinbase inputs
	// (for progress figures; not part of the API answer).
	Txs    int `json:"-"`
	Inputs int `json:"-"`
	// Flushed and Durable (ProcessBlock, Submit; durable.go): the tip of
	// the state on disk when the answer was made, and whether the block is
	// on the active chain at or below it, so that it survives a crash.
	Flushed FlushedTip `json:"-"`
	Durable bool       `json:"-"`
}

// ErrParse wraps a block that could not be parsed.
var ErrParse = errors.New("chainstate: block does not parse")

// ErrOrphanPoolFull refuses an orphan when the pool is full.
var ErrOrphanPoolFull = errors.New("chainstate: orphan pool full")

// ErrWrongNetwork reports a datadir created for another network.
var ErrWrongNetwork = errors.New("chainstate: datadir belongs to another network")

// defaultOrphanBytes bounds the orphan pool unless Config says otherwise.
const defaultOrphanBytes = 64 << 20

// Chainstate is the node: block index, active chain, coin store and
// statistics. All methods are safe for concurrent use; blocks are processed
// one at a time.
type Chainstate struct {
	// mu guards the chainstate; every exclusive hold of it is taken under
	// wmu (lock), so that a flush can let readers in while its batch is
	// written and still keep writers out (flushTail).
	mu  sync.RWMutex
	wmu sync.Mutex
	// flushErr is the failure of the last flush run after its submission's
	// answer (submitOne); the next submission retries that flush before its
	// block. Guarded by the submission slot.
	flushErr     error
	p            *params.Params
	v            *validate.Validator
	log          *slog.Logger
	store        store.Store
	index        *validate.BlockIndex
	chain        validate.Chain
	stats        Stats
	orph         map[wire.Hash][][]byte // orphans by missing parent
	orphBytes    int
	maxOrphBytes int
	now          func() int64
	keep         int32

	current *wire.Block // parse of the block processLocked is handling
	// prechecked went through CheckBlock on a stream's reading goroutine,
	// with verdict precheck (StreamConfig.Prefetch).
	prechecked *wire.Block
	precheck   error

	// view is the active chain published for Tip and AtHeight, which
	// read it without mu (activeview.go); unlock publishes it.
	view *viewWriter

	snap *store.SnapshotBase // set when loaded from a UTXO snapshot (snapbase.go)

	lazy  *utxo.LazyMuHash // pending MuHash work, see utxo/lazymuhash.go
	muOff bool             // Config.DisableMuHash (measurement only)

	av assumeValid // assume-valid setting and bookkeeping, see assumevalid.go

	// pipe is the one path's state (pipeline.go): the blocks connected
	// whose scripts are still verifying, at most its depth (0 outside an
	// import), and a stream's verdicts not yet emitted.
	pipe       *pipeline
	rolledBack int // pending blocks a pipeline's rollbacks disconnected (tests)

	submit  submitQueue // the one submission slot (submit.go)
	orphans orphanSet   // recently held orphans, for Lookup

	// OnFlush, when set before use, is called after each flush with its
	// duration (metrics).
	OnFlush func(time.Duration)

	observer    Observer   // SetObserver (observer.go)
	unannounced []observed // connected, scripts pending, not announced yet

	flushed flushedState // the tip on disk (durable.go)

	// hash_serialized_3 cache for one tip; guarded by hs3mu because Info
	// runs under the read lock.
	hs3mu    sync.Mutex
	hs3      wire.Hash
	hs3Tip   wire.Hash
	hs3Valid bool
}

// Config configures a Chainstate.
type Config struct {
	Params    *params.Params
	Validator *validate.Validator
	Store     store.Store
	Log       *slog.Logger
	// Now is the clock for the two-hour future-time rule (default time.Now).
	Now func() time.Time
	// KeepBlocks is how many blocks below the tip keep their data for
	// reorgs (default 288, Core's MIN_BLOCKS_TO_KEEP).
	KeepBlocks int32
	// DisableMuHash turns off the incremental MuHash3072 (measurement arm
	// only: the persisted digest state becomes meaningless).
	DisableMuHash bool
	// MaxOrphanBytes bounds the blocks held while their parent is unknown
	// (default 64 MiB). An import of out-of-order block files wants more.
	MaxOrphanBytes int
	// AssumeValid skips the scripts of blocks buried under a known block,
	// as Core's -assumevalid (see assumevalid.go). The zero value verifies
	// every script.
	AssumeValid validate.AssumeValid
}

// New returns a chainstate at genesis over an empty store, or at the tip
// of the state the store holds.
func New(cfg Config) (*Chainstate, error) {
	cs, err := open(cfg)
	if err != nil {
		return nil, err
	}
	cs.view.publish(&cs.chain)
	return cs, nil
}

// lock takes the exclusive hold: wmu, then mu.
func (cs *Chainstate) lock() {
	cs.wmu.Lock()
	cs.mu.Lock()
}

// unlock ends the exclusive hold, publishing the active chain first so that
// a reader who takes mu next finds the view at least as new as what it
// reads under the lock.
func (cs *Chainstate) unlock() {
	cs.view.publish(&cs.chain)
	if verifyView != nil {
		verifyView(cs)
	}
	cs.mu.Unlock()
	cs.wmu.Unlock()
}

// readersIn runs f with mu released but wmu kept (the exclusive hold held):
// readers read while f runs, nothing writes. The active chain is published
// first, as unlock does.
func (cs *Chainstate) readersIn(f func()) {
	cs.view.publish(&cs.chain)
	cs.mu.Unlock()
	defer cs.mu.Lock()
	f()
}

// verifyView, set by the tests, checks each publication against the locked
// answers.
var verifyView func(*Chainstate)

// addStatus, clearStatus and markInvalid change index statuses for the
// chainstate: the view copies the statuses of active blocks, so it hears
// of every change.
func (cs *Chainstate) addStatus(n *validate.BlockNode, f validate.BlockStatus) {
	cs.index.AddStatus(n, f)
	cs.view.touch(n)
}

func (cs *Chainstate) clearStatus(n *validate.BlockNode, f validate.BlockStatus) {
	cs.index.ClearStatus(n, f)
	cs.view.touch(n)
}

// markInvalid also flags n's descendants (validate.BlockIndex.MarkInvalid):
// on the active chain, every block from n up.
func (cs *Chainstate) markInvalid(n *validate.BlockNode, reason string) {
	if cs.chain.Contains(n) {
		cs.view.touchFrom(n.Height)
	}
	cs.index.MarkInvalid(n, reason)
}

// open is New without the first publication.
func open(cfg Config) (*Chainstate, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := func() int64 { return time.Now().Unix() }
	if cfg.Now != nil {
		now = func() int64 { return cfg.Now().Unix() }
	}
	keep := cfg.KeepBlocks
	if keep <= 0 {
		keep = 288
	}
	cs := &Chainstate{
		p: cfg.Params, v: cfg.Validator, log: log, store: cfg.Store,
		index: validate.NewBlockIndex(cfg.Params),
		view:  newViewWriter(),
		pipe:  newPipeline(),
		orph:  make(map[wire.Hash][][]byte),
		now:   now,
		keep:  keep,

		maxOrphBytes: cfg.MaxOrphanBytes,
		lazy:         utxo.NewLazyMuHash(),
		muOff:        cfg.DisableMuHash,
		av:           assumeValid{cfg: cfg.AssumeValid},
		submit:       newSubmitQueue(),
	}
	if cs.maxOrphBytes <= 0 {
		cs.maxOrphBytes = defaultOrphanBytes
	}
	g := cs.index.Genesis()
	persisted, err := cs.store.Load()
	if err != nil {
		return nil, fmt.Errorf("chainstate: load: %w", err)
	}
	// The MuHash is maintained lazily (utxo.LazyMuHash), not by Stats itself.
	cs.stats.NoMuHash = true
	if persisted == nil {
		cs.chain.SetTip(g)
		cs.stats.SetTip(0, g.Hash)
		if err := cs.store.SetGenesis(g.Hash, &cs.stats); err != nil { // empty set: MuHash exact
			return nil, err
		}
		cs.noteFlushed() // a new store reopens new: at genesis
		return cs, nil
	}
	if persisted.Genesis != g.Hash {
		return nil, fmt.Errorf("%w: its genesis is %s, %s's is %s", ErrWrongNetwork, persisted.Genesis, cfg.Params.Name, g.Hash)
	}
	if err := cs.index.Load(persisted.Index); err != nil {
		return nil, fmt.Errorf("chainstate: block index: %w", err)
	}
	cs.snap = persisted.Snapshot
	tip := cs.index.Lookup(persisted.Tip)
	if tip == nil {
		tip = cs.detachedBase(persisted.Tip)
	}
	if tip == nil {
		return nil, fmt.Errorf("chainstate: tip %s missing from the block index", persisted.Tip)
	}
	if uint32(tip.Height) != persisted.Stats.Height || persisted.Stats.BestBlock != tip.Hash {
		return nil, fmt.Errorf("chainstate: statistics describe %d %s, tip is %d %s", persisted.Stats.Height, persisted.Stats.BestBlock, tip.Height, tip.Hash)
	}
	cs.chain.SetTip(tip)
	cs.loadAssumedTop()
	cs.stats = persisted.Stats
	cs.stats.NoMuHash = true
	cs.index.TakeDirty()
	cs.noteFlushed() // what Load read is on disk
	log.Info("chainstate loaded", "height", tip.Height, "tip", tip.Hash, "index", cs.index.Len())
	// A heavier valid branch stored before the restart wins now (the best
	// header may be one whose block has not arrived: headers-first).
	if cs.needHeaders() {
		return cs, nil // a detached base: no branch can be compared with it
	}
	if best := cs.bestCandidate(); best != tip && best.ChainWork.Cmp(tip.ChainWork) > 0 {
		if err := cs.activateBestChain(best); err != nil {
			log.Warn("activating the best stored branch", "err", err)
		}
	}
	return cs, nil
}

// haveParentData reports whether a block on parent can be processed now:
// the parent's data is stored, or it is on the active chain (whose old
// blocks are pruned), or it is known invalid (the block is refused at once).
// A parent known only by its header (headers-first) is none of these.
func (cs *Chainstate) haveParentData(parent wire.Hash) bool {
	n := cs.index.Lookup(parent)
	return n != nil && (n.Status.Has(validate.StatusHaveData) || cs.chain.Contains(n) || n.Status.Invalid())
}

// Stats returns a copy of the statistics at the tip (MuHash exact). If the
// pending MuHash work cannot be materialised (a coin set that lost a coin
// it was given), the digest is withheld (NoMuHash) and the error logged.
func (cs *Chainstate) Stats() Stats {
	cs.lock()
	defer cs.unlock()
	st, err := cs.statsLocked()
	if err != nil {
		cs.log.Error("muhash withheld", "err", err)
		st = cs.stats
		st.NoMuHash = true
	}
	return st
}

// materializeMuHash folds the pending MuHash work into the statistics.
func (cs *Chainstate) materializeMuHash() error {
	return cs.lazy.Materialize(&cs.stats.MuHash, cs.store)
}

// statsLocked materialises pending MuHash work and returns the statistics
// as readers see them. Callers hold cs.mu exclusively.
func (cs *Chainstate) statsLocked() (Stats, error) {
	if err := cs.materializeMuHash(); err != nil {
		return Stats{}, err
	}
	st := cs.stats
	st.NoMuHash = cs.muOff
	return st, nil
}

// ProcessBlock validates raw and, when it extends the most-work valid chain,
// connects it (reorganising if needed). Invalid blocks return a
// *validate.RuleError and leave the chainstate unchanged. It is the one
// path of every block (pipeline.go) at depth 0: a stream of one block,
// parsed and put through CheckBlock before the lock is taken, whose coins
// are read with lookups let in (connectDeferred).
// Producers that share the node call Submit, which queues them.
func (cs *Chainstate) ProcessBlock(raw []byte) (Result, error) {
	res, _, err := cs.processBlock(raw, flushReaders)
	return res, err
}

// processBlock is ProcessBlock with its flush's policy; due reports a flush
// left to the caller (flushAfter).
func (cs *Chainstate) processBlock(raw []byte, policy flushPolicy) (res Result, due bool, err error) {
	// The block may be kept as a side branch or orphan.
	left, next := oneBlock(cs.fetched(bytes.Clone(raw), 0, true))
	var out Outcome
	cs.lock()
	defer cs.unlock()
	err = cs.run(StreamConfig{StopHeight: -1}, policy, left, next, func(o Outcome) bool {
		out = o
		return true
	})
	if err == nil {
		err = out.Err
	}
	// The run's steps left the store full without flushing (flushAfter).
	due = err == nil && policy == flushAfter && cs.store.NeedsFlush()
	cs.durabilityLocked(&out.Result)
	return out.Result, due, err
}

// process handles b and then the orphans it completes (lock held, raw
// owned by the chainstate).
func (cs *Chainstate) process(b *wire.Block, raw []byte) (Result, error) {
	res, err := cs.processLocked(b, raw)
	if err != nil {
		return res, err
	}
	if res.Status == StatusOrphan {
		cs.orphans.add(b.Hash, b.Header.PrevBlock)
	}
	cs.processOrphans(b.Hash)
	if cs.lazy.Due() {
		// A failure stays pending and is reported by the next read or flush.
		_ = cs.materializeMuHash()
	}
	return res, nil
}

// indexEntries are the persisted form of nodes.
func indexEntries(nodes []*validate.BlockNode) []validate.IndexEntry {
	out := make([]validate.IndexEntry, len(nodes))
	for i, n := range nodes {
		out[i] = validate.IndexEntry{Header: n.Header, Status: n.Status, RejectReason: n.RejectReason, Stats: n.Stats}
	}
	return out
}

// flushPolicy is where a run's flush, when the store is full, happens.
type flushPolicy uint8

const (
	// flushLocked: in the run, readers kept out (a stream holds the lock
	// until it ends).
	flushLocked flushPolicy = iota
	// flushReaders: in the run, the batch written with readers let in
	// (flushTail).
	flushReaders
	// flushAfter: after the run, by its caller (processBlock's due): a
	// submission answers first (submitOne).
	flushAfter
)

// flushTail is the one flush of every caller (a stream or ProcessBlock
// whose store is full, Flush, Close): it settles the pending blocks, so no
// unverified block is ever flushed, materialises the MuHash and flushes.
// With readers, a store that stages its flush (store.StagedFlusher) writes
// its batch while readers read (readersIn): lookups do not wait for the
// write and its sync, and the tip they see is settled.
func (cs *Chainstate) flushTail(readers bool) error {
	if err := cs.drain(); err != nil {
		return err
	}
	start := time.Now()
	st, err := cs.statsLocked()
	if err != nil {
		return err
	}
	if err := cs.flushStore(indexEntries(cs.index.TakeDirty()), &st, readers); err != nil {
		return err
	}
	cs.noteFlushed() // only once the synced batch has returned
	cs.log.Debug("flushed", "height", cs.chain.Tip().Height, "ms", time.Since(start).Milliseconds())
	if cs.OnFlush != nil {
		cs.OnFlush(time.Since(start))
	}
	return nil
}

// flushStore flushes the store, staged with readers let in when it can be
// (flushTail).
func (cs *Chainstate) flushStore(index []validate.IndexEntry, st *store.Stats, readers bool) error {
	sf, ok := cs.store.(store.StagedFlusher)
	if !ok || !readers {
		return cs.store.Flush(index, st)
	}
	commit, finish, err := sf.StageFlush(index, st)
	if err != nil || commit == nil {
		return err
	}
	var cerr error
	cs.readersIn(func() { cerr = commit() })
	return finish(cerr)
}

func (cs *Chainstate) processLocked(b *wire.Block, raw []byte) (Result, error) {
	cs.current = b
	defer func() { cs.current = nil }()
	res := Result{Hash: b.Hash, Height: -1, Txs: len(b.Txs)}
	for i := 1; i < len(b.Txs); i++ {
		res.Inputs += len(b.Txs[i].Inputs)
	}
	if cs.needHeaders() {
		return res, ErrNeedHeaders
	}
	// Context-free checks first, as Core's ProcessNewBlock runs CheckBlock
	// before AcceptBlock: a malformed or mutated block is refused before it
	// touches the index, the orphan pool or the store, and never marks the
	// header invalid (a mutated copy says nothing about the real block).
	if parent := cs.index.Lookup(b.Header.PrevBlock); parent != nil {
		res.Height = parent.Height + 1
	}
	checkErr := cs.precheck
	if b != cs.prechecked {
		checkErr = cs.v.CheckBlock(b)
	}
	if checkErr != nil {
		return res, checkErr
	}
	if len(cs.pipe.pending) > 0 && b.Header.PrevBlock != cs.chain.Tip().Hash {
		// Only a block extending the tip may build on unverified scripts.
		if err := cs.drain(); err != nil {
			return res, err
		}
	}
	if n := cs.index.Lookup(b.Hash); n != nil {
		res.Height = n.Height
		if n.Status.Invalid() {
			// Core's submitblock (rpc/mining.cpp) answers a block whose index
			// entry is BLOCK_FAILED_* with "duplicate-invalid".
			return res, &validate.RuleError{Reason: "duplicate-invalid", Detail: "block is already known invalid: " + n.RejectReason}
		}
		// Known with data, or on the active chain (whose old blocks have
		// their data pruned): Core answers "duplicate" for both.
		if n.Status.Has(validate.StatusHaveData) || cs.chain.Contains(n) {
			res.Status = StatusDuplicate
			return res, nil
		}
	}
	// A block waits while its parent's block is missing, also when the
	// parent's header is known (headers-first: AcceptHeaders).
	if b.Header.PrevBlock != (wire.Hash{}) && !cs.haveParentData(b.Header.PrevBlock) {
		for _, o := range cs.orph[b.Header.PrevBlock] {
			if bytes.Equal(o[:wire.HeaderSize], raw[:wire.HeaderSize]) {
				res.Status = StatusOrphan
				return res, nil
			}
		}
		if cs.orphBytes+len(raw) > cs.maxOrphBytes {
			return res, fmt.Errorf("%w (%d bytes held, limit %d)", ErrOrphanPoolFull, cs.orphBytes, cs.maxOrphBytes)
		}
		cs.orph[b.Header.PrevBlock] = append(cs.orph[b.Header.PrevBlock], raw)
		cs.orphBytes += len(raw)
		res.Status = StatusOrphan
		return res, nil
	}
	node := cs.index.Lookup(b.Hash)
	if node == nil {
		var err error
		if node, err = cs.index.AcceptHeader(b.Header, cs.now()); err != nil {
			return res, err
		}
	}
	res.Height = node.Height
	// AcceptBlock: contextual failures mark the block invalid unless it was
	// merely mutated (BLOCK_MUTATED).
	if err := cs.v.ContextualCheckBlock(b, node.Parent); err != nil {
		if !validate.IsMutated(err) {
			cs.markInvalid(node, validate.Reason(err))
		}
		return res, err
	}
	if err := cs.store.PutBlock(b.Hash, raw); err != nil {
		return res, err
	}
	if node.Stats == (validate.BlockStats{}) {
		// Persisted with the status below (addStatus marks the entry dirty),
		// so they outlive the block data.
		node.Stats = validate.StatsOf(b)
	}
	cs.addStatus(node, validate.StatusHaveData|validate.StatusDataValid)
	tip := cs.chain.Tip()
	if node.ChainWork.Cmp(tip.ChainWork) <= 0 {
		res.Status = StatusSideBranch
		return res, nil
	}
	if err := cs.activateBestChain(node); err != nil {
		return res, err
	}
	if cs.chain.Contains(node) {
		res.Status = StatusConnected
	} else {
		res.Status = StatusSideBranch
	}
	return res, nil
}

// activateBestChain moves the active chain to target (which has more work
// than the tip): disconnect back to the fork, then connect target's branch
// block by block, like Core's ActivateBestChain. If a block of the branch is
// invalid it is marked invalid (with its descendants, target among them) and
// the chain moves to the most-work chain that is still valid and has its
// data — the part of the branch already connected, the old chain, or another
// stored branch. The error of the first failing block is returned.
func (cs *Chainstate) activateBestChain(target *validate.BlockNode) error {
	var firstErr error
	for target != nil && target != cs.chain.Tip() && validate.Better(target, cs.chain.Tip()) {
		err := cs.stepTo(target)
		if err == nil {
			break
		}
		var re *validate.RuleError
		if !errors.As(err, &re) {
			return err // store failure: nothing sensible to restore
		}
		if firstErr == nil {
			firstErr = err
		}
		target = cs.bestCandidate()
	}
	return firstErr
}

// stepTo disconnects to the fork with target and connects target's branch.
// On an invalid block it marks it invalid and stops, leaving the chain at
// the block's parent.
func (cs *Chainstate) stepTo(target *validate.BlockNode) error {
	fork := cs.index.FindFork(cs.chain.Tip(), target)
	// Readers may see the chain grow block by block, never a reorg's
	// middle (connectDeferred's readers).
	extends := fork == cs.chain.Tip()
	if err := cs.disconnectTo(fork); err != nil {
		return err
	}
	var path []*validate.BlockNode
	for n := target; n != fork; n = n.Parent {
		path = append(path, n)
	}
	for i := len(path) - 1; i >= 0; i-- {
		n := path[i]
		if err := cs.connect(n, extends); err != nil {
			var re *validate.RuleError
			// An ancestor's failure may have marked n already.
			if errors.As(err, &re) && !n.Status.Invalid() {
				cs.markInvalid(n, re.Reason)
				cs.log.Warn("invalid block on the best branch", "hash", n.Hash, "height", n.Height, "reason", re.Reason)
			}
			return err
		}
	}
	return nil
}

// bestCandidate is the most-work valid block (ties: first seen) whose branch
// back to the active chain has its data stored; the tip when nothing beats
// it.
func (cs *Chainstate) bestCandidate() *validate.BlockNode {
	tip := cs.chain.Tip()
	best := tip
	cs.index.ForEach(func(n *validate.BlockNode) bool {
		// Core's candidate order: more work, then first seen.
		if n.Status.Invalid() || !validate.Better(n, best) {
			return true
		}
		for a := n; !cs.chain.Contains(a); a = a.Parent {
			if a.Status.Invalid() || !a.Status.Has(validate.StatusHaveData) {
				return true
			}
		}
		best = n
		return true
	})
	return best
}

func (cs *Chainstate) disconnectTo(fork *validate.BlockNode) (err error) {
	if cs.chain.Tip() == fork {
		return nil
	}
	// Disconnects are recorded in a window of their own (see utxo.LazyMuHash):
	// one before them is closed first, and theirs after them.
	if err := cs.materializeMuHash(); err != nil {
		return err
	}
	defer func() {
		if err == nil {
			err = cs.materializeMuHash()
		}
	}()
	for cs.chain.Tip() != fork {
		tip := cs.chain.Tip()
		d, err := cs.store.Undo(tip.Hash)
		if err != nil {
			return fmt.Errorf("chainstate: disconnect %s: %w", tip.Hash, err)
		}
		next := cs.stats
		if err := cs.applyStats(&next, d, false, true); err != nil {
			return err
		}
		next.SetTip(uint32(tip.Parent.Height), tip.Parent.Hash)
		if err := cs.store.Disconnect(tip.Hash, tip.Parent.Hash, d); err != nil {
			return fmt.Errorf("chainstate: disconnect %s: %w", tip.Hash, err)
		}
		if err := cs.recordMuHash(d, false, 0); err != nil {
			return err
		}
		cs.stats = next
		cs.chain.SetTip(tip.Parent)
		cs.announceDisconnected(tip, d)
		cs.log.Debug("disconnected", "hash", tip.Hash, "height", tip.Height)
	}
	cs.fixAssumedTop()
	return nil
}

// connect validates and connects node, whose parent is the tip, by the
// one path (connectDeferred); extends: no block was disconnected before it.
func (cs *Chainstate) connect(node *validate.BlockNode, extends bool) error {
	b, err := cs.blockOf(node)
	if err != nil {
		return err
	}
	// ProcessBlock (depth 0, nothing pending) lets readers in while the
	// block that extends the tip is read; a stream and a reorg do not.
	readers := extends && cs.pipe.flush != flushLocked
	return cs.connectDeferred(b, node, cs.skipScripts(node), readers)
}

// blockOf returns node's block: usually the one being processed, whose
// parse (txids already hashed) is reused, else the stored copy.
func (cs *Chainstate) blockOf(node *validate.BlockNode) (*wire.Block, error) {
	if b := cs.current; b != nil && b.Hash == node.Hash {
		return b, nil
	}
	raw, err := cs.store.Block(node.Hash)
	if err != nil {
		return nil, fmt.Errorf("chainstate: data of block %s: %w", node.Hash, err)
	}
	b, err := wire.ParseBlock(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrParse, err)
	}
	return b, nil
}

// apply makes node, connected with delta d (its scripts skipped when
// assumed), the tip: statistics, store and chain. Block data leaves the
// reorg window when its scripts pass (settled).
func (cs *Chainstate) apply(node *validate.BlockNode, d *utxo.Delta, assumed bool) error {
	next := cs.stats
	// A store that counts the transactions with an unspent output while it
	// connects saves reading every touched txid's live-output count first
	// (the same figure).
	counter, counting := cs.store.(store.TxCounter)
	if err := cs.applyStats(&next, d, true, !counting); err != nil {
		return err
	}
	next.SetTip(uint32(node.Height), node.Hash)
	if counting {
		n, err := counter.ConnectCounting(node.Hash, d)
		if err != nil {
			return fmt.Errorf("chainstate: connect %s: %w", node.Hash, err)
		}
		if n < 0 && uint64(-n) > next.Transactions {
			return fmt.Errorf("chainstate: connect %s: %w: transaction count below zero", node.Hash, utxo.ErrStats)
		}
		next.Transactions = uint64(int64(next.Transactions) + n)
	} else if err := cs.store.Connect(node.Hash, d); err != nil {
		return fmt.Errorf("chainstate: connect %s: %w", node.Hash, err)
	}
	if err := cs.recordMuHash(d, true, uint32(max(node.Height-1, 0))); err != nil {
		return err
	}
	cs.stats = next
	cs.chain.SetTip(node)
	if assumed {
		cs.noteAssumed(node)
	}
	return nil
}

// processOrphans connects orphans waiting for parent, recursively.
func (cs *Chainstate) processOrphans(parent wire.Hash) {
	queue := []wire.Hash{parent}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		waiting := cs.orph[h]
		delete(cs.orph, h)
		for _, raw := range waiting {
			cs.orphBytes -= len(raw)
		}
		for _, raw := range waiting {
			b, err := wire.ParseBlock(raw)
			if err != nil {
				continue
			}
			if _, err := cs.processLocked(b, raw); err != nil {
				cs.log.Warn("orphan rejected", "hash", b.Hash, "err", err)
				continue
			}
			queue = append(queue, b.Hash)
		}
	}
}

// Flush makes the store durable at the current tip (flushTail).
func (cs *Chainstate) Flush() error {
	cs.lock()
	defer cs.unlock()
	return cs.flushTail(true)
}

// SyncAhead lets the store start making what it wrote ahead of the next
// flush durable (store.AheadSyncer; nothing otherwise). An import calls it
// after its last block: the disk then writes out the blocks and undo
// records while the digest's read-back and the flush's batch use the CPU.
func (cs *Chainstate) SyncAhead() {
	cs.lock()
	defer cs.unlock()
	if a, ok := cs.store.(store.AheadSyncer); ok {
		a.SyncAhead()
	}
}

// CacheBytes is the coins cache's estimated size.
func (cs *Chainstate) CacheBytes() int64 {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	return cs.store.CacheBytes()
}
