package chainstate

import (
	"errors"

	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// ErrNoUndo reports a block whose undo data is missing.
var ErrNoUndo = errors.New("chainstate: no undo data for block")

// Store is where a Chainstate keeps its coins and undo data. Connect and
// Disconnect are applied in chain order; a persistent Store makes each one
// durable (or defers it to Flush) atomically together with the tip.
type Store interface {
	utxo.View
	// LiveOutputs is the number of unspent outputs of txid.
	LiveOutputs(txid wire.Hash) (int, error)
	// Connect applies d as the effect of connecting node (the new tip) and
	// records it as node's undo data. stats is the chainstate statistics
	// after the block, persisted with the tip.
	Connect(node *validate.BlockNode, d *utxo.Delta, stats *Stats) error
	// Undo returns the delta node (the current tip) was connected with.
	Undo(node *validate.BlockNode) (*utxo.Delta, error)
	// Disconnect reverts node (the current tip), whose delta is d; stats is
	// the statistics after the disconnect.
	Disconnect(node *validate.BlockNode, d *utxo.Delta, stats *Stats) error
	// Scan calls fn for every coin in hash_serialized_3 order (txid by raw
	// bytes, then vout numerically) over one consistent state.
	Scan(fn func(utxo.Entry) error) error
	// Flush makes everything applied so far durable.
	Flush() error
	Close() error
}

// memStore keeps coins and undo data in memory.
type memStore struct {
	set    *utxo.MemSet
	counts map[wire.Hash]int
	undo   map[wire.Hash]*utxo.Delta
}

// NewMemStore returns a Store that lives only in memory.
func NewMemStore() Store {
	return &memStore{set: utxo.NewMemSet(), counts: make(map[wire.Hash]int), undo: make(map[wire.Hash]*utxo.Delta)}
}

func (m *memStore) Coin(op utxo.Outpoint) (utxo.Coin, bool, error) { return m.set.Coin(op) }

func (m *memStore) LiveOutputs(txid wire.Hash) (int, error) { return m.counts[txid], nil }

func (m *memStore) adjust(d *utxo.Delta, sign int) {
	for _, e := range d.Spent {
		m.counts[e.Hash] -= sign
	}
	for _, e := range d.Overwritten {
		m.counts[e.Hash] -= sign
	}
	for _, e := range d.Created {
		m.counts[e.Hash] += sign
	}
	for _, list := range [][]utxo.Entry{d.Spent, d.Overwritten, d.Created} {
		for _, e := range list {
			if m.counts[e.Hash] == 0 {
				delete(m.counts, e.Hash)
			}
		}
	}
}

func (m *memStore) Connect(node *validate.BlockNode, d *utxo.Delta, _ *Stats) error {
	if err := m.set.Apply(d); err != nil {
		return err
	}
	m.adjust(d, 1)
	m.undo[node.Hash] = cloneDelta(d)
	return nil
}

func (m *memStore) Undo(node *validate.BlockNode) (*utxo.Delta, error) {
	d, ok := m.undo[node.Hash]
	if !ok {
		return nil, ErrNoUndo
	}
	return d, nil
}

func (m *memStore) Disconnect(node *validate.BlockNode, d *utxo.Delta, _ *Stats) error {
	if err := m.set.Revert(d); err != nil {
		return err
	}
	// Overwritten coins are not restored (as in Core), so only undo the
	// spent/created counts.
	m.adjust(&utxo.Delta{Spent: d.Spent, Created: d.Created}, -1)
	delete(m.undo, node.Hash)
	return nil
}

func (m *memStore) Flush() error { return nil }
func (m *memStore) Close() error { return nil }

// cloneDelta deep-copies d so it no longer aliases block buffers.
func cloneDelta(d *utxo.Delta) *utxo.Delta {
	out := &utxo.Delta{
		Spent:       cloneEntries(d.Spent),
		Overwritten: cloneEntries(d.Overwritten),
		Created:     cloneEntries(d.Created),
	}
	return out
}

func cloneEntries(in []utxo.Entry) []utxo.Entry {
	if len(in) == 0 {
		return nil
	}
	n := 0
	for _, e := range in {
		n += len(e.Script)
	}
	buf := make([]byte, 0, n)
	out := make([]utxo.Entry, len(in))
	for i, e := range in {
		out[i] = e
		start := len(buf)
		buf = append(buf, e.Script...)
		out[i].Script = buf[start:len(buf):len(buf)]
	}
	return out
}

// Scan calls fn for every coin in hash_serialized_3 order (txid by raw
// bytes, then vout numerically).
func (m *memStore) Scan(fn func(utxo.Entry) error) error {
	for _, e := range m.set.Sorted() {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
