package chainstate

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"utxod/wire"
)

// ErrClosed refuses a block submitted after Close.
var ErrClosed = errors.New("chainstate: closed to new blocks")

// submitQueue is the node's one submission slot: every producer of blocks
// in the process (the HTTP API, a follower) queues on it, so their blocks
// never interleave and shutdown knows the one block in flight.
type submitQueue struct {
	slot   chan struct{} // capacity 1; taken for good by Close
	done   chan struct{} // closed by Close: wakes queued submissions
	closed atomic.Bool
	once   sync.Once

	mu       sync.Mutex
	observed []func(time.Duration)
}

func newSubmitQueue() submitQueue {
	return submitQueue{slot: make(chan struct{}, 1), done: make(chan struct{})}
}

// Submit processes raw as ProcessBlock does, behind the one submission
// slot: it waits for its turn until ctx ends (returning ctx's error) and
// refuses with ErrClosed once Close has been called. It is SubmitWith
// without options (durable.go).
func (cs *Chainstate) Submit(ctx context.Context, raw []byte) (Result, error) {
	return cs.SubmitWith(ctx, raw, SubmitOptions{})
}

// submitOne is Submit's turn in the slot. A flush the block makes due runs
// after the answer (unless durable follows: makeDurable flushes anyway),
// still holding the slot (flushAfter): the next block waits for it, lookups
// do not.
func (cs *Chainstate) submitOne(ctx context.Context, raw []byte, durable bool) (Result, error) {
	q := &cs.submit
	select {
	case q.slot <- struct{}{}:
	case <-q.done:
		return Result{Height: -1}, ErrClosed
	case <-ctx.Done():
		return Result{Height: -1}, ctx.Err()
	}
	// Released even if processing panics (the API recovers handler panics),
	// unless a flush after the answer takes it over.
	held := true
	defer func() {
		if held {
			<-q.slot
		}
	}()
	if q.closed.Load() {
		return Result{Height: -1}, ErrClosed
	}
	if err := cs.retryFlush(); err != nil {
		return Result{Height: -1}, err
	}
	policy := flushAfter
	if durable {
		policy = flushReaders
	}
	start := time.Now()
	res, due, err := cs.processBlock(raw, policy)
	q.observe(time.Since(start))
	if due {
		held = false
		go cs.flushAfter()
	}
	return res, err
}

// flushAfter is the flush a submitted block made due, run after the answer
// with the submission slot held, which it releases. A failure is kept for
// the next submission (retryFlush), which is answered with it if the flush
// fails again, as the block that made it due would have been.
func (cs *Chainstate) flushAfter() {
	defer func() { <-cs.submit.slot }()
	cs.lock()
	defer cs.unlock()
	if err := cs.flushTail(true); err != nil {
		cs.flushErr = err
		cs.log.Error("flush after a block's answer failed; the next block retries it first", "err", err)
	}
}

// retryFlush retries a failed flushAfter (the slot held).
func (cs *Chainstate) retryFlush() error {
	if cs.flushErr == nil {
		return nil
	}
	cs.lock()
	defer cs.unlock()
	cs.flushErr = cs.flushTail(true)
	return cs.flushErr
}

// ObserveSubmits has f called with the processing time of every block
// taken through Submit, the wait for the slot left out (metrics).
func (cs *Chainstate) ObserveSubmits(f func(time.Duration)) {
	q := &cs.submit
	q.mu.Lock()
	defer q.mu.Unlock()
	q.observed = append(q.observed, f)
}

func (q *submitQueue) observe(d time.Duration) {
	q.mu.Lock()
	fs := q.observed
	q.mu.Unlock()
	for _, f := range fs {
		f(d)
	}
}

// Close stops taking blocks: queued and later submissions get ErrClosed,
// the block in flight finishes, and the state is flushed through the flush
// tail. Reads keep working. Later calls only flush.
func (cs *Chainstate) Close() error {
	q := &cs.submit
	q.once.Do(func() {
		q.closed.Store(true)
		close(q.done)
		q.slot <- struct{}{} // waits for the block in flight; never released
	})
	return cs.Flush()
}

// orphanSet remembers the hashes of recently held orphan blocks (the pool
// keeps them by parent, outside the block index) so that Lookup can report
// them. It is bounded; the oldest entries are forgotten first. The
// chainstate's lock guards it.
type orphanSet struct {
	prev  map[wire.Hash]wire.Hash
	order []wire.Hash
}

const maxTrackedOrphans = 1024

func (o *orphanSet) add(hash, prev wire.Hash) {
	if o.prev == nil {
		o.prev = make(map[wire.Hash]wire.Hash)
	}
	if _, ok := o.prev[hash]; ok {
		return
	}
	if len(o.order) >= maxTrackedOrphans {
		delete(o.prev, o.order[0])
		o.order = o.order[1:]
	}
	o.prev[hash] = prev
	o.order = append(o.order, hash)
}

// orphanInfo is Lookup's answer for an orphan.
func (o *orphanSet) info(hash wire.Hash) (BlockInfo, bool) {
	prev, ok := o.prev[hash]
	if !ok {
		return BlockInfo{}, false
	}
	return BlockInfo{Hash: hash, Header: wire.Header{PrevBlock: prev}, Height: -1, Orphan: true}, true
}
