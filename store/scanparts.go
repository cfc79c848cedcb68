package store

import (
	"sync"
	"sync/atomic"
)

// PartsPerWorker is how many txid ranges ScanParts cuts per worker: the
// ranges are handed out as workers free up, so with several per worker the
// last ones end close together even when one worker is slowed down. Each
// range costs an iterator and its first seek (on RocksDB a 2 MiB readahead
// per table file, milliseconds), which is why there are not more.
const PartsPerWorker = 4

// ScanParts is ParallelScanner's schedule, for scanners to share: the txid
// space is cut into PartsPerWorker*workers parts of equal width on the
// first two txid bytes (txids are uniform hashes, so the parts hold about
// as many coins), walked by workers goroutines, worker w starting with part
// w, the rest handed out in ascending order as workers free up. walk(w, lo,
// hi, stop) walks, on worker w, the coins whose first two txid bytes (big
// endian) are in [lo, hi), and returns nil early once stop is set. The first
// error stops every worker; ScanParts returns it once all have stopped.
// With one worker (or fewer) the single part [0, 65536) is walked on the
// calling goroutine.
func ScanParts(workers int, walk func(worker, lo, hi int, stop *atomic.Bool) error) error {
	var stop atomic.Bool
	if workers <= 1 {
		return walk(0, 0, 1<<16, &stop)
	}
	parts := workers * PartsPerWorker
	bound := func(p int) int { return p << 16 / parts }
	var (
		next  atomic.Int64 // parts handed out after the first ones
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for p := w; p < parts && !stop.Load(); p = workers + int(next.Add(1)-1) {
				if err := walk(w, bound(p), bound(p+1), &stop); err != nil {
					once.Do(func() { first = err })
					stop.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
