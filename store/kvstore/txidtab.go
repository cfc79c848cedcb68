package kvstore

import (
	"encoding/binary"
	"iter"
	"math/rand/v2"

	"utxod/wire"
)

// txidTable maps txids to cache entries. A lookup touches one slot, the
// txid and its entry together, usually one cache line, where the Go map
// touches its group's control word and then the slot, two dependent
// misses; and a block's lookups can be started back to back (peek), so
// that their misses overlap before the connect reads them one at a time
// (docs/benchmarks/nonsig.md, session 12).
//
// The slots are split into segments of segSlots under a directory
// (extendible hashing, as the Go map's tables are): a full segment splits
// in two, and the table never reallocates more than one segment at a
// time, so growing it adds no transient memory of the table's size. A
// segment is probed linearly, and deletion shifts entries back (Knuth's
// Algorithm R), so no tombstone is left behind.
//
// The directory index and the slot in a segment are the top bits of the
// txid's first word times random odd multipliers, a universal hash
// (Dietzfelbinger et al. 1997): txids can be ground to share bits, but not
// to collide under multipliers they do not know.
type txidTable struct {
	dir   []*txSeg // 1<<depth entries; a segment of depth d fills 1<<(depth−d) in a row
	depth uint
	mDir  uint64 // odd multipliers: directory index, slot index
	mSlot uint64
	n     int
	nSeg  int
	// scratch holds a splitting segment's slots.
	scratch *[segSlots]txSlot
}

// txSlot is one slot; val is the entry with slotUsed set, 0 when empty.
type txSlot struct {
	key wire.Hash
	val uint64
}

// txSeg is one segment: its slots, its depth (the directory bits its
// entries share) and its number of entries.
type txSeg struct {
	slots [segSlots]txSlot
	depth uint
	n     int
}

const (
	// slotUsed marks an occupied slot. It is the top bit of an entry's
	// arena location, which stays clear below 2^19 arena chunks (512 GiB).
	slotUsed = 1 << 63

	segBits  = 12
	segSlots = 1 << segBits // 160 KiB of slots
	segMask  = segSlots - 1
	// segMax is the most entries a segment holds before it splits, 8/10
	// of its slots. A split leaves two at 4/10, so segments average about
	// 0.55 full, the Go map's memory per entry; at 7/10 full validation
	// peaked 4–8 MB higher than with the map (session 12). An unsuccessful
	// lookup (a new txid's BIP30 check) probes from 2 slots just after a
	// split to 13 before the next, read in order.
	segMax = segSlots * 8 / 10

	txSlotBytes = 40
)

// newTxidTable returns an empty table; its first segment is allocated by
// the first set, so that an empty cache takes no memory.
func newTxidTable() txidTable {
	return txidTable{mDir: rand.Uint64() | 1, mSlot: rand.Uint64() | 1}
}

// seg returns k's segment (the table must not be empty) and k's home
// slot in it.
func (t *txidTable) seg(k *wire.Hash) (*txSeg, uint64) {
	w := binary.LittleEndian.Uint64(k[:8])
	// A shift by 64 is 0 in Go: the one entry of a directory of depth 0.
	return t.dir[w*t.mDir>>(64-t.depth)], w * t.mSlot >> (64 - segBits)
}

// home is k's home slot in its segment.
func (t *txidTable) home(k *wire.Hash) uint64 {
	return binary.LittleEndian.Uint64(k[:8]) * t.mSlot >> (64 - segBits)
}

// len is the number of entries.
func (t *txidTable) len() int { return t.n }

// bytes is the memory the segments and the directory take.
func (t *txidTable) bytes() int64 {
	return int64(t.nSeg)*segSlots*txSlotBytes + int64(len(t.dir))*8
}

// get returns k's entry.
func (t *txidTable) get(k *wire.Hash) (cacheEntry, bool) {
	if t.n == 0 {
		return 0, false
	}
	s, i := t.seg(k)
	for ; ; i = (i + 1) & segMask {
		sl := &s.slots[i]
		if sl.val == 0 {
			return 0, false
		}
		if sl.key == *k {
			return cacheEntry(sl.val &^ slotUsed), true
		}
	}
}

// set makes e k's entry.
func (t *txidTable) set(k *wire.Hash, e cacheEntry) {
	if t.dir == nil {
		t.dir = []*txSeg{new(txSeg)}
		t.nSeg = 1
	}
	for {
		s, i := t.seg(k)
		for ; ; i = (i + 1) & segMask {
			sl := &s.slots[i]
			if sl.val == 0 {
				break
			}
			if sl.key == *k {
				sl.val = uint64(e) | slotUsed
				return
			}
		}
		if s.n < segMax {
			s.slots[i] = txSlot{key: *k, val: uint64(e) | slotUsed}
			s.n++
			t.n++
			return
		}
		t.split(k, s)
	}
}

// split splits s, k's segment, in two by the next directory bit, doubling
// the directory first if s uses all its bits.
func (t *txidTable) split(k *wire.Hash, s *txSeg) {
	if s.depth == t.depth {
		dir := make([]*txSeg, 2*len(t.dir))
		for i, d := range t.dir {
			dir[2*i], dir[2*i+1] = d, d
		}
		t.dir = dir
		t.depth++
	}
	if t.scratch == nil {
		t.scratch = new([segSlots]txSlot)
	}
	old := t.scratch
	*old = s.slots
	s.slots = [segSlots]txSlot{}
	s.depth++
	s.n = 0
	hi := &txSeg{depth: s.depth}
	t.nSeg++
	// s keeps the entries whose next bit is 0, hi takes the others.
	bit := 64 - s.depth
	for i := range old {
		sl := &old[i]
		if sl.val == 0 {
			continue
		}
		d := s
		if binary.LittleEndian.Uint64(sl.key[:8])*t.mDir>>bit&1 == 1 {
			d = hi
		}
		j := t.home(&sl.key)
		for d.slots[j].val != 0 {
			j = (j + 1) & segMask
		}
		d.slots[j] = *sl
		d.n++
	}
	// s filled 1<<(depth−s.depth+1) directory entries in a row; hi takes
	// the second half.
	w := binary.LittleEndian.Uint64(k[:8]) * t.mDir >> (64 - t.depth)
	span := uint64(1) << (t.depth - s.depth)
	first := w &^ (2*span - 1)
	for i := first + span; i < first+2*span; i++ {
		t.dir[i] = hi
	}
}

// delete removes k's entry, if any.
func (t *txidTable) delete(k *wire.Hash) {
	if t.n == 0 {
		return
	}
	s, i := t.seg(k)
	for ; ; i = (i + 1) & segMask {
		sl := &s.slots[i]
		if sl.val == 0 {
			return
		}
		if sl.key == *k {
			t.removeAt(s, i)
			return
		}
	}
}

// removeAt empties slot i of s and moves back each later entry of its run
// whose probe sequence passes through the hole, so every entry stays
// reachable from its home without tombstones. Entries only move to
// earlier slots of the run.
func (t *txidTable) removeAt(s *txSeg, i uint64) {
	for j := (i + 1) & segMask; ; j = (j + 1) & segMask {
		sl := &s.slots[j]
		if sl.val == 0 {
			break
		}
		// sl may fill the hole when its home is not cyclically in (i, j].
		if (j-t.home(&sl.key))&segMask >= (j-i)&segMask {
			s.slots[i] = *sl
			i = j
		}
	}
	s.slots[i] = txSlot{}
	s.n--
	t.n--
}

// segments yields every segment once.
func (t *txidTable) segments() iter.Seq[*txSeg] {
	return func(yield func(*txSeg) bool) {
		for i := 0; i < len(t.dir); {
			s := t.dir[i]
			if !yield(s) {
				return
			}
			i += 1 << (t.depth - s.depth)
		}
	}
}

// all yields every entry once, in no particular order; the table must not
// change until the iteration ends.
func (t *txidTable) all() iter.Seq2[wire.Hash, cacheEntry] {
	return func(yield func(wire.Hash, cacheEntry) bool) {
		for s := range t.segments() {
			for i := range s.slots {
				if sl := &s.slots[i]; sl.val != 0 && !yield(sl.key, cacheEntry(sl.val&^slotUsed)) {
					return
				}
			}
		}
	}
}

// update calls f once for every entry, in no particular order, and keeps
// the entry f returns, or removes it when keep is false. Segments are
// kept (a cache emptied by a flush fills again).
func (t *txidTable) update(f func(k *wire.Hash, e cacheEntry) (ne cacheEntry, keep bool)) {
	for s := range t.segments() {
		if s.n == 0 {
			continue
		}
		// Start after an empty slot (a segment is never full): no run
		// crosses the start, so a removal only moves entries not visited
		// yet into the slot being visited, which is then visited again.
		start := uint64(0)
		for s.slots[start].val != 0 {
			start++
		}
		for k := uint64(1); k <= segSlots; {
			i := (start + k) & segMask
			sl := &s.slots[i]
			if sl.val == 0 {
				k++
				continue
			}
			ne, keep := f(&sl.key, cacheEntry(sl.val&^slotUsed))
			if keep {
				sl.val = uint64(ne) | slotUsed
				k++
				continue
			}
			t.removeAt(s, i)
		}
	}
}

// peek reads k's home slot and returns its word: loads that do not depend
// on the loads before them (the directory stays cached), so that a loop
// of peeks has many cache misses in flight at once and the lookups that
// follow find their slots cached (coinCache.warm).
func (t *txidTable) peek(k *wire.Hash) uint64 {
	if t.n == 0 {
		return 0
	}
	s, i := t.seg(k)
	return s.slots[i].val
}
