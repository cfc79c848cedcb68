package kvstore

import (
	"errors"
	"fmt"

	"utxod/backends"
	"utxod/store"
	"utxod/utxo"
	"utxod/wire"
)

// ReadState returns the statistics (with tip height and hash) of the
// flushed chainstate r holds; ok is false for a store without a tip (a
// new datadir). Tools that work on a closed datadir (an index build) use
// it to learn which state they see.
func ReadState(r backends.Reader) (stats store.Stats, ok bool, err error) {
	tip, err := r.Get(keyTip)
	if errors.Is(err, backends.ErrNotFound) {
		return stats, false, nil
	}
	if err != nil {
		return stats, false, err
	}
	st, err := r.Get(keyStats)
	if err != nil {
		return stats, false, fmt.Errorf("kvstore: stats: %w", err)
	}
	if err := stats.UnmarshalBinary(st); err != nil {
		return stats, false, err
	}
	if len(tip) != len(wire.Hash{}) || wire.Hash(tip) != stats.BestBlock {
		return stats, false, fmt.Errorf("kvstore: tip %x and statistics of %s disagree", tip, stats.BestBlock)
	}
	return stats, true, nil
}

// ScanRecords calls fn with every txid's unspent outputs in r, in txid
// (raw byte) order, starting after the txid after when it is not nil. outs
// and the scripts in it are valid only during the call.
func ScanRecords(r backends.Reader, after *wire.Hash, fn func(txid wire.Hash, outs []utxo.IndexedCoin) error) error {
	rng := backends.PrefixRange([]byte{prefixCoins})
	if after != nil {
		rng.Start = append(hashKey(prefixCoins, *after), 0)
	}
	it, err := r.NewIterator(rng)
	if err != nil {
		return err
	}
	defer it.Close()
	var (
		outs  []utxo.IndexedCoin
		arena []byte // the special scripts of the current record
	)
	for it.Next() {
		key := it.Key()
		if len(key) != 33 {
			return fmt.Errorf("kvstore: bad coins key %x", key)
		}
		txid := wire.Hash(key[1:])
		_, outs, arena, err = utxo.DecodeRecord(it.Value(), outs[:0], arena[:0])
		if err != nil {
			return fmt.Errorf("kvstore: coins of %s: %w", txid, err)
		}
		if err := fn(txid, outs); err != nil {
			return err
		}
	}
	return it.Err()
}
