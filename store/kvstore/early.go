package kvstore

import (
	"sync"
	"sync/atomic"

	"utxod/backends"
	"utxod/wire"
)

// earlyBatchBytes is how many bytes of undo records and raw blocks the
// Store collects before handing them to its background writer (a variable
// for tests). With one batch queued and one being written, at most about
// three batches' data are held twice (pending map and batch): larger batches
// or a longer queue only raise peak RSS (bench/results/validation.md).
var earlyBatchBytes = 1 << 20

// pendingData is an undo record or raw block that a flush has not yet made
// durable: b nil is a deletion (written by the next flush), otherwise a put
// that is in the background writer's batch of generation gen (never written
// early when gen is unwritten).
type pendingData struct {
	b   []byte
	gen uint64
}

// unwritten marks a put that is not in any early batch: the next flush
// writes it.
const unwritten = ^uint64(0)

// earlyWriter writes undo records and raw blocks ahead of the flush that
// references them, as Core appends blocks and undo data to its blk/rev files
// as it connects and FlushStateToDisk then writes only the coins and the tip
// (validation.cpp: FlushStateToDisk syncs the block files first). Writing
// them from a background goroutine keeps them out of the flush batch and
// out of memory until the flush.
//
// Only puts go early: deletions stay in the flush batch, so data the
// flushed chain still references is never removed before that chain is
// replaced on disk. An early put the flush never references (a crash before
// the flush, a block disconnected meanwhile) is harmless: keys are block
// hashes, a block's undo record depends only on the block and its parent,
// and reconnecting writes the same value again.
//
// Batches are written with backends.Sync by default (ordering and
// durability then do not rest on any store's NoSync semantics; see the bbolt
// package's caveat), or NoSync when Options.UnsyncedEarlyWrites says so (the flush's
// synced write makes them durable before the tip that references them),
// after the same free-space check as a flush. The first failure stops the writer:
// later batches are skipped, their data stays pending in the Store, and
// the next flush writes everything in its own batch; the error is cleared
// when a flush succeeds.
//
// Methods other than the goroutine's loop run on the Store's owner
// (under the chainstate's write lock).
type earlyWriter struct {
	kv      backends.KV
	minFree uint64
	mode    backends.SyncMode // of every batch (Options.UnsyncedEarlyWrites)

	cur      *backends.Batch
	curGen   uint64
	curKeys  []earlyKey
	inflight []earlyFlight        // handed off, oldest first
	queue    chan earlyFlight     // nil until the goroutine starts (first handoff)
	free     chan *backends.Batch // written batches, reset, for reuse
	pending  sync.WaitGroup       // batches handed off and not yet processed
	exited   chan struct{}

	written atomic.Uint64 // highest generation written successfully
	// unsynced: a NoSync batch was written since the last flush's synced
	// write (which makes it durable).
	unsynced atomic.Bool
	mu       sync.Mutex
	err      error // first failure since the last successful flush
}

type earlyKey struct {
	block bool
	h     wire.Hash
}

type earlyFlight struct {
	gen   uint64
	batch *backends.Batch
	keys  []earlyKey
}

func newEarlyWriter(kv backends.KV, minFree uint64) *earlyWriter {
	return &earlyWriter{kv: kv, minFree: minFree, mode: backends.Sync, curGen: 1}
}

// failed returns the writer's latched error.
func (w *earlyWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// add records key → value for the current batch and returns its generation,
// or unwritten when the writer has failed (the flush writes it instead).
func (w *earlyWriter) add(k earlyKey, key, value []byte) uint64 {
	if w.failed() != nil {
		return unwritten
	}
	if w.cur == nil {
		select {
		case w.cur = <-w.free:
		default:
			w.cur = backends.NewBatch()
			w.cur.Grow(earlyBatchBytes+len(key)+len(value), 64)
		}
	}
	w.cur.Put(key, value)
	w.curKeys = append(w.curKeys, k)
	return w.curGen
}

// full reports whether the current batch should be handed off.
func (w *earlyWriter) full() bool { return w.cur.Size() >= earlyBatchBytes }

// handoff queues the current batch for the background goroutine (blocking
// while one is queued).
func (w *earlyWriter) handoff() {
	if w.cur.Len() == 0 {
		return
	}
	if w.queue == nil {
		w.queue = make(chan earlyFlight, 1)
		w.free = make(chan *backends.Batch, 4)
		w.exited = make(chan struct{})
		go w.loop()
	}
	f := earlyFlight{gen: w.curGen, batch: w.cur, keys: w.curKeys}
	w.inflight = append(w.inflight, earlyFlight{gen: f.gen, keys: f.keys})
	w.pending.Add(1)
	w.queue <- f
	w.cur, w.curKeys = nil, nil
	w.curGen++
}

func (w *earlyWriter) loop() {
	defer close(w.exited)
	for f := range w.queue {
		if w.failed() == nil {
			err := backends.CheckSpace(w.kv, 2*uint64(f.batch.Size()), w.minFree)
			if err == nil {
				err = w.kv.Write(f.batch, w.mode)
			}
			if err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
			} else {
				if w.mode != backends.Sync {
					w.unsynced.Store(true)
				}
				w.written.Store(f.gen)
			}
		}
		f.batch.Reset() // the stores copy a batch during Write
		select {
		case w.free <- f.batch:
		default:
		}
		w.pending.Done()
	}
}

// collect calls fn, oldest first, with the keys of every handed-off batch
// that is now durable, and forgets those batches.
func (w *earlyWriter) collect(fn func(gen uint64, keys []earlyKey)) {
	done := w.written.Load()
	i := 0
	for ; i < len(w.inflight) && w.inflight[i].gen <= done; i++ {
		fn(w.inflight[i].gen, w.inflight[i].keys)
	}
	w.inflight = w.inflight[i:]
}

// drain hands off the current batch and waits until every batch handed off
// has been written or skipped.
func (w *earlyWriter) drain() {
	w.handoff()
	w.pending.Wait()
}

// reset forgets the batches of a failed stretch after a successful flush
// wrote their data, and clears the error.
func (w *earlyWriter) reset() {
	w.inflight = nil
	w.mu.Lock()
	w.err = nil
	w.mu.Unlock()
}

// close stops the goroutine after the batches already queued (their data is
// early and harmless either way). The current batch is dropped, as a
// Store's Close drops every unflushed change.
func (w *earlyWriter) close() {
	if w.queue != nil {
		close(w.queue)
		<-w.exited
		w.queue = nil
	}
	w.cur, w.curKeys, w.inflight = nil, nil, nil
}
