package bbolt

import (
	"bytes"
	"encoding/binary"
	"slices"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

// bbolt maps its file MADV_RANDOM, so the first touch of a page the page
// cache lacks waits for that one page. A block's connect reads thousands
// of coins at random places, which asked for together (MADV_WILLNEED)
// cost far less wall and CPU (BenchmarkAdvisedGets). Advise reads
// the branch pages on the way to the keys' leaves level by level, each
// level's pages asked for at once, and asks for the leaves without
// touching them. It reads only bbolt's page headers and branch elements
// (page.go), to choose pages: a misread costs a wasted read, never a
// wrong answer.

// bbolt's page flags and branch element size (page.go).
const (
	branchPageFlag    = 0x01
	leafPageFlag      = 0x02
	branchElementSize = 16
)

// maxDepth bounds a descent through pages that do not form a tree.
const maxDepth = 64

// residentSample is how many pages of the file, and of a level, are
// checked for residency before they are asked for.
const residentSample = 8

// mapping is the file's pages as a read transaction sees them: bbolt
// keeps the mapping in place while the transaction is open, and never
// overwrites a page the transaction can reach.
type mapping struct {
	data []byte
	ps   int
	base uintptr
}

func txMapping(tx *bolt.Tx, pageSize int) mapping {
	base := tx.DB().Info().Data
	if base == 0 || pageSize <= 0 {
		return mapping{}
	}
	// The mapping is not Go memory; bbolt itself reads pages through it.
	data := unsafe.Slice(*(**byte)(unsafe.Pointer(&base)), int(tx.Size()))
	return mapping{data: data, ps: pageSize, base: base}
}

// pages is the number of pages the mapping holds.
func (m mapping) pages() uint64 {
	if m.ps == 0 {
		return 0
	}
	return uint64(len(m.data) / m.ps)
}

// page returns page id with its overflow pages; nil when it does not lie
// within the file.
func (m mapping) page(id uint64) []byte {
	if id >= m.pages() {
		return nil
	}
	p := m.data[int(id)*m.ps:]
	over := uint64(binary.NativeEndian.Uint32(p[12:16]))
	if over >= m.pages()-id {
		return nil
	}
	return p[:int(1+over)*m.ps]
}

// branch is a branch page's elements.
type branch struct {
	p []byte
	n int
}

func asBranch(p []byte) (branch, bool) {
	if p == nil || binary.NativeEndian.Uint16(p[8:10])&branchPageFlag == 0 {
		return branch{}, false
	}
	n := int(binary.NativeEndian.Uint16(p[10:12]))
	if n == 0 || pageHeaderSize+n*branchElementSize > len(p) {
		return branch{}, false
	}
	return branch{p: p, n: n}, true
}

// key returns element i's key; nil when it lies outside the page.
func (b branch) key(i int) []byte {
	e := pageHeaderSize + i*branchElementSize
	pos := int(binary.NativeEndian.Uint32(b.p[e : e+4]))
	size := int(binary.NativeEndian.Uint32(b.p[e+4 : e+8]))
	from := e + pos
	if pos < 0 || size < 0 || from > len(b.p) || size > len(b.p)-from {
		return nil
	}
	return b.p[from : from+size]
}

func (b branch) child(i int) uint64 {
	e := pageHeaderSize + i*branchElementSize
	return binary.NativeEndian.Uint64(b.p[e+8 : e+16])
}

// span is a page and the run of sorted keys whose reads pass through it.
type span struct {
	id     uint64
	lo, hi int
}

// descend appends the children keys[s.lo:s.hi] (ascending) go to from
// branch b, as bbolt's Cursor.search chooses: the last element whose key
// is not above the key, else the first.
func descend(out []span, b branch, keys [][]byte, s span) ([]span, bool) {
	i := 0
	for k := s.lo; k < s.hi; k++ {
		for i+1 < b.n {
			ek := b.key(i + 1)
			if ek == nil {
				return out, false
			}
			if bytes.Compare(ek, keys[k]) > 0 {
				break
			}
			i++
		}
		id := b.child(i)
		if last := len(out) - 1; last >= 0 && out[last].id == id && out[last].hi == k {
			out[last].hi = k + 1
			continue
		}
		out = append(out, span{id: id, lo: k, hi: k + 1})
	}
	return out, true
}

// leaves returns the leaves reads of keys (ascending) from root land on,
// one span per run of keys on the same leaf; nil when root is 0 (an inline
// bucket has no pages of its own) or the pages do not parse. With ask set
// it asks for the pages level by level, each level's at once, the branch
// pages before it reads them and the leaves, which it does not wait for.
func (m mapping) leaves(root uint64, keys [][]byte, ask bool) []span {
	if m.data == nil || root == 0 || len(keys) == 0 {
		return nil
	}
	// The tree is balanced: one key's path gives the depth of every leaf.
	depth := 0
	for id := root; ; depth++ {
		p := m.page(id)
		if p == nil || depth == maxDepth {
			return nil
		}
		if binary.NativeEndian.Uint16(p[8:10])&leafPageFlag != 0 {
			break
		}
		b, ok := asBranch(p)
		if !ok {
			return nil
		}
		one, _ := descend(nil, b, keys[:1], span{hi: 1})
		if len(one) == 0 {
			return nil
		}
		id = one[0].id
	}
	level := []span{{id: root, hi: len(keys)}}
	var next []span
	for d := 0; d < depth; d++ {
		next = next[:0]
		for _, s := range level {
			b, ok := asBranch(m.page(s.id))
			if !ok {
				return nil
			}
			if next, ok = descend(next, b, keys, s); !ok {
				return nil
			}
		}
		level, next = next, level
		for _, s := range level {
			if s.id >= m.pages() {
				return nil
			}
		}
		if ask {
			m.willNeed(level)
		}
	}
	return level
}

// cached reports whether a sample of the file's pages, spread over it and
// shifted by seed's last byte, are all in the page cache: a small or hot
// file is, and then nothing is worth asking for.
func (m mapping) cached(seed []byte) bool {
	n := m.pages()
	if n == 0 {
		return false
	}
	shift := uint64(0)
	if len(seed) > 0 {
		shift = uint64(seed[len(seed)-1])
	}
	var ids [residentSample]uint64
	for i := range ids {
		ids[i] = (uint64(i)*n/residentSample + shift*n/(256*residentSample)) % n
	}
	return m.allResident(ids[:])
}

// allResident reports whether every one of pages ids is in the page cache.
func (m mapping) allResident(ids []uint64) bool {
	for _, id := range ids {
		if !resident(m.base, uintptr(id)*uintptr(m.ps)) {
			return false
		}
	}
	return true
}

// willNeed asks for spans' pages (MADV_WILLNEED), in page order, each
// once; adjacent pages in one call.
func (m mapping) willNeed(spans []span) {
	ids := make([]uint64, 0, len(spans))
	for _, s := range spans {
		ids = append(ids, s.id)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) >= 2*residentSample {
		// Asking for pages the cache holds costs a system call each for
		// nothing, as with a small or hot file: a sample of them all
		// resident stands for the rest.
		var sample [residentSample]uint64
		for i := range sample {
			sample[i] = ids[i*len(ids)/residentSample]
		}
		if m.allResident(sample[:]) {
			return
		}
	}
	ps := uintptr(m.ps)
	size := uintptr(len(m.data))
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[j-1]+1 {
			j++
		}
		willNeed(m.base, size, uintptr(ids[i])*ps, uintptr(j-i)*ps)
		i = j
	}
}
