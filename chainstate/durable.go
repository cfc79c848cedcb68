package chainstate

import (
	"context"
	"sync"
	"sync/atomic"

	"utxod/store"
	"utxod/validate"
	"utxod/wire"
)

// FlushedTip is the tip of the chain state on disk: the tip of the last
// flush whose synced batch returned (or the state Load found at open),
// where the node reopens after a crash. A store that keeps nothing across
// a restart (store.Volatile) has genesis there for good.
type FlushedTip struct {
	Hash   wire.Hash
	Height int32
}

// SubmitOptions are the options of SubmitWith.
type SubmitOptions struct {
	// Durable returns only once the block survives a crash: a block
	// connected (or a duplicate) on the active chain above the flushed tip
	// is flushed (flushTail) before the answer, whose Durable is then
	// true. Durable submissions share flushes: one waiting while another's
	// flush runs finds its block covered by the next flush, or by that one.
	// A side branch or orphan is not flushed for (its Durable is false),
	// nor is a block a reorganisation took off the active chain before its
	// flush.
	Durable bool
}

// flushedState is the flushed tip: the node under cs.mu, a copy published
// for Flushed, which takes no lock.
type flushedState struct {
	node *validate.BlockNode
	pub  atomic.Pointer[FlushedTip]
	// mu admits one durable flush at a time: a submission whose block was
	// connected while another's flush ran waits here, not on the
	// chainstate's lock, so durable flushes never queue ahead of the
	// connects of other submitters more than one at a time.
	mu sync.Mutex
}

// noteFlushed records the tip as on disk (cs.mu held exclusively): after
// Load, and after a flush's synced batch has returned, never before.
func (cs *Chainstate) noteFlushed() {
	n := cs.chain.Tip()
	if _, volatile := cs.store.(store.Volatile); volatile {
		n = cs.index.Genesis()
	}
	cs.flushed.node = n
	cs.flushed.pub.Store(&FlushedTip{Hash: n.Hash, Height: n.Height})
}

// Flushed returns the tip of the state on disk (FlushedTip).
func (cs *Chainstate) Flushed() FlushedTip {
	if f := cs.flushed.pub.Load(); f != nil {
		return *f
	}
	return FlushedTip{}
}

// SubmitWith is Submit with options: the answer says how durable it is
// (Result.Flushed, Result.Durable), and with Durable it is made durable
// first. A failed durable flush returns its error (the block stays
// connected; the state stays pending for the next flush).
func (cs *Chainstate) SubmitWith(ctx context.Context, raw []byte, opts SubmitOptions) (Result, error) {
	res, err := cs.submitOne(ctx, raw, opts.Durable)
	if err != nil {
		return res, err
	}
	if opts.Durable && (res.Status == StatusConnected || res.Status == StatusDuplicate) && !res.Durable {
		return cs.makeDurable(res)
	}
	return res, nil // durability as ProcessBlock's lock hold ended
}

// makeDurable flushes unless res's block is already at or below the
// flushed tip, or no longer on the active chain. It runs after the
// submission slot is released, so the next submitter connects while this
// one waits for its flush, and a flush covers every block connected
// before it.
func (cs *Chainstate) makeDurable(res Result) (Result, error) {
	cs.flushed.mu.Lock()
	defer cs.flushed.mu.Unlock()
	cs.lock()
	defer cs.unlock()
	if n := cs.index.Lookup(res.Hash); n != nil && cs.chain.Contains(n) && !n.IsAncestorOf(cs.flushed.node) {
		if err := cs.flushTail(true); err != nil {
			return res, err
		}
	}
	cs.durabilityLocked(&res)
	return res, nil
}

// durabilityLocked fills in res's Flushed and Durable (cs.mu held).
func (cs *Chainstate) durabilityLocked(res *Result) {
	f := cs.flushed.node
	res.Flushed = FlushedTip{Hash: f.Hash, Height: f.Height}
	n := cs.index.Lookup(res.Hash)
	res.Durable = n != nil && cs.chain.Contains(n) && n.IsAncestorOf(f)
}
