package store

import (
	"sort"
	"sync/atomic"

	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// memStore keeps everything in memory.
type memStore struct {
	set    *utxo.MemSet
	counts map[wire.Hash]int
	undo   map[wire.Hash]*utxo.Delta
	blocks map[wire.Hash][]byte
}

// NewMem returns a Store that lives only in memory: Load finds nothing, and
// Flush writes nothing.
func NewMem() Store {
	return &memStore{set: utxo.NewMemSet(), counts: make(map[wire.Hash]int),
		undo: make(map[wire.Hash]*utxo.Delta), blocks: make(map[wire.Hash][]byte)}
}

// Volatile implements Volatile: nothing survives the process.
func (m *memStore) Volatile() {}

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

func (m *memStore) Connect(block wire.Hash, d *utxo.Delta) error {
	if err := m.set.Apply(d); err != nil {
		return err
	}
	m.adjust(d, 1)
	m.undo[block] = cloneDelta(d)
	return nil
}

func (m *memStore) Undo(block wire.Hash) (*utxo.Delta, error) {
	d, ok := m.undo[block]
	if !ok {
		return nil, ErrNoUndo
	}
	return d, nil
}

// Spent implements SpentReader.
func (m *memStore) Spent(block wire.Hash) ([]utxo.Entry, error) {
	d, ok := m.undo[block]
	if !ok {
		return nil, ErrNoUndo
	}
	return cloneDelta(d).Spent, nil
}

func (m *memStore) Disconnect(block, _ wire.Hash, d *utxo.Delta) error {
	if err := m.set.Revert(d); err != nil {
		return err
	}
	// Overwritten coins are not restored (as in Core), so only undo the
	// spent/created counts.
	m.adjust(&utxo.Delta{Spent: d.Spent, Created: d.Created}, -1)
	delete(m.undo, block)
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
func (m *memStore) Flush([]validate.IndexEntry, *Stats) error { return nil }
func (m *memStore) NeedsFlush() bool                          { return false }
func (m *memStore) CacheBytes() int64                         { return 0 }
func (m *memStore) Close() error                              { return nil }
func (m *memStore) Snapshot([]validate.IndexEntry, *Stats) (Scanner, error) {
	return sliceScanner(m.set.Sorted()), nil
}

// sliceScanner walks a sorted copy of the memory store's coins.
type sliceScanner []utxo.Entry

var _ ParallelScanner = sliceScanner(nil)

func (s sliceScanner) Scan(fn func(utxo.Entry) error) error {
	for _, e := range s {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
func (s sliceScanner) Close() error { return nil }

// ScanParallel implements ParallelScanner.
func (s sliceScanner) ScanParallel(workers int, fn func(worker int, e utxo.Entry) error) error {
	return ScanParts(workers, func(w, lo, hi int, stop *atomic.Bool) error {
		from := sort.Search(len(s), func(i int) bool { return txidHigh(s[i].Hash) >= lo })
		for _, e := range s[from:] {
			if txidHigh(e.Hash) >= hi || stop.Load() {
				return nil
			}
			if err := fn(w, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// txidHigh is the first two bytes of a txid, big endian.
func txidHigh(h wire.Hash) int { return int(h[0])<<8 | int(h[1]) }

// cloneDelta deep-copies d so that it no longer aliases block buffers.
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
