package chainstate

import (
	"fmt"

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
		cs.mu.Lock()
		st := cs.statsLocked()
		info := st.Info()
		cs.addAssumeValid(&info)
		cs.mu.Unlock()
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
	cs.mu.Lock()
	st := cs.statsLocked()
	info := st.Info()
	cs.addAssumeValid(&info)
	if cs.hs3Valid && cs.hs3Tip == cs.stats.BestBlock {
		cs.mu.Unlock()
		v := cs.hs3
		info.HashSerialized3 = &v
		return info, nil
	}
	snap, err := cs.store.Snapshot(cs.index.TakeDirty(), &st)
	cs.mu.Unlock()
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
