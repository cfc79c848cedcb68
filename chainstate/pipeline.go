package chainstate

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"utxod/store"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// The one path. Every block — POSTed, followed (ProcessBlock, Submit) or
// imported (ProcessStream) — goes through run: processFetched, then
// connectDeferred for each block that extends the tip, then resolve, and
// flushTail when the store is full. A block is connected as soon as its
// non-script rules pass: its coin changes are applied to the cache in block
// order while its input scripts are still being verified on the
// validator's workers. At depth 0 (an import's default until its first
// verified block) connectDeferred then waits for them before anything else
// connects, as Core's ConnectBlock, so only the block's own store work
// overlaps its signatures; at depth N > 0 (an import's cross-block
// pipelining) up to N blocks stay pending while the next blocks' UTXO work
// runs. ProcessBlock and Submit, which share the node with lookups, read a
// block's coins and check its other rules with readers let in, then apply
// it under the lock while its scripts finish (connectDeferred's readers);
// a reorg's blocks connect as an import's at depth 0, readers kept out.
//
// Chainstate.pipe holds the depth and the pending blocks; processLocked
// settles the pending blocks before any block that does not extend the
// tip. Nothing optimistic is ever visible: the lock is held while blocks
// are pending, and every pending block is resolved before a flush
// (flushTail), before a side branch, reorg or orphan parent is processed,
// and before the lock is released. At depth 0 a block whose scripts fail is
// disconnected at once (settleNow), before the lock is released, and
// its error returned to stepTo, so verdicts and state are Core's
// synchronous ones. Pipelined, if a pending
// block's scripts fail, the chain is disconnected back to its parent
// through the undo data the connects left in the cache, the block is
// marked invalid (its pending descendants with it) and the chain moves to
// the best valid candidate, as a synchronous ActivateBestChain would have
// left it. One difference is visible in the verdicts of the invalid
// block's descendants: synchronously the first one is refused
// ("bad-prevblk") before it is indexed, so the next ones wait as orphans;
// pipelined, descendants already connected are marked failed with it and
// reported "bad-prevblk". Either way none of them is connected.

// StreamConfig configures ProcessStream.
type StreamConfig struct {
	// Depth is the most blocks whose scripts may be pending at once while
	// the next block is read; 1 already overlaps one block's scripts with
	// the next block's connect. Zero (or negative) turns cross-block
	// pipelining off: every block is verified before the next connects, as
	// with ProcessBlock, though its coin changes are applied while its
	// scripts run (and undone if they fail).
	Depth int
	// StopHeight stops reading once the active chain reaches it
	// (negative: read to the end).
	StopHeight int32
	// Prefetch is how many blocks a reading goroutine may have read,
	// parsed and put through the context-free checks (CheckBlock: txids,
	// merkle root, sizes, sigops) ahead of the block being connected, so
	// reading and parsing overlap connecting, as Core's do. Zero: off,
	// each block is read and parsed when the previous one is done. With
	// it, next runs on that goroutine, outside the chainstate's lock
	// (calls stay sequential), and ProcessStream waits for the call in
	// flight before it returns.
	Prefetch int
	// AssumedPrefetch is Prefetch while the blocks connect without their
	// scripts (assume-valid): the reading goroutine stops for good, its
	// blocks read ahead kept, once a block's scripts are verified. With
	// every script verified both cores verify signatures and reading
	// ahead only costs (bench/decisions.md). Ignored when Prefetch is set.
	AssumedPrefetch int
	// VerifiedDepth, if above Depth, replaces it from the first block
	// whose scripts are verified on; OnVerified, if set, is called then,
	// once. Where scripts are skipped, pipelining has nothing to overlap
	// (bench/decisions.md), so an assume-valid import pipelines only its
	// verified tail.
	VerifiedDepth int
	OnVerified    func()
	// OwnedBlocks says that next returns a slice of its own for every
	// block, which the stream keeps (the store may keep it too: PutBlock);
	// otherwise the stream copies each block, since next may reuse it.
	OwnedBlocks bool
}

// cloning returns next with each block's bytes copied, for a next whose
// slice is reused (StreamConfig.OwnedBlocks false).
func cloning(next func() ([]byte, int64, error)) func() ([]byte, int64, error) {
	return func() ([]byte, int64, error) {
		raw, tag, err := next()
		return bytes.Clone(raw), tag, err
	}
}

// DefaultVerifiedDepth is the import's StreamConfig.VerifiedDepth.
const DefaultVerifiedDepth = 1

// DefaultAssumedPrefetch is the import's StreamConfig.AssumedPrefetch.
const DefaultAssumedPrefetch = 1

// fetched is one block of a stream: next's answer and, when prefetched,
// its parse and CheckBlock verdict.
type fetched struct {
	raw []byte // owned
	tag int64
	err error // next's
	// b is the parse when prefetched; it then went through CheckBlock
	// (verdict check) unless it did not parse (parseErr).
	b        *wire.Block
	parseErr error
	check    error
}

// fetchNext reads the next block; with prefetch it parses and checks it
// too.
func (cs *Chainstate) fetchNext(next func() ([]byte, int64, error), prefetch bool) fetched {
	raw, tag, err := next()
	if err != nil {
		return fetched{tag: tag, err: err}
	}
	return cs.fetched(raw, tag, prefetch)
}

// fetched wraps raw (owned) as a stream block; with prefetch it is parsed
// and put through CheckBlock now, outside the lock (v is safe for
// concurrent use: CheckBlock is context-free).
func (cs *Chainstate) fetched(raw []byte, tag int64, prefetch bool) fetched {
	f := fetched{raw: raw, tag: tag}
	if prefetch {
		f.b, f.parseErr = wire.ParseBlock(f.raw)
		if f.parseErr == nil {
			f.check = cs.v.CheckBlock(f.b)
		}
	}
	return f
}

// oneBlock is ProcessBlock's source: f, then the end.
func oneBlock(f fetched) (left []fetched, next func() ([]byte, int64, error)) {
	return []fetched{f}, func() ([]byte, int64, error) { return nil, 0, io.EOF }
}

// fetcher returns the stream's source of blocks and a stop function that
// ends the reading goroutine, if any, waits for it and returns the blocks
// it read that were not fetched yet, in order.
func (cs *Chainstate) fetcher(depth int, next func() ([]byte, int64, error)) (func() fetched, func() []fetched) {
	if depth <= 0 {
		return cs.syncFetcher(nil, next), noFetcher
	}
	ch := make(chan fetched, depth)
	done := make(chan struct{})
	go func() {
		defer close(ch)
		for {
			f := cs.fetchNext(next, true)
			ch <- f // stop receives it if the stream does not
			if f.err != nil {
				return
			}
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	get := func() fetched {
		if f, ok := <-ch; ok {
			return f
		}
		return fetched{err: io.EOF}
	}
	stop := func() []fetched {
		close(done)
		var left []fetched
		for f := range ch {
			left = append(left, f)
		}
		return left
	}
	return get, stop
}

// noFetcher is the stop function of a stream without a reading goroutine.
func noFetcher() []fetched { return nil }

// syncFetcher fetches the blocks of left, then reads on the calling
// goroutine.
func (cs *Chainstate) syncFetcher(left []fetched, next func() ([]byte, int64, error)) func() fetched {
	return func() fetched {
		if len(left) > 0 {
			f := left[0]
			left = left[1:]
			return f
		}
		return cs.fetchNext(next, false)
	}
}

// Outcome is the verdict on one block of a stream, in stream order.
type Outcome struct {
	Result Result
	Err    error
	// Tag is the value next returned with the block.
	Tag int64
	// TipHeight is the height of the validated active tip when the
	// verdict became final.
	TipHeight int32
}

// pendingBlock is a connected block whose scripts are still running.
type pendingBlock struct {
	node  *validate.BlockNode
	check *validate.ScriptCheck // holds the block's transactions until it is done
	out   int                   // index into pipeline.outs, -1 for a reconnected orphan
}

// pipeline is the one path's state: the blocks whose scripts are pending
// (at most depth once a block is settled) and a run's verdicts not yet
// emitted.
type pipeline struct {
	depth   int
	pending []pendingBlock
	outs    []streamOut // submitted blocks awaiting their verdict, in order
	base    int         // outs[0]'s sequence number
	seq     int         // sequence number of the block being submitted, -1 if none
	hash    wire.Hash   // its hash
	// verified: a block connected with its scripts checked.
	verified bool
	// flush: where the run's flush, when the store is full, happens; also
	// whether a block that extends the tip is read with readers let in
	// (connectDeferred): not in a stream (flushLocked), which keeps them
	// out.
	flush flushPolicy
}

func newPipeline() *pipeline { return &pipeline{seq: -1} }

// reset empties the run's state for a run at depth (0 between runs).
func (pl *pipeline) reset(depth int) { *pl = pipeline{depth: depth, seq: -1} }

type streamOut struct {
	o       Outcome
	waiting bool // on a pending block's scripts
}

// ProcessStream processes the blocks next returns (until io.EOF) like
// ProcessBlock, by the same path, with cross-block pipelining when
// cfg.Depth > 0, and calls emit with each block's outcome in stream order.
// Invalid blocks are reported through emit, not as ProcessStream's error;
// emit returning false stops the stream after the blocks already read are
// resolved. ProcessStream returns next's error, a store failure, or nil.
// The chainstate stays locked for the whole stream (readers wait until it
// ends, and Tip and AtHeight answer the chain as it was before it; it is
// meant for imports, not for a serving node); emit and next run under that
// lock (next on a reading goroutine outside it, with cfg.Prefetch) and must
// not call the chainstate's methods.
func (cs *Chainstate) ProcessStream(cfg StreamConfig, next func() (raw []byte, tag int64, err error), emit func(Outcome) bool) error {
	cs.lock()
	defer cs.unlock()
	if !cfg.OwnedBlocks {
		next = cloning(next)
	}
	return cs.run(cfg, flushLocked, nil, next, emit)
}

// streamRun is one run of the one path: the blocks of left, then next's.
type streamRun struct {
	cs        *Chainstate
	cfg       StreamConfig
	pl        *pipeline
	next      func() ([]byte, int64, error)
	fetch     func() fetched
	stopFetch func() []fetched
	emit      func(Outcome) bool
	// untilVerified: the reading goroutine stops at the first verified
	// block (AssumedPrefetch); switched: VerifiedDepth applies.
	untilVerified, switched, stopped bool
}

// run processes the blocks of left, then those next returns, with the
// lock held, emitting each verdict in order (see ProcessStream). left is
// ProcessBlock's one block, parsed and checked already; it is not combined
// with a reading goroutine (cfg.Prefetch).
func (cs *Chainstate) run(cfg StreamConfig, flush flushPolicy, left []fetched, next func() ([]byte, int64, error), emit func(Outcome) bool) error {
	r := &streamRun{cs: cs, cfg: cfg, pl: cs.pipe, next: next, emit: emit}
	r.pl.reset(max(cfg.Depth, 0))
	r.pl.flush = flush
	defer r.pl.reset(0)
	depth := cfg.Prefetch
	if depth <= 0 && cfg.AssumedPrefetch > 0 {
		depth, r.untilVerified = cfg.AssumedPrefetch, true
	}
	r.fetch, r.stopFetch = cs.syncFetcher(left, next), noFetcher
	if depth > 0 {
		r.fetch, r.stopFetch = cs.fetcher(depth, next)
	}
	defer func() { r.stopFetch() }()
	for !r.stopped {
		if cfg.StopHeight >= 0 && cs.chain.Tip().Height >= cfg.StopHeight {
			break
		}
		f := r.fetch()
		if errors.Is(f.err, io.EOF) {
			break
		}
		if f.err != nil {
			if err := cs.drain(); err != nil {
				return err
			}
			r.deliver()
			return f.err
		}
		if err := r.step(&f); err != nil {
			return err
		}
	}
	if err := cs.drain(); err != nil {
		return err
	}
	r.deliver()
	return nil
}

// step processes one block: its verdict, the depth's settling, and the
// flush tail when the store is full.
func (r *streamRun) step(f *fetched) error {
	cs, pl := r.cs, r.pl
	seq := pl.base + len(pl.outs)
	pl.outs = append(pl.outs, streamOut{o: Outcome{Tag: f.tag}})
	pl.seq = seq
	res, perr := cs.processFetched(pl, f)
	pl.seq = -1
	so := &pl.outs[seq-pl.base]
	so.o.Result = res
	if so.o.Err == nil { // a rollback may have settled it already
		so.o.Err = perr
	}
	if !so.waiting {
		so.o.TipHeight = cs.validTip()
	}
	if perr != nil && !isRuleOrParse(perr) {
		// A store failure: nothing more can be trusted.
		cs.drain()
		r.deliver()
		return perr
	}
	r.onVerified()
	// Resolve finished checks without blocking, and the oldest ones while
	// too many are pending.
	if err := cs.resolve(false); err != nil {
		return err
	}
	if pl.flush != flushAfter && cs.store.NeedsFlush() {
		if err := cs.flushTail(pl.flush == flushReaders); err != nil {
			r.deliver()
			return err
		}
	}
	r.deliver()
	return nil
}

// onVerified applies what changes at the first block whose scripts are
// verified: the reading goroutine stops (AssumedPrefetch), the depth
// becomes VerifiedDepth and OnVerified is called.
func (r *streamRun) onVerified() {
	if !r.pl.verified {
		return
	}
	if r.untilVerified {
		r.fetch = r.cs.syncFetcher(r.stopFetch(), r.next)
		r.stopFetch, r.untilVerified = noFetcher, false
	}
	if !r.switched {
		r.switched = true
		r.pl.depth = max(r.pl.depth, r.cfg.VerifiedDepth)
		if r.cfg.OnVerified != nil {
			r.cfg.OnVerified()
		}
	}
}

// deliver emits the verdicts that are final, in order, until emit says
// stop.
func (r *streamRun) deliver() {
	for _, o := range r.pl.ready() {
		if !r.stopped && !r.emit(o) {
			r.stopped = true
		}
	}
}

func isRuleOrParse(err error) bool {
	var re *validate.RuleError
	return errors.As(err, &re) || errors.Is(err, ErrParse) || errors.Is(err, ErrOrphanPoolFull)
}

// processFetched parses f's block unless the reading goroutine did, and
// processes it as ProcessBlock does, lock held.
func (cs *Chainstate) processFetched(pl *pipeline, f *fetched) (Result, error) {
	raw, b, err := f.raw, f.b, f.parseErr
	if b == nil && err == nil {
		b, err = wire.ParseBlock(raw)
	}
	if err != nil {
		res := Result{Height: -1}
		if len(raw) >= wire.HeaderSize {
			res.Hash = wire.DoubleSHA256(raw[:wire.HeaderSize])
		}
		return res, fmt.Errorf("%w: %w", ErrParse, err)
	}
	pl.hash = b.Hash
	if f.b != nil {
		cs.prechecked, cs.precheck = b, f.check
		defer func() { cs.prechecked, cs.precheck = nil, nil }()
	}
	return cs.process(b, raw)
}

// ready pops the outcomes at the front that are final.
func (pl *pipeline) ready() []Outcome {
	var out []Outcome
	for len(pl.outs) > 0 && !pl.outs[0].waiting {
		out = append(out, pl.outs[0].o)
		pl.outs = pl.outs[1:]
		pl.base++
	}
	return out
}

// warm has the store ready the coin lookups of b's connect on prev, when it
// can (utxo.Warmer): its own txids only if the BIP30 check reads them.
func (cs *Chainstate) warm(b *wire.Block, prev *validate.BlockNode) {
	if w, ok := cs.store.(utxo.Warmer); ok {
		w.Warm(b, cs.v.ChecksBIP30(b, prev))
	}
}

// connectDeferred is connect with node's scripts left verifying: the delta
// is applied now, and node is marked connected when its check passes
// (resolve). Another rule's failure may stem from a pending ancestor (a
// coin it created that turns out invalid): the pending blocks are settled
// first, and if one failed node is merely its descendant. With readers
// (ProcessBlock: depth 0, nothing pending) the block's coins are read and
// its other rules checked with readers let in: nothing changes the state
// they read, the parent's, until the delta is applied under the lock while
// the scripts finish, and a script failure disconnects the block before
// the lock is released (settleNow), so a lookup waits only for the apply
// and the signatures left, and never sees an invalid block.
func (cs *Chainstate) connectDeferred(b *wire.Block, node *validate.BlockNode, skipScripts, readers bool) error {
	var (
		d     *utxo.Delta
		check *validate.ScriptCheck
		err   error
	)
	read := func() {
		cs.warm(b, node.Parent)
		d, check, err = cs.v.ConnectBlockWith(b, node.Parent, cs.store, validate.ConnectOptions{Deferred: true, SkipScripts: skipScripts})
	}
	if readers {
		cs.readersIn(read)
	} else {
		read()
	}
	if err != nil {
		var re *validate.RuleError
		if errors.As(err, &re) && len(cs.pipe.pending) > 0 {
			if derr := cs.drain(); derr != nil {
				return derr
			}
			if node.Status.Invalid() {
				return &validate.RuleError{Reason: "bad-prevblk", Detail: "an ancestor of " + node.Hash.String() + " failed its script checks"}
			}
		}
		return err
	}
	if err := cs.applyConnected(b, node, d, skipScripts); err != nil {
		return err
	}
	pl := cs.pipe
	if pl.depth == 0 && len(pl.pending) == 0 {
		return cs.settleNow(node, check)
	}
	out := -1
	if pl.seq >= 0 && pl.hash == node.Hash {
		out = pl.seq
		pl.outs[out-pl.base].waiting = true
	}
	pl.pending = append(pl.pending, pendingBlock{node: node, check: check, out: out})
	return nil
}

// applyConnected applies node's delta d (its block b connected, scripts
// skipped or not), the one step both connects share.
func (cs *Chainstate) applyConnected(b *wire.Block, node *validate.BlockNode, d *utxo.Delta, skipScripts bool) error {
	if n, ok := cs.store.(store.BlockNoter); ok {
		n.NoteBlock(b, node.Height) // for a store index that reads the block
	}
	if err := cs.apply(node, d, skipScripts); err != nil {
		return err
	}
	cs.noteConnected(node, b, d)
	cs.pipe.verified = cs.pipe.verified || !skipScripts
	return nil
}

// settleNow waits for node's scripts before anything else connects (depth
// 0), as Core's ConnectBlock: a failure disconnects node again through the
// undo data its connect left, and stepTo marks it invalid.
func (cs *Chainstate) settleNow(node *validate.BlockNode, check *validate.ScriptCheck) error {
	if err := check.Wait(); err != nil {
		if derr := cs.disconnectTo(node.Parent); derr != nil {
			return derr
		}
		return err
	}
	return cs.settled(node)
}

// settled marks node, whose scripts passed, connected and drops the block
// data that fell out of the reorg window with it: not before, so that a
// block rolled back loses nothing.
func (cs *Chainstate) settled(node *validate.BlockNode) error {
	cs.addStatus(node, validate.StatusConnected|validate.StatusHaveUndo)
	cs.announceConnected(node)
	// Keep block data only for the last `keep` blocks (reorg depth).
	if old := cs.chain.At(node.Height - cs.keep); old != nil && old.Height > 0 && old.Status.Has(validate.StatusHaveData) {
		if err := cs.store.DeleteBlock(old.Hash); err != nil {
			return err
		}
		cs.clearStatus(old, validate.StatusHaveData)
	}
	return nil
}

// drain waits for every pending block.
func (cs *Chainstate) drain() error {
	for len(cs.pipe.pending) > 0 {
		if err := cs.resolve(true); err != nil {
			return err
		}
	}
	return nil
}

// resolve settles pending blocks from the oldest: every finished one, and
// (with all, or while more than depth are pending) waits for the oldest.
func (cs *Chainstate) resolve(all bool) error {
	pl := cs.pipe
	for len(pl.pending) > 0 {
		p := pl.pending[0]
		if !all && len(pl.pending) <= pl.depth {
			select {
			case <-p.check.Done():
			default:
				return nil
			}
		}
		err := p.check.Wait()
		if err == nil {
			pl.pending = pl.pending[1:]
			if err := cs.settled(p.node); err != nil {
				return err
			}
			pl.settle(p.out, nil, cs.validTip())
			continue
		}
		return cs.rollback(err)
	}
	return nil
}

// validTip is the height of the newest block whose scripts have passed.
func (cs *Chainstate) validTip() int32 {
	if len(cs.pipe.pending) > 0 {
		return cs.pipe.pending[0].node.Height - 1
	}
	return cs.chain.Tip().Height
}

func (pl *pipeline) settle(seq int, err error, tip int32) {
	if seq < pl.base {
		return
	}
	so := &pl.outs[seq-pl.base]
	so.waiting = false
	if err != nil {
		so.o.Err = err
	}
	so.o.TipHeight = tip
}

// rollback handles the oldest pending block's script failure: cancel the
// later checks, disconnect back to its parent, mark it invalid and move to
// the best valid chain, as a synchronous ActivateBestChain would.
func (cs *Chainstate) rollback(err error) error {
	pl := cs.pipe
	bad := pl.pending[0]
	later := pl.pending[1:]
	pl.pending = nil
	for _, p := range later {
		p.check.Cancel()
	}
	cs.rolledBack += len(later)
	if derr := cs.disconnectTo(bad.node.Parent); derr != nil {
		return derr
	}
	reason := validate.Reason(err)
	cs.markInvalid(bad.node, reason)
	cs.log.Warn("invalid block on the best branch", "hash", bad.node.Hash, "height", bad.node.Height, "reason", reason)
	tip := cs.chain.Tip().Height
	if bad.out >= 0 {
		pl.settle(bad.out, err, tip)
	} else {
		cs.log.Warn("orphan rejected", "hash", bad.node.Hash, "err", err)
	}
	for _, p := range later {
		perr := &validate.RuleError{Reason: "bad-prevblk", Detail: "previous block " + bad.node.Hash.String() + " is invalid"}
		if p.out >= 0 {
			pl.settle(p.out, perr, tip)
		}
	}
	// The rest runs at depth 0: nothing else is pending now.
	depth := pl.depth
	pl.depth = 0
	defer func() { pl.depth = depth }()
	if best := cs.bestCandidate(); best != cs.chain.Tip() {
		var re *validate.RuleError
		if aerr := cs.activateBestChain(best); aerr != nil && !errors.As(aerr, &re) {
			return aerr
		}
	}
	return nil
}
