package chainstate

import (
	"fmt"

	"utxod/store"
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
	snap, err := cs.SnapshotCoins()
	if err != nil {
		return utxo.Stats{}, fmt.Errorf("chainstate: coin snapshot: %w", err)
	}
	defer snap.Close()
	return snap.Stats, snap.Scan(fn)
}

// ScanCoinsParallel is ScanCoins with fn called from up to workers
// goroutines at once, on store.ParallelScanner's schedule (worker names the
// calling goroutine; contiguous txid parts, worker w's first the w-th, the
// rest handed out in ascending order, each walked in order). A store whose
// snapshot cannot walk in parallel (every store of ours can) is walked in
// order as worker 0. It implements scripthash.ParallelCoinSource.
func (cs *Chainstate) ScanCoinsParallel(workers int, fn func(worker int, e utxo.Entry) error) (utxo.Stats, error) {
	snap, err := cs.SnapshotCoins()
	if err != nil {
		return utxo.Stats{}, fmt.Errorf("chainstate: coin snapshot: %w", err)
	}
	defer snap.Close()
	if ps, ok := snap.Scanner.(store.ParallelScanner); ok {
		return snap.Stats, ps.ScanParallel(workers, fn)
	}
	return snap.Stats, snap.Scan(func(e utxo.Entry) error { return fn(0, e) })
}
