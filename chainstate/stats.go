package chainstate

import (
	"utxod/utxo"
	"utxod/wire"
)

// Stats are the chainstate statistics (utxo.Stats): counts, totals and the
// running MuHash3072, maintained per block.
type Stats = utxo.Stats

// txDelta is how one block changes the live-output count of one txid.
type txDelta struct{ before, change int }

// touched computes, per txid the delta touches, the live-output count before
// the block and its change. sign is +1 for connect, -1 for disconnect.
func (cs *Chainstate) touched(d *utxo.Delta, sign int, overwritten bool) (map[wire.Hash]*txDelta, error) {
	m := make(map[wire.Hash]*txDelta)
	get := func(h wire.Hash) (*txDelta, error) {
		if t, ok := m[h]; ok {
			return t, nil
		}
		n, err := cs.store.LiveOutputs(h)
		if err != nil {
			return nil, err
		}
		t := &txDelta{before: n}
		m[h] = t
		return t, nil
	}
	for _, e := range d.Spent {
		t, err := get(e.Hash)
		if err != nil {
			return nil, err
		}
		t.change -= sign
	}
	if overwritten {
		for _, e := range d.Overwritten {
			t, err := get(e.Hash)
			if err != nil {
				return nil, err
			}
			t.change -= sign
		}
	}
	for _, e := range d.Created {
		t, err := get(e.Hash)
		if err != nil {
			return nil, err
		}
		t.change += sign
	}
	return m, nil
}

// applyStats accounts for connecting (connect=true) or disconnecting a block
// with delta d. The store must not have applied the change yet: live-output
// counts are read as they are before it.
//
// countTxs false leaves s.Transactions to the caller (a store.TxCounter
// counts them while it connects).
func (cs *Chainstate) applyStats(s *Stats, d *utxo.Delta, connect, countTxs bool) error {
	sign := 1
	if !connect {
		sign = -1
	}
	var m map[wire.Hash]*txDelta
	if countTxs {
		var err error
		if m, err = cs.touched(d, sign, connect); err != nil {
			return err
		}
	}
	// Count transactions by txid presence before and after the change.
	for _, t := range m {
		before, after := t.before > 0, t.before+t.change > 0
		if before != after {
			if after {
				s.Transactions++
			} else {
				s.Transactions--
			}
		}
	}
	removed, added := muChanges(d, connect)
	for _, list := range removed {
		for _, e := range list {
			if err := s.RemoveCoin(e.Outpoint, e.Coin, false); err != nil {
				return err
			}
		}
	}
	for _, list := range added {
		for _, e := range list {
			if err := s.AddCoin(e.Outpoint, e.Coin, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// muChanges are the coins delta d removes from and adds to the set when a
// block is connected (connect=true) or disconnected, in the order they are
// applied.
func muChanges(d *utxo.Delta, connect bool) (removed, added [][]utxo.Entry) {
	if !connect {
		// Overwritten coins do not come back (Core's undo data cannot
		// restore them).
		return [][]utxo.Entry{d.Created}, [][]utxo.Entry{d.Spent}
	}
	return [][]utxo.Entry{d.Spent, d.Overwritten}, [][]utxo.Entry{d.Created}
}

// recordMuHash records delta d's changes for the MuHash once the store has
// applied them (utxo.LazyMuHash reads added coins back from the set): a connect
// on a tip at height parent, or a disconnect (connect false; the window must
// not be open by height, see disconnectTo).
func (cs *Chainstate) recordMuHash(d *utxo.Delta, connect bool, parent uint32) error {
	if cs.muOff {
		return nil
	}
	removed, added := muChanges(d, connect)
	var w utxo.Window
	if connect {
		w = cs.lazy.ConnectWindow(parent)
	} else {
		var err error
		if w, err = cs.lazy.DisconnectWindow(); err != nil {
			return err
		}
	}
	cs.lazy.RecordNow(w, removed, added)
	return nil
}
