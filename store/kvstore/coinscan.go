package kvstore

import (
	"fmt"
	"sync/atomic"

	"utxod/backends"
	"utxod/store"
	"utxod/utxo"
	"utxod/wire"
)

// scanner walks the 'c' records of a store snapshot.
type scanner struct{ snap backends.Snapshot }

var _ store.ParallelScanner = (*scanner)(nil)

// Scan implements store.Scanner.
func (k *scanner) Scan(fn func(utxo.Entry) error) error {
	return k.walk(backends.PrefixRange([]byte{prefixCoins}), nil, fn)
}

// ScanParallel implements store.ParallelScanner on store.ScanParts'
// schedule. All iterators come from the one snapshot, which
// backends.Reader allows from several goroutines.
func (k *scanner) ScanParallel(workers int, fn func(worker int, e utxo.Entry) error) error {
	return store.ScanParts(workers, func(w, lo, hi int, stop *atomic.Bool) error {
		return k.walk(coinRange(lo, hi), stop, func(e utxo.Entry) error { return fn(w, e) })
	})
}

// coinRange is the range of coin records whose first two txid bytes are
// in [lo, hi), hi <= 65536.
func coinRange(lo, hi int) backends.Range {
	r := backends.PrefixRange([]byte{prefixCoins})
	if lo > 0 {
		r.Start = []byte{prefixCoins, byte(lo >> 8), byte(lo)}
	}
	if hi < 1<<16 {
		r.End = []byte{prefixCoins, byte(hi >> 8), byte(hi)}
	}
	return r
}

// walk calls fn for every coin of the records in r, in key order then vout
// order, until fn fails or stop (if not nil) is set.
func (k *scanner) walk(r backends.Range, stop *atomic.Bool, fn func(utxo.Entry) error) error {
	it, err := k.snap.NewIterator(r)
	if err != nil {
		return err
	}
	defer it.Close()
	var (
		outs  []utxo.IndexedCoin
		arena []byte // the special scripts of the current record
	)
	for it.Next() {
		if stop != nil && stop.Load() {
			return nil
		}
		key := it.Key()
		if len(key) != 33 {
			return fmt.Errorf("kvstore: bad coins key %x", key)
		}
		var txid wire.Hash
		copy(txid[:], key[1:])
		// Entries are valid only during fn: one arena for every record.
		_, outs, arena, err = utxo.DecodeRecord(it.Value(), outs[:0], arena[:0])
		if err != nil {
			return fmt.Errorf("kvstore: coins of %s: %w", txid, err)
		}
		// Records keep outputs in numeric vout order, which is Core's
		// hash_serialized_3 order within a txid.
		for _, o := range outs {
			if err := fn(utxo.Entry{Outpoint: utxo.Outpoint{Hash: txid, Index: o.Index}, Coin: o.Coin}); err != nil {
				return err
			}
		}
	}
	return it.Err()
}

func (k *scanner) Close() error { return k.snap.Close() }
