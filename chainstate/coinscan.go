package chainstate

import (
	"fmt"

	"utxod/utxo"
)

// ScanCoins calls fn for every unspent output of one consistent snapshot of
// the coin set at the current tip, in hash_serialized_3 order (txid by raw
// bytes, then vout), and returns that tip's statistics, also when fn stops
// the walk with an error (which ScanCoins returns). The chainstate lock is
// held only while the snapshot is taken (a persistent store flushes first),
// so blocks keep connecting during the walk. The Coin's Script is valid
// only during the call to fn. It implements scripthash.CoinSource.
func (cs *Chainstate) ScanCoins(fn func(utxo.Entry) error) (utxo.Stats, error) {
	cs.mu.Lock()
	st := cs.statsLocked()
	snap, err := cs.store.Snapshot(indexEntries(cs.index.TakeDirty()), &st)
	cs.mu.Unlock()
	if err != nil {
		return st, fmt.Errorf("chainstate: coin snapshot: %w", err)
	}
	defer snap.Close()
	return st, snap.Scan(fn)
}
