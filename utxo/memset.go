package utxo

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
)

// MemSet is an in-memory coin set: the reference model the persistent store
// is compared against, and the set `utxod import` uses without a datadir.
// It is not safe for concurrent modification.
type MemSet struct {
	coins map[Outpoint]Coin
}

// NewMemSet returns an empty set.
func NewMemSet() *MemSet { return &MemSet{coins: make(map[Outpoint]Coin)} }

// Coin implements View.
func (m *MemSet) Coin(op Outpoint) (Coin, bool, error) {
	c, ok := m.coins[op]
	return c, ok, nil
}

// Len is the number of unspent coins.
func (m *MemSet) Len() int { return len(m.coins) }

// Apply connects a block's delta. Scripts are copied so the set never aliases
// block buffers.
func (m *MemSet) Apply(d *Delta) error {
	for _, e := range d.Spent {
		if _, ok := m.coins[e.Outpoint]; !ok {
			return fmt.Errorf("%w: spend of %s:%d", ErrCoinNotFound, e.Hash, e.Index)
		}
		delete(m.coins, e.Outpoint)
	}
	for _, e := range d.Overwritten {
		delete(m.coins, e.Outpoint)
	}
	for _, e := range d.Created {
		c := e.Coin
		c.Script = bytes.Clone(c.Script)
		m.coins[e.Outpoint] = c
	}
	return nil
}

// Revert disconnects a block whose delta is d: created coins leave, spent
// coins return. Overwritten coins are not restored (as in Core).
func (m *MemSet) Revert(d *Delta) error {
	for _, e := range d.Created {
		if _, ok := m.coins[e.Outpoint]; !ok {
			return fmt.Errorf("%w: created coin %s:%d missing on disconnect", ErrCoinNotFound, e.Hash, e.Index)
		}
		delete(m.coins, e.Outpoint)
	}
	for _, e := range d.Spent {
		c := e.Coin
		c.Script = bytes.Clone(c.Script)
		m.coins[e.Outpoint] = c
	}
	return nil
}

// Sorted returns every coin in Core's hash_serialized_3 order: txid by raw
// bytes, then vout numerically.
func (m *MemSet) Sorted() []Entry {
	out := make([]Entry, 0, len(m.coins))
	for op, c := range m.coins {
		out = append(out, Entry{op, c})
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if c := bytes.Compare(a.Hash[:], b.Hash[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
	return out
}
