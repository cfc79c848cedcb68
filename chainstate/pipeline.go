package chainstate

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"utxod/validate"
	"utxod/wire"
)

// Cross-block pipelining (ProcessStream). A block that extends the tip is
// connected as soon as its non-script rules pass: its coin changes are
// applied to the cache in block order while its input scripts are still
// being verified on the validator's workers, so the next block's UTXO work
// overlaps the previous blocks' signature checks. Nothing optimistic is
// ever visible: the stream holds the chainstate's lock while blocks are
// pending, and every pending block is resolved before a flush, before any
// block that does not extend the tip (side branch, reorg, orphan parent),
// and before the lock is released. If a pending block's scripts fail, the
// chain is disconnected back to its parent through the undo data the
// connects left in the cache, the block is marked invalid (its pending
// descendants with it) and the chain moves to the best valid candidate,
// exactly as a synchronous ActivateBestChain would have left it. One
// difference is visible in the verdicts of the invalid block's descendants:
// synchronously the first one is refused ("bad-prevblk") before it is
// indexed, so the next ones wait as orphans; pipelined, descendants already
// connected are marked failed with it and reported "bad-prevblk". Either
// way none of them is connected.

// StreamConfig configures ProcessStream.
type StreamConfig struct {
	// Depth is the most blocks whose scripts may be pending at once
	// (default 8; 1 still overlaps one block's scripts with the next
	// block's connect). Negative disables pipelining: every block is
	// verified before the next is read, as ProcessBlock does.
	Depth int
	// StopHeight stops reading once the active chain reaches it
	// (negative: read to the end).
	StopHeight int32
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

type pipeline struct {
	depth   int
	pending []pendingBlock
	outs    []streamOut // submitted blocks awaiting their verdict, in order
	base    int         // outs[0]'s sequence number
}

type streamOut struct {
	o       Outcome
	waiting bool // on a pending block's scripts
}

// ProcessStream processes the blocks next returns (until io.EOF) like
// ProcessBlock, with cross-block pipelining, and calls emit with each
// block's outcome in stream order. Invalid blocks are reported through
// emit, not as ProcessStream's error; emit returning false stops the
// stream after the blocks already read are resolved. ProcessStream returns
// next's error, a store failure, or nil. The chainstate stays locked for
// the whole stream (readers wait until it ends; it is meant for imports,
// not for a serving node); emit and next run under that lock and must not
// call the chainstate's methods.
func (cs *Chainstate) ProcessStream(cfg StreamConfig, next func() (raw []byte, tag int64, err error), emit func(Outcome) bool) error {
	if cfg.Depth == 0 {
		cfg.Depth = 8
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	pl := &pipeline{depth: cfg.Depth}
	if cfg.Depth > 0 {
		cs.pl = pl
	}
	defer func() { cs.pl = nil }()
	stopped := false
	deliver := func() {
		for _, so := range pl.ready() {
			if !stopped && !emit(so) {
				stopped = true
			}
		}
	}
	for !stopped {
		if cfg.StopHeight >= 0 && cs.chain.Tip().Height >= cfg.StopHeight {
			break
		}
		raw, tag, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if derr := cs.drain(); derr != nil {
				return derr
			}
			deliver()
			return err
		}
		raw = bytes.Clone(raw)
		seq := pl.base + len(pl.outs)
		pl.outs = append(pl.outs, streamOut{o: Outcome{Tag: tag}})
		cs.streamSeq = seq
		res, perr := cs.processParsed(raw)
		cs.streamSeq = -1
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
			deliver()
			return perr
		}
		// Resolve finished checks without blocking, and the oldest ones
		// while too many are pending.
		if err := cs.resolve(false); err != nil {
			return err
		}
		if cs.store.NeedsFlush() {
			if err := cs.drain(); err != nil {
				return err
			}
			if err := cs.flushLocked(); err != nil {
				deliver()
				return err
			}
		}
		deliver()
	}
	if err := cs.drain(); err != nil {
		return err
	}
	deliver()
	return nil
}

func isRuleOrParse(err error) bool {
	var re *validate.RuleError
	return errors.As(err, &re) || errors.Is(err, ErrParse) || errors.Is(err, ErrOrphanPoolFull)
}

// processParsed is ProcessBlock's body for a stream (lock held, raw owned).
func (cs *Chainstate) processParsed(raw []byte) (Result, error) {
	b, err := wire.ParseBlock(raw)
	if err != nil {
		res := Result{Height: -1}
		if len(raw) >= wire.HeaderSize {
			res.Hash = wire.DoubleSHA256(raw[:wire.HeaderSize])
		}
		return res, fmt.Errorf("%w: %w", ErrParse, err)
	}
	cs.streamHash = b.Hash
	res, err := cs.processLocked(b, raw)
	if err != nil {
		return res, err
	}
	cs.processOrphans(b.Hash)
	if cs.lazy.pending() > materializeAt {
		cs.lazy.materialize(&cs.stats.MuHash)
	}
	return res, nil
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

// pipelining reports whether a connect may leave its scripts pending.
func (cs *Chainstate) pipelining() bool { return cs.pl != nil }

// deferConnect records a connected block whose scripts are running.
func (cs *Chainstate) deferConnect(node *validate.BlockNode, check *validate.ScriptCheck) {
	out := -1
	if cs.streamSeq >= 0 && cs.streamHash == node.Hash {
		out = cs.streamSeq
		cs.pl.outs[out-cs.pl.base].waiting = true
	}
	cs.pl.pending = append(cs.pl.pending, pendingBlock{node: node, check: check, out: out})
}

// drain waits for every pending block.
func (cs *Chainstate) drain() error {
	if cs.pl == nil {
		return nil
	}
	for len(cs.pl.pending) > 0 {
		if err := cs.resolve(true); err != nil {
			return err
		}
	}
	return nil
}

// resolve settles pending blocks from the oldest: every finished one, and
// (with all, or while more than depth are pending) waits for the oldest.
func (cs *Chainstate) resolve(all bool) error {
	pl := cs.pl
	if pl == nil {
		return nil
	}
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
			cs.index.AddStatus(p.node, validate.StatusConnected|validate.StatusHaveUndo)
			pl.settle(p.out, nil, cs.validTip())
			continue
		}
		return cs.rollback(err)
	}
	return nil
}

// validTip is the height of the newest block whose scripts have passed.
func (cs *Chainstate) validTip() int32 {
	if cs.pl != nil && len(cs.pl.pending) > 0 {
		return cs.pl.pending[0].node.Height - 1
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
	pl := cs.pl
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
	cs.index.MarkInvalid(bad.node, reason)
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
	// The rest runs synchronously: nothing else is pending now.
	cs.pl = nil
	defer func() { cs.pl = pl }()
	if best := cs.bestCandidate(); best != cs.chain.Tip() {
		var re *validate.RuleError
		if aerr := cs.activateBestChain(best); aerr != nil && !errors.As(aerr, &re) {
			return aerr
		}
	}
	return nil
}
