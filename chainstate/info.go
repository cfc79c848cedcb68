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
// "hash_serialized_3" additionally scans the coin set once (cached per tip);
// "none" omits digests.
func (cs *Chainstate) Info(hashType string) (utxo.ChainstateInfo, error) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	info := cs.stats.Info()
	switch hashType {
	case "", HashTypeMuHash:
	case HashTypeNone:
		info.MuHash = nil
	case HashTypeHashSerialized3:
		cs.hs3mu.Lock()
		defer cs.hs3mu.Unlock()
		if cs.hs3Tip != cs.stats.BestBlock || !cs.hs3Valid {
			var h utxo.HashSerialized3
			if err := cs.store.Scan(func(e utxo.Entry) error { return h.Add(e.Outpoint, e.Coin) }); err != nil {
				return info, fmt.Errorf("chainstate: hash_serialized_3 scan: %w", err)
			}
			cs.hs3, cs.hs3Tip, cs.hs3Valid = h.Sum(), cs.stats.BestBlock, true
		}
		v := cs.hs3
		info.HashSerialized3 = &v
	default:
		return info, fmt.Errorf("chainstate: unknown hash_type %q (want muhash, hash_serialized_3 or none)", hashType)
	}
	return info, nil
}
