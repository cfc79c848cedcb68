package kvstore

import (
	"errors"

	"utxod/backends"
	"utxod/store"
	"utxod/store/kvstore/undorec"
	"utxod/utxo"
	"utxod/wire"
)

// SpentCoins implements store.SpentReader: the Spent list of block's undo
// record, wherever it is (rev file, early writer's pending map, KV). Unlike
// Undo it never reads the coin set, so it answers for any block with undo
// data and may run under the chainstate's read lock, as Block does.
func (s *Store) SpentCoins(block wire.Hash) ([]utxo.Entry, error) {
	b, inFile, err := s.undoFromFile(block)
	if err != nil {
		return nil, err
	}
	ok := inFile
	if !ok {
		b, ok = s.pendingGet(false, block)
	}
	if !ok {
		v, err := s.kv.Get(hashKey(prefixUndo, block))
		if errors.Is(err, backends.ErrNotFound) {
			return nil, store.ErrNoUndo
		}
		if err != nil {
			return nil, err
		}
		b = v
	}
	if b == nil {
		return nil, store.ErrNoUndo
	}
	d, _, err := undorec.Decode(b)
	if err != nil {
		return nil, err
	}
	return d.Spent, nil
}

var _ store.SpentReader = (*Store)(nil)
