package kvstore

import (
	"encoding/binary"
	"hash/maphash"

	"utxod/wire"
)

// coinTable maps txids to cache entries. It replaces a Go map because the
// cache's cost was its memory misses: a Go map hit touches a control word,
// a 40-byte slot and then the record, each in its own cache line. Here a
// slot is 16 bytes (a tag, the txid's first 8 bytes, and the entry), probed
// linearly, and the full txid is kept in the arena just before the record,
// in the line the caller reads next anyway (docs/benchmarks/nonsig.md,
// session 9). A lookup returns its slot, so the update that follows writes
// the entry without probing again.
//
// Tags are only a filter: a slot matches when its tag and its arena key are
// both the txid's. The probe start is a seeded maphash of the tag, so txids
// ground to share their first bytes do not pile onto one run of slots.
// Deletion shifts the rest of the run back (no tombstones).
type coinTable struct {
	slots []tableSlot
	mask  uint64
	n     int // used slots
	seed  maphash.Seed
}

type tableSlot struct {
	tag uint64 // 0: empty (a txid's tag is forced non-zero)
	e   cacheEntry
}

const tableMinSlots = 1 << 10

// newCoinTable returns an empty table; its slots are allocated by the
// first insert, so an empty cache costs no memory.
func newCoinTable() coinTable {
	return coinTable{seed: maphash.MakeSeed()}
}

// tagOf is the slot tag of txid: its first 8 bytes, never 0.
func tagOf(txid *wire.Hash) uint64 {
	return binary.LittleEndian.Uint64(txid[:8]) | 1
}

func (t *coinTable) home(tag uint64) uint64 {
	return maphash.Comparable(t.seed, tag) & t.mask
}

// find returns the slot holding txid (found) or the empty slot that ends
// its probe, where an insert would go (-1 in a table without slots). a
// holds the entries' keys.
func (t *coinTable) find(txid *wire.Hash, a *arena) (i int, found bool) {
	if len(t.slots) == 0 {
		return -1, false
	}
	tag := tagOf(txid)
	for j := t.home(tag); ; j = (j + 1) & t.mask {
		s := &t.slots[j]
		if s.tag == 0 {
			return int(j), false
		}
		if s.tag == tag && string(a.key(s.e)) == string(txid[:]) {
			return int(j), true
		}
	}
}

// insertAt puts a new entry with tag in the empty slot i that find
// returned (-1: none known), unless the table must grow first, and returns
// its slot. The table stays at most 5/8 full.
func (t *coinTable) insertAt(i int, tag uint64, e cacheEntry) int {
	if 8*(t.n+1) > 5*len(t.slots) {
		t.resize(2 * len(t.slots))
		i = -1
	}
	if i < 0 {
		i = t.emptyFor(tag)
	}
	t.slots[i] = tableSlot{tag: tag, e: e}
	t.n++
	return i
}

// emptyFor returns the first empty slot of tag's probe.
func (t *coinTable) emptyFor(tag uint64) int {
	j := t.home(tag)
	for t.slots[j].tag != 0 {
		j = (j + 1) & t.mask
	}
	return int(j)
}

// resize moves the entries to a table of n slots (at least tableMinSlots).
func (t *coinTable) resize(n int) {
	old := t.slots
	t.slots = make([]tableSlot, max(n, tableMinSlots))
	t.mask = uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.tag != 0 {
			t.slots[t.emptyFor(s.tag)] = s
		}
	}
}

// filter keeps the entries keep returns true for, with the entry it
// returns, rehashed into a table sized for them, and returns how many it
// removed.
func (t *coinTable) filter(keep func(cacheEntry) (cacheEntry, bool)) (removed int) {
	n := 0
	for i := range t.slots {
		s := &t.slots[i]
		if s.tag == 0 {
			continue
		}
		if e, ok := keep(s.e); ok {
			s.e = e
			n++
		} else {
			s.tag = 0
			removed++
		}
	}
	t.n = n
	if n == 0 {
		t.slots, t.mask = nil, 0
		return removed
	}
	size := tableMinSlots
	for 8*n > 5*size {
		size *= 2
	}
	t.resize(size) // also mends the probes the removals broke
	return removed
}

// deleteAt empties slot i and moves back the entries after it whose probe
// would otherwise pass the hole (backward-shift deletion).
func (t *coinTable) deleteAt(i int) {
	t.n--
	hole := uint64(i)
	for j := (hole + 1) & t.mask; t.slots[j].tag != 0; j = (j + 1) & t.mask {
		// The entry at j may fill the hole when its home is not in the
		// cyclic range (hole, j].
		if h := t.home(t.slots[j].tag); (j-h)&t.mask >= (j-hole)&t.mask {
			t.slots[hole] = t.slots[j]
			hole = j
		}
	}
	t.slots[hole] = tableSlot{}
}

// len is the number of entries.
func (t *coinTable) len() int { return t.n }

// bytes is the table's memory.
func (t *coinTable) bytes() int64 { return int64(len(t.slots)) * 16 }
