package snapshot

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"utxod/utxo"
	"utxod/wire"
)

// Source is a consistent copy of a coin set (the Scanner of a
// chainstate.CoinSnapshot is one).
type Source interface {
	// Scan calls fn for every coin in hash_serialized_3 order: txids by
	// raw bytes, then vouts numerically.
	Scan(fn func(utxo.Entry) error) error
}

// RecordSource is a Source that can also hand out each txid's v5 record
// (utxo.EncodeRecord) in ascending txid order; rec is valid only during the
// call. Dump prefers it: the record already holds Core's compressed amounts
// and scripts.
type RecordSource interface {
	ScanRecords(fn func(txid wire.Hash, rec []byte) error) error
}

// RangeRecordSource is a RecordSource whose records can also be walked by
// txid range, from several goroutines at once; Dump then encodes the
// ranges in parallel and writes them in order.
type RangeRecordSource interface {
	RecordSource
	// ScanRecordsRange is ScanRecords restricted to the txids whose first
	// two bytes (big endian) are in [lo, hi), 0 <= lo < hi <= 65536.
	ScanRecordsRange(lo, hi int, fn func(txid wire.Hash, rec []byte) error) error
}

// Dump writes the snapshot of src, whose coin count and base block m
// gives, to w, and returns the number of coins written. Memory stays
// bounded: one txid's coins are buffered at a time, or with a
// RangeRecordSource a few txid ranges of about dumpPartCoins coins.
func Dump(w io.Writer, m Metadata, src Source) (uint64, error) {
	return dumpWorkers(w, m, src, min(runtime.GOMAXPROCS(0), maxDumpWorkers))
}

// maxDumpWorkers caps a dump's workers: the output is one sequential
// stream, and the ranges in flight (2 per worker, ~5 MB each on mainnet)
// are its memory.
const maxDumpWorkers = 8

// dumpWorkers is Dump on up to workers goroutines (1: the ordered single walk,
// the control arm of the parallel one).
func dumpWorkers(w io.Writer, m Metadata, src Source, workers int) (uint64, error) {
	sw, err := NewWriter(w, m)
	if err != nil {
		return 0, err
	}
	rrs, ranged := src.(RangeRecordSource)
	rs, records := src.(RecordSource)
	switch {
	case ranged && workers > 1:
		err = dumpParallel(sw, rrs, m.Coins, workers)
	case records:
		err = rs.ScanRecords(sw.WriteRecord)
	default:
		err = src.Scan(sw.Add)
	}
	if err == nil {
		err = sw.Close()
	}
	return sw.Written(), err
}

// dumpPartCoins is about how many coins one txid range of a parallel dump
// holds (~5 MB of output on mainnet's coin mix): the ranges in flight are
// the dump's memory, and each range costs an iterator and a seek.
const dumpPartCoins = 100_000

// dumpPart is one txid range's encoded groups.
type dumpPart struct {
	buf []byte
	enc groupEncoder
	err error
}

// dumpParallel encodes the txid ranges of src on workers goroutines and
// writes them to sw in ascending order. At most 2*workers ranges are
// encoded but not yet written, which bounds memory.
func dumpParallel(sw *Writer, src RangeRecordSource, coins uint64, workers int) error {
	parts := int(min(max(coins/dumpPartCoins, uint64(4*workers)), 1<<16))
	bound := func(p int) int { return p << 16 / parts }
	window := 2 * workers
	results := make([]chan *dumpPart, parts)
	for i := range results {
		results[i] = make(chan *dumpPart, 1)
	}
	tokens := make(chan struct{}, window) // one per range taken and not yet written
	free := make(chan *dumpPart, window)  // written ranges' buffers, for reuse
	done := make(chan struct{})           // closed when the writer stops
	var (
		next atomic.Int64 // the next range to take
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case tokens <- struct{}{}:
				case <-done:
					return
				}
				p := int(next.Add(1) - 1)
				if p >= parts {
					return
				}
				var d *dumpPart
				select {
				case d = <-free:
					d.buf = d.buf[:0]
					d.enc.reset()
				default:
					d = &dumpPart{}
				}
				d.err = src.ScanRecordsRange(bound(p), bound(p+1), func(txid wire.Hash, rec []byte) (err error) {
					d.buf, err = d.enc.appendRecord(d.buf, txid, rec)
					return err
				})
				results[p] <- d
			}
		}()
	}
	defer func() {
		close(done)
		wg.Wait()
	}()
	var last wire.Hash
	for p := range parts {
		d := <-results[p]
		if d.err != nil {
			return d.err
		}
		if d.enc.coins > 0 {
			if sw.written > 0 && bytes.Compare(d.enc.first[:], last[:]) <= 0 {
				return fmt.Errorf("%w: writer got %s after %s", ErrGroupOrder, d.enc.first, last)
			}
			last = d.enc.last
			if err := sw.write(d.buf, d.enc.coins); err != nil {
				return err
			}
		}
		<-tokens
		select {
		case free <- d:
		default:
		}
	}
	return nil
}
