package chainstate

import (
	"errors"

	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// Store errors.
var (
	// ErrNoUndo reports a block whose undo data is missing.
	ErrNoUndo = errors.New("chainstate: no undo data for block")
	// ErrNoBlock reports block data that is not stored.
	ErrNoBlock = errors.New("chainstate: block data not stored")
)

// Persisted is the state a Store reopens with.
type Persisted struct {
	Genesis wire.Hash
	Tip     wire.Hash
	Stats   Stats
	Index   []validate.IndexEntry
}

// Scanner walks one consistent copy of the coin set in hash_serialized_3
// order (txid by raw bytes, then vout numerically). It stays valid after the
// chainstate moves on; Close releases it.
type Scanner interface {
	Scan(fn func(utxo.Entry) error) error
	Close() error
}

// Store is where a Chainstate keeps its coins, undo data, block data and
// block index. Connect and Disconnect are applied in chain order; a
// persistent Store defers them to Flush, which writes everything applied so
// far — coins, undo data, block data, index entries, tip and statistics — in
// one atomic, synced batch, so the store on disk always describes exactly one
// tip. Stores are not safe for concurrent use: the Chainstate serialises
// calls (reads under its read lock only run concurrently with other reads,
// which stores must allow).
type Store interface {
	utxo.View
	// LiveOutputs is the number of unspent outputs of txid.
	LiveOutputs(txid wire.Hash) (int, error)
	// Connect applies d as the effect of connecting node (the new tip) and
	// records it as node's undo data.
	Connect(node *validate.BlockNode, d *utxo.Delta) error
	// Undo returns the delta node (the current tip) was connected with.
	Undo(node *validate.BlockNode) (*utxo.Delta, error)
	// Disconnect reverts node (the current tip), whose delta is d.
	Disconnect(node *validate.BlockNode, d *utxo.Delta) error
	// PutBlock stores raw block data (the store keeps raw; caller must not
	// modify it), Block returns it (ErrNoBlock if absent), DeleteBlock drops it.
	PutBlock(hash wire.Hash, raw []byte) error
	Block(hash wire.Hash) ([]byte, error)
	DeleteBlock(hash wire.Hash) error
	// Load returns the persisted state, or nil for a new store.
	Load() (*Persisted, error)
	// SetGenesis initialises a new store at the network's genesis block.
	SetGenesis(h wire.Hash, stats *Stats) error
	// Flush writes everything applied so far with the given index entries
	// and the statistics of the current tip, atomically and durably.
	Flush(index []*validate.BlockNode, stats *Stats) error
	// NeedsFlush reports that the cache is over its budget.
	NeedsFlush() bool
	// CacheBytes is the cache's current estimated size.
	CacheBytes() int64
	// Snapshot returns a Scanner over the current coin set. The caller holds
	// the chainstate's write lock during the call (a persistent store may
	// flush first), not during the scan.
	Snapshot(index []*validate.BlockNode, stats *Stats) (Scanner, error)
	Close() error
}

// memStore keeps everything in memory.
type memStore struct {
	set    *utxo.MemSet
	counts map[wire.Hash]int
	undo   map[wire.Hash]*utxo.Delta
	blocks map[wire.Hash][]byte
}

// NewMemStore returns a Store that lives only in memory.
func NewMemStore() Store {
	return &memStore{set: utxo.NewMemSet(), counts: make(map[wire.Hash]int),
		undo: make(map[wire.Hash]*utxo.Delta), blocks: make(map[wire.Hash][]byte)}
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

func (m *memStore) Connect(node *validate.BlockNode, d *utxo.Delta) error {
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

func (m *memStore) Disconnect(node *validate.BlockNode, d *utxo.Delta) error {
	if err := m.set.Revert(d); err != nil {
		return err
	}
	// Overwritten coins are not restored (as in Core), so only undo the
	// spent/created counts.
	m.adjust(&utxo.Delta{Spent: d.Spent, Created: d.Created}, -1)
	delete(m.undo, node.Hash)
	return nil
}

func (m *memStore) PutBlock(h wire.Hash, raw []byte) error { m.blocks[h] = raw; return nil }
func (m *memStore) Block(h wire.Hash) ([]byte, error) {
	if b, ok := m.blocks[h]; ok {
		return b, nil
	}
	return nil, ErrNoBlock
}
func (m *memStore) DeleteBlock(h wire.Hash) error             { delete(m.blocks, h); return nil }
func (m *memStore) Load() (*Persisted, error)                 { return nil, nil }
func (m *memStore) SetGenesis(wire.Hash, *Stats) error        { return nil }
func (m *memStore) Flush([]*validate.BlockNode, *Stats) error { return nil }
func (m *memStore) NeedsFlush() bool                          { return false }
func (m *memStore) CacheBytes() int64                         { return 0 }
func (m *memStore) Close() error                              { return nil }
func (m *memStore) Snapshot([]*validate.BlockNode, *Stats) (Scanner, error) {
	return sliceScanner(m.set.Sorted()), nil
}

type sliceScanner []utxo.Entry

func (s sliceScanner) Scan(fn func(utxo.Entry) error) error {
	for _, e := range s {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
func (s sliceScanner) Close() error { return nil }

// cloneDelta deep-copies d so it no longer aliases block buffers.
func cloneDelta(d *utxo.Delta) *utxo.Delta {
	return &utxo.Delta{
		Spent:       cloneEntries(d.Spent),
		Overwritten: cloneEntries(d.Overwritten),
		Created:     cloneEntries(d.Created),
	}
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
