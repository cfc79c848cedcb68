package chainstate

import (
	"fmt"

	"utxod/store"
	"utxod/utxo"
)

// Hash types accepted by Info (Core's gettxoutsetinfo hash_type).
const (
	HashTypeMuHash          = "muhash"
	HashTypeHashSerialized3 = "hash_serialized_3"
	HashTypeNone            = "none"
)

// Info returns the gettxoutsetinfo object at the tip. hashType "muhash" (the
// default) includes the incrementally maintained MuHash3072;
// "hash_serialized_3" adds Core's hash_serialized_3, computed by one
// streaming scan of a consistent snapshot and cached per tip (the muhash is
// kept); "none" omits digests.
func (cs *Chainstate) Info(hashType string) (utxo.ChainstateInfo, error) {
	switch hashType {
	case "", HashTypeMuHash, HashTypeNone:
		cs.lock()
		st, err := cs.statsLocked()
		if err != nil {
			cs.unlock()
			return utxo.ChainstateInfo{}, err
		}
		info := st.Info()
		cs.addAssumeValid(&info)
		cs.snapshotInfo(&info)
		cs.unlock()
		if hashType == HashTypeNone {
			info.MuHash = nil
		}
		return info, nil
	case HashTypeHashSerialized3:
	default:
		return utxo.ChainstateInfo{}, fmt.Errorf("chainstate: unknown hash_type %q (want muhash, hash_serialized_3 or none)", hashType)
	}
	// One scan at a time; a later caller for the same tip reuses the result.
	cs.hs3mu.Lock()
	defer cs.hs3mu.Unlock()
	cs.lock()
	st, err := cs.statsLocked()
	if err != nil {
		cs.unlock()
		return utxo.ChainstateInfo{}, err
	}
	info := st.Info()
	cs.addAssumeValid(&info)
	cs.snapshotInfo(&info)
	if cs.hs3Valid && cs.hs3Tip == cs.stats.BestBlock {
		cs.unlock()
		v := cs.hs3
		info.HashSerialized3 = &v
		return info, nil
	}
	snap, err := cs.snapshotLocked()
	cs.unlock()
	if err != nil {
		return info, fmt.Errorf("chainstate: hash_serialized_3 snapshot: %w", err)
	}
	defer snap.Close()
	var h utxo.HashSerialized3
	if err := snap.Scan(func(e utxo.Entry) error { return h.Add(e.Outpoint, e.Coin) }); err != nil {
		return info, fmt.Errorf("chainstate: hash_serialized_3 scan: %w", err)
	}
	if h.Count() != info.TxOuts {
		return info, fmt.Errorf("chainstate: hash_serialized_3 scan saw %d coins, statistics say %d", h.Count(), info.TxOuts)
	}
	cs.hs3, cs.hs3Tip, cs.hs3Valid = h.Sum(), info.BestBlock, true
	v := cs.hs3
	info.HashSerialized3 = &v
	return info, nil
}

// CoinSnapshot is one consistent copy of the coin set with the statistics
// of its tip (MuHash exact). Scan walks the coins in hash_serialized_3 order
// (txid bytes, then vout); the copy stays valid while the chainstate moves
// on. Close releases it.
type CoinSnapshot struct {
	Stats Stats
	store.Scanner
}

// SnapshotCoins returns a consistent copy of the coin set at the tip (a
// persistent store flushes first): the way to iterate every coin, to hash
// or dump the set.
func (cs *Chainstate) SnapshotCoins() (*CoinSnapshot, error) {
	cs.lock()
	defer cs.unlock()
	return cs.snapshotLocked()
}

func (cs *Chainstate) snapshotLocked() (*CoinSnapshot, error) {
	st, err := cs.statsLocked()
	if err != nil {
		return nil, err
	}
	sc, err := cs.store.Snapshot(indexEntries(cs.index.TakeDirty()), &st)
	if err != nil {
		return nil, err
	}
	return &CoinSnapshot{Stats: st, Scanner: sc}, nil
}
