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
// (bench/decisions.md).
//
// The slots are split into segments of segSlots under a directory
// (extendible hashing, as the Go map's tables are): a full segment splits
// in two, and the table never reallocates more than one segment at a
// time, so growing it adds no transient memory of the table's size. A
// segment is probed linearly with Robin Hood insertion (Celis 1986): an
// entry farther from its home takes the slot of one nearer to its own, so
// a run is ordered by home and a lookup of an absent txid stops as soon
// as it meets an entry nearer home than itself; that lets segments fill
// to 7/8 like the Go map's groups. Deletion shifts the rest of the run
// back one slot, so no tombstone is left behind.
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
	// segMax is the most entries a segment holds before it splits, 7/8
	// of its slots, the Go map's bound: a split leaves two at 7/16, so
	// segments average about 0.65 full. Linear probing without Robin Hood
	// at 7/10 peaked 4–8 MB higher than the map in full validation, and
	// at 8/10 about 4 MB (gates txid-table-full-s12, -s12b).
	segMax = segSlots * 7 / 8

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
	for d := uint64(0); ; d++ {
		sl := &s.slots[i]
		if sl.val == 0 || t.dist(sl, i) < d {
			return 0, false
		}
		if sl.key == *k {
			return cacheEntry(sl.val &^ slotUsed), true
		}
		i = (i + 1) & segMask
	}
}

// dist is how far slot i, holding sl, is from sl's home.
func (t *txidTable) dist(sl *txSlot, i uint64) uint64 {
	return (i - t.home(&sl.key)) & segMask
}

// find returns k's slot in s, or where its probe stopped: found reports
// which, and d is the probe distance there.
func (t *txidTable) find(s *txSeg, k *wire.Hash) (i, d uint64, found bool) {
	i = t.home(k)
	for ; ; d++ {
		sl := &s.slots[i]
		if sl.val == 0 || t.dist(sl, i) < d {
			return i, d, false
		}
		if sl.key == *k {
			return i, d, true
		}
		i = (i + 1) & segMask
	}
}

// insert puts sl, whose key s does not hold, in s at slot i, d from its
// home, moving the entries nearer their homes one slot on (s must have a
// free slot).
func (t *txidTable) insert(s *txSeg, sl txSlot, i, d uint64) {
	for {
		cur := &s.slots[i]
		if cur.val == 0 {
			*cur = sl
			s.n++
			return
		}
		if cd := t.dist(cur, i); cd < d {
			sl, *cur = *cur, sl
			d = cd
		}
		i = (i + 1) & segMask
		d++
	}
}

// set makes e k's entry.
func (t *txidTable) set(k *wire.Hash, e cacheEntry) {
	if t.dir == nil {
		t.dir = []*txSeg{new(txSeg)}
		t.nSeg = 1
	}
	for {
		s, _ := t.seg(k)
		i, d, found := t.find(s, k)
		if found {
			s.slots[i].val = uint64(e) | slotUsed
			return
		}
		if s.n < segMax {
			t.insert(s, txSlot{key: *k, val: uint64(e) | slotUsed}, i, d)
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
		j, dist, _ := t.find(d, &sl.key)
		t.insert(d, *sl, j, dist)
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
	s, _ := t.seg(k)
	if i, _, found := t.find(s, k); found {
		t.removeAt(s, i)
	}
}

// removeAt empties slot i of s and moves the rest of its run back one
// slot, up to an empty slot or an entry at its home, so the run stays
// ordered by home and no tombstone is left. Entries only move to earlier
// slots of the run.
func (t *txidTable) removeAt(s *txSeg, i uint64) {
	for {
		j := (i + 1) & segMask
		sl := &s.slots[j]
		if sl.val == 0 || t.dist(sl, j) == 0 {
			break
		}
		s.slots[i] = *sl
		i = j
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
