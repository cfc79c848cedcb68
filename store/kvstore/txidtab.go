package kvstore

import (
	"encoding/binary"
	"iter"
	"math/rand/v2"

	"utxod/wire"
)

// txidTable maps txids to cache entries: open addressing with linear
// probing, each slot the txid and its entry together. A lookup touches
// one slot, usually one cache line, where the Go map touches its group's
// control word and then the slot, two dependent misses; and a block's
// lookups can be started back to back (touch), so that their misses
// overlap before the connect reads them one at a time
// (docs/benchmarks/nonsig.md, session 12). Deletion shifts entries back
// (Knuth's Algorithm R), so no tombstone is left behind.
//
// The home slot is the top bits of the txid's first word times a random
// odd multiplier, a universal hash (Dietzfelbinger et al. 1997): txids can
// be ground to share bits, but not to collide under a multiplier they do
// not know.
type txidTable struct {
	slots []txSlot
	mask  uint64
	shift uint   // 64 − log2(len(slots))
	mul   uint64 // odd
	n     int
}

// txSlot is one slot; val is the entry with slotUsed set, 0 when empty.
type txSlot struct {
	key wire.Hash
	val uint64
}

// slotUsed marks an occupied slot. It is the top bit of an entry's arena
// location, which stays clear below 2^19 arena chunks (512 GiB).
const slotUsed = 1 << 63

// txSlotBytes is the memory one slot takes.
const txSlotBytes = 40

// minTableSlots is a new table's size.
const minTableSlots = 1 << 10

// newTxidTable returns an empty table; its slots are allocated by the first
// set, so that an empty cache takes no memory.
func newTxidTable() txidTable { return txidTable{mul: rand.Uint64() | 1} }

func (t *txidTable) alloc(n int) {
	t.slots = make([]txSlot, n)
	t.mask = uint64(n - 1)
	t.shift = 64
	for m := n; m > 1; m >>= 1 {
		t.shift--
	}
	t.n = 0
}

// home is k's first slot.
func (t *txidTable) home(k *wire.Hash) uint64 {
	return binary.LittleEndian.Uint64(k[:8]) * t.mul >> t.shift
}

// len is the number of entries.
func (t *txidTable) len() int { return t.n }

// bytes is the memory the slots take.
func (t *txidTable) bytes() int64 { return int64(len(t.slots)) * txSlotBytes }

// get returns k's entry.
func (t *txidTable) get(k *wire.Hash) (cacheEntry, bool) {
	if t.n == 0 {
		return 0, false
	}
	for i := t.home(k); ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.val == 0 {
			return 0, false
		}
		if s.key == *k {
			return cacheEntry(s.val &^ slotUsed), true
		}
	}
}

// set makes e k's entry.
func (t *txidTable) set(k *wire.Hash, e cacheEntry) {
	// Grow at 7/10 full: an unsuccessful lookup (a new txid's BIP30 check)
	// then probes about six slots, four cache lines read in order.
	if 10*(t.n+1) > 7*len(t.slots) {
		t.grow()
	}
	for i := t.home(k); ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.val == 0 {
			s.key, s.val = *k, uint64(e)|slotUsed
			t.n++
			return
		}
		if s.key == *k {
			s.val = uint64(e) | slotUsed
			return
		}
	}
}

// grow doubles the slots.
func (t *txidTable) grow() {
	old := t.slots
	t.alloc(max(2*len(old), minTableSlots))
	for i := range old {
		if s := &old[i]; s.val != 0 {
			j := t.home(&s.key)
			for t.slots[j].val != 0 {
				j = (j + 1) & t.mask
			}
			t.slots[j] = *s
			t.n++
		}
	}
}

// delete removes k's entry, if any.
func (t *txidTable) delete(k *wire.Hash) {
	if t.n == 0 {
		return
	}
	for i := t.home(k); ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.val == 0 {
			return
		}
		if s.key == *k {
			t.removeAt(i)
			return
		}
	}
}

// removeAt empties slot i and moves back each later entry of its run whose
// probe sequence passes through the hole, so every entry stays reachable
// from its home without tombstones. Entries only move to earlier slots of
// the run.
func (t *txidTable) removeAt(i uint64) {
	for j := (i + 1) & t.mask; ; j = (j + 1) & t.mask {
		s := &t.slots[j]
		if s.val == 0 {
			break
		}
		// s may fill the hole when its home is not cyclically in (i, j].
		if (j-t.home(&s.key))&t.mask >= (j-i)&t.mask {
			t.slots[i] = *s
			i = j
		}
	}
	t.slots[i] = txSlot{}
	t.n--
}

// all yields every entry once, in no particular order; the table must not
// change until the iteration ends.
func (t *txidTable) all() iter.Seq2[wire.Hash, cacheEntry] {
	return func(yield func(wire.Hash, cacheEntry) bool) {
		for i := range t.slots {
			if s := &t.slots[i]; s.val != 0 && !yield(s.key, cacheEntry(s.val&^slotUsed)) {
				return
			}
		}
	}
}

// update calls f once for every entry, in no particular order, and keeps
// the entry f returns, or removes it when keep is false.
func (t *txidTable) update(f func(k *wire.Hash, e cacheEntry) (ne cacheEntry, keep bool)) {
	if t.n == 0 {
		return
	}
	// Start after an empty slot (the table is never full): no run crosses
	// the start, so a removal only moves entries not visited yet into the
	// slot being visited, which is then visited again.
	start := uint64(0)
	for t.slots[start].val != 0 {
		start++
	}
	for k := uint64(1); k <= uint64(len(t.slots)); {
		i := (start + k) & t.mask
		s := &t.slots[i]
		if s.val == 0 {
			k++
			continue
		}
		ne, keep := f(&s.key, cacheEntry(s.val&^slotUsed))
		if keep {
			s.val = uint64(ne) | slotUsed
			k++
			continue
		}
		t.removeAt(i)
	}
}

// peek reads k's home slot and returns its word: a load that does not
// depend on the loads before it, so that a loop of peeks has many cache
// misses in flight at once and the lookups that follow find their slots
// cached (coinCache.warm).
func (t *txidTable) peek(k *wire.Hash) uint64 {
	if t.n == 0 {
		return 0
	}
	return t.slots[t.home(k)].val
}
