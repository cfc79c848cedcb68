package kvstore

import (
	"errors"
	"fmt"

	"utxod/backends"
	"utxod/store"
	"utxod/store/kvstore/undorec"
	"utxod/utxo"
	"utxod/wire"
)

// BlockIndex is an Index that needs, to connect a block, the block itself
// and not only its delta (a tweak index reads its transactions' inputs and
// outputs). On connect the Store calls ApplyBlock instead of Apply, with
// the block the chainstate noted (store.BlockNoter) or, when none was, the
// block read back from the store (height -1: the index knows it, its tip
// plus one). Disconnects still go through Apply. b and d belong to the
// caller: copy what you keep.
type BlockIndex interface {
	Index
	ApplyBlock(b *wire.Block, height int32, d *utxo.Delta) error
}

var _ store.BlockNoter = (*Store)(nil)

// notedBlock is the block the next Connect applies, for the BlockIndexes.
type notedBlock struct {
	b      *wire.Block
	height int32
}

// NoteBlock implements store.BlockNoter: b, at height, is the block the
// next Connect (or ConnectCounting) applies. Only kept while an index
// needs it.
func (s *Store) NoteBlock(b *wire.Block, height int32) {
	for _, ix := range s.indexes {
		if _, ok := ix.(BlockIndex); ok {
			s.noted = notedBlock{b: b, height: height}
			return
		}
	}
}

// connectBlockIndex gives a BlockIndex the block it connects.
func (s *Store) connectBlockIndex(ix BlockIndex, block wire.Hash, d *utxo.Delta) error {
	b, height := s.noted.b, s.noted.height
	if b == nil || b.Hash != block {
		raw, err := s.Block(block)
		if err != nil {
			return fmt.Errorf("kvstore: index %q needs block %s: %w", ix.Prefix(), block, err)
		}
		if b, err = wire.ParseBlock(raw); err != nil {
			return fmt.Errorf("kvstore: index %q: block %s: %w", ix.Prefix(), block, err)
		}
		height = -1
	}
	return ix.ApplyBlock(b, height, d)
}

// UndoRecord returns block's undo record as written: the coins it spent
// (whole, in input order) and the outpoints it created (coins not filled
// in, unlike Undo, so it works for any block of the chain and not only the
// tip). store.ErrNoUndo if there is none. For an index's build.
func (s *Store) UndoRecord(block wire.Hash) (*utxo.Delta, error) {
	b, ok, err := s.undoFromFile(block)
	if err != nil {
		return nil, err
	}
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
	return d, err
}
