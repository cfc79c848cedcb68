package validate

import (
	"hash/maphash"

	"utxod/wire"
)

// The block index's storage: nodes in fixed-size chunks that never move
// (so *BlockNode stays valid and a node costs no allocation of its own), and
// a hash table of uint32 positions into them instead of a map of pointers
// (a mainnet index holds ~900k nodes; see bench/results/scale.md).

// chunkBits sets the nodes per chunk: 1024 nodes of ~200 bytes.
const chunkBits = 10

// arena holds nodes by position.
type arena struct {
	chunks [][]BlockNode
	n      uint32
}

// alloc returns the position and address of a new zero node.
func (a *arena) alloc() (uint32, *BlockNode) {
	i := a.n
	if int(i>>chunkBits) == len(a.chunks) {
		a.chunks = append(a.chunks, make([]BlockNode, 1<<chunkBits))
	}
	a.n++
	return i, a.at(i)
}

// at returns the node at position i (< len).
func (a *arena) at(i uint32) *BlockNode {
	return &a.chunks[i>>chunkBits][i&(1<<chunkBits-1)]
}

func (a *arena) len() int { return int(a.n) }

// each calls fn for every node in allocation order until fn returns false.
func (a *arena) each(fn func(*BlockNode) bool) {
	for i := range a.n {
		if !fn(a.at(i)) {
			return
		}
	}
}

// hashTable maps block hashes to arena positions: open addressing with
// linear probing, at most 3/4 full. A slot holds 32 bits of a seeded hash
// of the block hash (its tag, whose low bits are also where its probe
// starts) beside position+1 (0 is empty): a probe reads a node only when
// the tags match, and a resize reads none. The seed keeps chosen hashes
// from crowding one run of slots.
type hashTable struct {
	seed  maphash.Seed
	slots []uint64
	n     int
}

func newHashTable() hashTable {
	return hashTable{seed: maphash.MakeSeed(), slots: make([]uint64, 64)}
}

// find returns the position of h.
func (t *hashTable) find(a *arena, h wire.Hash) (uint32, bool) {
	mask := len(t.slots) - 1
	tag := t.tag(h)
	for s := int(tag) & mask; ; s = (s + 1) & mask {
		v := t.slots[s]
		if v == 0 {
			return 0, false
		}
		if v>>32 == tag && a.at(uint32(v)-1).Hash == h {
			return uint32(v) - 1, true
		}
	}
}

// insert adds h at position i; h must not be present.
func (t *hashTable) insert(a *arena, h wire.Hash, i uint32) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.resize(a, len(t.slots)*2, nil)
	}
	t.put(t.tag(h)<<32 | uint64(i+1))
	t.n++
}

func (t *hashTable) tag(h wire.Hash) uint64 { return maphash.Comparable(t.seed, h) >> 32 }

// put stores slot value v in the first free slot from its tag's.
func (t *hashTable) put(v uint64) {
	mask := len(t.slots) - 1
	s := int(v>>32) & mask
	for t.slots[s] != 0 {
		s = (s + 1) & mask
	}
	t.slots[s] = v
}

// rebuild keeps only the entries whose nodes keep accepts (Load's orphans
// leave this way; linear probing has no cheap delete).
func (t *hashTable) rebuild(a *arena, keep func(*BlockNode) bool) {
	t.resize(a, len(t.slots), keep)
}

// resize moves the entries to size slots, those keep accepts (nil: all).
func (t *hashTable) resize(a *arena, size int, keep func(*BlockNode) bool) {
	old := t.slots
	t.slots, t.n = make([]uint64, size), 0
	for _, v := range old {
		if v != 0 && (keep == nil || keep(a.at(uint32(v)-1))) {
			t.put(v)
			t.n++
		}
	}
}
