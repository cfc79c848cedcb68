package kvstore

import (
	"bytes"
	"errors"
	"slices"
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

// prefetch reads the records b's connect will look up that the cache
// lacks, prefetchReaders at a time, and caches them as load would (absent
// ones as entries without output): the txids its inputs spend and its own
// txids (Core's BIP30 check, then the insert of its outputs). The reads
// run on their own goroutines (a backends.Reader is safe for concurrent
// use); the cache, which is not, is filled here afterwards. A failed read
// is not cached: connect's load reads it again and reports the error.
func (c *coinCache) prefetch(b *wire.Block) {
	if c.complete {
		return // misses are not read (load)
	}
	miss := c.missing[:0]
	for i := range b.Txs {
		tx := &b.Txs[i]
		if i > 0 {
			for j := range tx.Inputs {
				if _, ok := c.entries.get(&tx.Inputs[j].PrevHash); !ok {
					miss = append(miss, tx.Inputs[j].PrevHash)
				}
			}
		}
		if _, ok := c.entries.get(&tx.TxID); !ok {
			miss = append(miss, tx.TxID)
		}
	}
	// In key order, each once.
	slices.SortFunc(miss, func(x, y wire.Hash) int { return bytes.Compare(x[:], y[:]) })
	miss = slices.Compact(miss)
	c.missing = miss[:0]
	if len(miss) < 2 {
		return // nothing to overlap
	}
	got := make([]fetched, len(miss))
	readCoins(c.kv, miss, got)
	for i := range miss {
		if got[i].err == nil || errors.Is(got[i].err, backends.ErrNotFound) {
			_, _ = c.install(miss[i], got[i].v, got[i].err) // an error: load reports it
		}
	}
}

// readCoins sets got[i] to kv's Get of txids[i]'s coin key, from at most
// prefetchReaders goroutines, and returns when every read is done.
func readCoins(kv backends.Reader, txids []wire.Hash, got []fetched) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(prefetchReaders, len(txids)) {
		wg.Go(func() {
			var key [33]byte
			key[0] = prefixCoins
			for {
				i := int(next.Add(1) - 1)
				if i >= len(txids) {
					return
				}
				copy(key[1:], txids[i][:])
				got[i].v, got[i].err = kv.Get(key[:])
			}
		})
	}
	wg.Wait()
}
