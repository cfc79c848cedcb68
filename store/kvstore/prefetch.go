package kvstore

import (
	"errors"
	"sync"
	"sync/atomic"

	"utxod/backends"
	"utxod/wire"
)

// prefetchReaders is the most store reads a block's prefetch keeps in
// flight: with a cold page cache each miss is a disk read, and a disk
// serves a queue of them far faster than the same reads one after another.
// 16 were no faster cold and slower warm (bench/results/scale.md).
const prefetchReaders = 4

// fetched is one store read of prefetch: Get's value and error.
type fetched struct {
	v   []byte
	err error
}

// inflight holds the reads prefetch started that no load has taken yet:
// txids[i] is read into got[i], then done[i] is closed. The readers touch
// only those; slot (txid → i) and everything else belong to the cache's
// owner, as the cache does.
type inflight struct {
	slot  map[wire.Hash]int
	txids []wire.Hash // its array is reused once settle has run
	got   []fetched
	done  []chan struct{}
	wg    sync.WaitGroup
}

// prefetch starts reading the records b's connect will look up that the
// cache lacks, prefetchReaders at a time, and returns without waiting: the
// txids its inputs spend, in the order connect asks for them, then (own)
// its own txids, which Core's BIP30 check asks for. So the
// input scripts, which start as each transaction's inputs are found, run
// while the later records are still being read. A load of a txid in flight
// waits for its read and caches it (take); a failed read is not cached, and
// load reads it again. A store that takes advice (backends.Advisor) is
// handed the keys alongside the readers.
func (c *coinCache) prefetch(b *wire.Block, own bool) {
	c.settle()
	if c.complete {
		return // misses are not read (load)
	}
	f := &c.fly
	if f.slot == nil {
		f.slot = make(map[wire.Hash]int)
	}
	miss := f.txids[:0]
	need := func(h *wire.Hash) {
		if _, ok := f.slot[*h]; ok {
			return
		}
		if _, ok := c.entries.get(h); ok {
			return
		}
		f.slot[*h] = len(miss)
		miss = append(miss, *h)
	}
	for i := 1; i < len(b.Txs); i++ {
		for j := range b.Txs[i].Inputs {
			need(&b.Txs[i].Inputs[j].PrevHash)
		}
	}
	if own {
		for i := range b.Txs {
			need(&b.Txs[i].TxID)
		}
	}
	f.txids = miss
	if len(miss) < 2 {
		clear(f.slot) // nothing to overlap: load reads it
		return
	}
	f.got = make([]fetched, len(miss))
	f.done = make([]chan struct{}, len(miss))
	for i := range f.done {
		f.done[i] = make(chan struct{})
	}
	kv, got, done := c.kv, f.got, f.done
	if a, ok := kv.(backends.Advisor); ok {
		// Alongside the readers: the pages asked for while they start.
		f.wg.Go(func() {
			keys := make([][]byte, len(miss))
			buf := make([]byte, 0, len(miss)*33)
			for i := range miss {
				off := len(buf)
				buf = appendHashKey(buf, prefixCoins, miss[i])
				keys[i] = buf[off:len(buf):len(buf)]
			}
			a.Advise(keys)
		})
	}
	var next atomic.Int64
	for range min(prefetchReaders, len(miss)) {
		f.wg.Go(func() {
			var key [33]byte
			key[0] = prefixCoins
			for {
				i := int(next.Add(1) - 1)
				if i >= len(miss) {
					return
				}
				copy(key[1:], miss[i][:])
				got[i].v, got[i].err = kv.Get(key[:])
				close(done[i])
			}
		})
	}
}

// inFlight returns the channel closed when prefetch's read of txid ends,
// or nil when none is in flight.
func (c *coinCache) inFlight(txid wire.Hash) <-chan struct{} {
	if i, ok := c.fly.slot[txid]; ok {
		return c.fly.done[i]
	}
	return nil
}

// take waits for the read of txid that prefetch started, if any, and
// caches it as load would; ok is false when there was none, or when it
// failed (load reads it again and reports the error).
func (c *coinCache) take(txid wire.Hash) (e cacheEntry, ok bool, err error) {
	f := &c.fly
	i, ok := f.slot[txid]
	if !ok {
		return 0, false, nil
	}
	delete(f.slot, txid)
	<-f.done[i]
	r := f.got[i]
	f.got[i] = fetched{}
	if r.err != nil && !errors.Is(r.err, backends.ErrNotFound) {
		return 0, false, nil
	}
	e, err = c.install(txid, r.v, r.err)
	return e, err == nil, err
}

// settle waits for every read prefetch started and drops those no load
// took: run before anything writes the store or drops cache entries, so
// that a read taken later never predates a write.
func (c *coinCache) settle() {
	f := &c.fly
	f.wg.Wait()
	clear(f.slot)
	f.got, f.done = nil, nil
}
