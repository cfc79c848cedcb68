package kvstore

import (
	"bytes"
	"errors"
	"fmt"

	"utxod/backends"
	"utxod/store"
	"utxod/store/kvstore/undorec"
	"utxod/utxo"
	"utxod/wire"
)

// pendingMap returns the pending map of undo records or of raw blocks.
func (s *Store) pendingMap(block bool) map[wire.Hash]pendingData {
	if block {
		return s.blocks
	}
	return s.undo
}

// setPending records a put (b non-nil), written early, or a deletion,
// written by the next flush.
func (s *Store) setPending(block bool, h wire.Hash, b []byte) {
	m := s.pendingMap(block)
	s.held -= int64(len(m[h].b))
	if b == nil {
		m[h] = pendingData{}
		return
	}
	prefix := byte(prefixUndo)
	if block {
		prefix = prefixBlock
	}
	s.key[0] = prefix
	copy(s.key[1:], h[:])
	m[h] = pendingData{b: b, gen: s.w.add(earlyKey{block: block, h: h}, s.key[:], b)}
	s.held += int64(len(b))
	if s.w.full() {
		s.w.handoff()
	}
	s.forgetWritten()
}

// forgetWritten drops the puts the early writer has made durable (reads of
// them go to the store from now on).
func (s *Store) forgetWritten() {
	s.w.collect(func(gen uint64, keys []earlyKey) {
		for _, k := range keys {
			m := s.pendingMap(k.block)
			if p, ok := m[k.h]; ok && p.b != nil && p.gen == gen {
				s.held -= int64(len(p.b))
				delete(m, k.h)
			}
		}
	})
}

// pendingGet returns a pending value: found reports whether h is pending,
// and a nil value a pending deletion.
func (s *Store) pendingGet(block bool, h wire.Hash) (b []byte, found bool) {
	p, ok := s.pendingMap(block)[h]
	return p.b, ok
}

// Undo implements store.Store.
func (s *Store) Undo(block wire.Hash) (*utxo.Delta, error) {
	b, err := s.undoRecord(block)
	if err != nil {
		return nil, err
	}
	d, whole, err := undorec.Decode(b)
	if err != nil || whole {
		return d, err
	}
	// block is the tip: every coin it created and did not spend is in the
	// coin set (Core's DisconnectBlock reads them there too).
	s.rmu.Lock()
	defer s.rmu.Unlock()
	for i := range d.Created {
		e := &d.Created[i]
		c, found, err := s.coins.coin(e.Outpoint)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, fmt.Errorf("%w: block %s created %s:%d, which is not in the coin set", ErrBadUndo, block, e.Hash, e.Index)
		}
		e.Coin = c
	}
	return d, nil
}

// undoRecord returns block's encoded undo record: from the rev files, the
// early writer's pending puts, or the KV (store.ErrNoUndo if none). Like
// Block it only reads, so it may run under the chainstate's read lock.
func (s *Store) undoRecord(block wire.Hash) ([]byte, error) {
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
	return b, nil
}

// Spent implements store.SpentReader: the Spent list of block's undo
// record, which (unlike the created outpoints) is whole in the record, so
// any active block's can be read, not only the tip's.
func (s *Store) Spent(block wire.Hash) ([]utxo.Entry, error) {
	b, err := s.undoRecord(block)
	if err != nil {
		return nil, err
	}
	d, _, err := undorec.Decode(b)
	if err != nil {
		return nil, err
	}
	for i := range d.Spent { // the scripts may point into a pending record
		d.Spent[i].Script = bytes.Clone(d.Spent[i].Script)
	}
	return d.Spent, nil
}

// PutBlock implements store.Store.
func (s *Store) PutBlock(h wire.Hash, raw []byte) error {
	if s.closed {
		return backends.ErrClosed
	}
	if s.bf != nil {
		return s.putBlockFile(h, raw)
	}
	s.setPending(true, h, raw)
	return nil
}

// Block implements store.Store. It may run under the chainstate's read
// lock: it only reads the pending map and the KV.
func (s *Store) Block(h wire.Hash) ([]byte, error) {
	if raw, found, err := s.blockFromFile(h); found {
		return raw, err
	}
	if b, ok := s.pendingGet(true, h); ok {
		if b == nil {
			return nil, store.ErrNoBlock
		}
		return b, nil
	}
	v, err := s.kv.Get(hashKey(prefixBlock, h))
	if errors.Is(err, backends.ErrNotFound) {
		return nil, store.ErrNoBlock
	}
	return v, err
}

// DeleteBlock implements store.Store.
// A block in the block files only loses its location: its bytes stay.
func (s *Store) DeleteBlock(h wire.Hash) error {
	return s.deleteLocated(s.bf, s.locs, prefixBlockLoc, true, h)
}
