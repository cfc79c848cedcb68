package bbolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The store's records are kept in chunks: a bbolt key and value holding a
// run of consecutive records. bbolt spends 16 bytes of leaf header on
// every key it holds, and stores each key whole: at 185 M coins a
// scripthash row took 65 bytes, 16 of them header. A chunk pays the
// header once for about a kilobyte of records, and each record keeps
// only what its key does not share with the previous one.
//
// A chunk's bbolt key is its first record's key, so the chunk that may
// hold a key is the last one whose key is not above it. Its value is
//
//	uvarint(len v₀) v₀
//	then for every later record: uvarint(shared) uvarint(len suffix) suffix uvarint(len v) v
//
// where shared is how many leading bytes the record's key shares with
// the previous record's. Keys ascend strictly within a chunk and across
// chunks.

// ErrCorrupt: a chunk's bytes do not decode.
var ErrCorrupt = errors.New("bbolt: corrupt chunk")

// chunkBudget is the bytes of a leaf page one chunk may take, header and
// key included: four chunks fill a page, and a node of at most four keys,
// which bbolt never splits, still fits one.
func chunkBudget(pageSize int) int { return (pageSize-pageHeaderSize)/4 - leafElementSize }

// bbolt's page and leaf element headers (page.go).
const (
	pageHeaderSize  = 16
	leafElementSize = 16
)

// minChunk bounds the value budget of a chunk whose first key is long.
const minChunk = 256

// maxValue is the most bytes a chunk's value may take for a first key of
// keyLen bytes.
func maxValue(budget, keyLen int) int { return max(budget-keyLen, minChunk) }

// chunkReader walks a chunk's records in order.
type chunkReader struct {
	key   []byte // the current record's key (the reader's own buffer)
	val   []byte // the current record's value (aliases the chunk)
	rest  []byte
	first bool
	err   error
}

// reset positions r before the first record of chunk ck → cv.
func (r *chunkReader) reset(ck, cv []byte) {
	r.key = append(r.key[:0], ck...)
	r.val, r.rest, r.first, r.err = nil, cv, true, nil
}

// next advances to the next record; false at the chunk's end or when its
// bytes do not decode (r.err).
func (r *chunkReader) next() bool {
	if r.first {
		r.first = false
		v, rest, ok := lenPrefixed(r.rest)
		if !ok {
			return r.fail("first value")
		}
		r.val, r.rest = v, rest
		return true
	}
	if len(r.rest) == 0 || r.err != nil {
		return false
	}
	shared, m := binary.Uvarint(r.rest)
	if m <= 0 || shared > uint64(len(r.key)) {
		return r.fail("shared prefix")
	}
	suffix, rest, ok := lenPrefixed(r.rest[m:])
	if !ok || shared+uint64(len(suffix)) == 0 {
		return r.fail("key")
	}
	v, rest, ok := lenPrefixed(rest)
	if !ok {
		return r.fail("value")
	}
	r.key = append(r.key[:shared], suffix...)
	r.val, r.rest = v, rest
	return true
}

func (r *chunkReader) fail(what string) bool {
	r.err = fmt.Errorf("%w: %s of the record after %x", ErrCorrupt, what, bytes.Clone(r.key))
	r.val, r.rest = nil, nil
	return false
}

// lenPrefixed splits b into a uvarint-length-prefixed field and the rest.
func lenPrefixed(b []byte) (field, rest []byte, ok bool) {
	n, m := binary.Uvarint(b)
	if m <= 0 || n > uint64(len(b)-m) {
		return nil, nil, false
	}
	return b[m : m+int(n)], b[m+int(n):], true
}

// record is one key and value.
type record struct{ k, v []byte }

// firstSize is the bytes of a chunk's first record, value v.
func firstSize(v []byte) int { return uvarintLen(len(v)) + len(v) }

// appendFirst appends a chunk's first record, value v (its key is the
// chunk's).
func appendFirst(dst, v []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(v)))
	return append(dst, v...)
}

// recordSize is the bytes record k → v adds to a chunk after a record
// with key prev.
func recordSize(prev, k, v []byte) int {
	s := sharedLen(prev, k)
	return uvarintLen(s) + uvarintLen(len(k)-s) + len(k) - s + uvarintLen(len(v)) + len(v)
}

// appendRecord appends record k → v after a record with key prev.
func appendRecord(dst, prev, k, v []byte) []byte {
	s := sharedLen(prev, k)
	dst = binary.AppendUvarint(dst, uint64(s))
	dst = binary.AppendUvarint(dst, uint64(len(k)-s))
	dst = append(dst, k[s:]...)
	return appendFirst(dst, v)
}

func sharedLen(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func uvarintLen(n int) int {
	l := 1
	for n >= 0x80 {
		n >>= 7
		l++
	}
	return l
}

// floor positions c on the chunk that may hold key, the last whose key is
// not above it; nil when key is below every chunk.
func floor(c *bolt.Cursor, key []byte) (ck, cv []byte) {
	ck, cv = c.Seek(key)
	switch {
	case ck == nil:
		return c.Last()
	case bytes.Equal(ck, key):
		return ck, cv
	}
	return c.Prev()
}

// chunkFrom positions c on the first chunk that may hold keys from key on:
// the floor, or the first chunk when key is below every chunk; nil when
// the bucket is empty.
func chunkFrom(c *bolt.Cursor, key []byte) (ck, cv []byte) {
	if ck, cv = floor(c, key); ck == nil {
		ck, cv = c.First()
	}
	return ck, cv
}

// lookup returns key's value in bk (aliasing the transaction's memory);
// found false when absent.
func lookup(bk *bolt.Bucket, key []byte) (v []byte, found bool, err error) {
	ck, cv := floor(bk.Cursor(), key)
	if ck == nil {
		return nil, false, nil
	}
	var r chunkReader
	r.reset(ck, cv)
	for r.next() {
		switch bytes.Compare(r.key, key) {
		case 0:
			return r.val, true, nil
		case 1:
			return nil, false, nil
		}
	}
	return nil, false, r.err
}

// packer applies sorted operations to a bucket of chunks.
type packer struct {
	bk     *bolt.Bucket
	budget int
	// greedy fills every chunk to its budget (an append's); otherwise a
	// chunk that outgrows its budget splits into parts of equal size, so
	// later inserts find room.
	greedy bool

	ops     []bop    // the batch's operations, keys ascending
	arena   []byte   // copies of the chunk being changed
	records []record // its records
	merged  []record
}

// bop is one operation, its slices aliasing the batch.
type bop struct {
	k, v []byte
	del  bool
}

func (p *packer) Put(k, v []byte) error {
	p.ops = append(p.ops, bop{k: k, v: v})
	return nil
}

func (p *packer) Delete(k []byte) error {
	p.ops = append(p.ops, bop{k: k, del: true})
	return nil
}

// apply writes p.ops (strictly ascending keys) into p.bk, rewriting each
// chunk they fall in once.
func (p *packer) apply() error {
	ops := p.ops
	c := p.bk.Cursor()
	for len(ops) > 0 {
		ck, cv := chunkFrom(c, ops[0].k) // keys below every chunk join the first
		p.arena, p.records = p.arena[:0], p.records[:0]
		var upper []byte
		if ck != nil {
			ck = p.copy(ck)
			if err := p.decode(ck, cv); err != nil {
				return err
			}
			if nk, _ := c.Next(); nk != nil {
				upper = p.copy(nk)
			}
		}
		n := len(ops)
		if upper != nil {
			n = 0
			for n < len(ops) && bytes.Compare(ops[n].k, upper) < 0 {
				n++
			}
		}
		changed := p.merge(ops[:n])
		ops = ops[n:]
		if !changed {
			continue
		}
		if ck != nil && (len(p.merged) == 0 || !bytes.Equal(p.merged[0].k, ck)) {
			if err := p.bk.Delete(ck); err != nil {
				return err
			}
		}
		if err := p.write(p.merged); err != nil {
			return err
		}
	}
	return nil
}

// copy returns b copied into the arena (valid until the next chunk).
func (p *packer) copy(b []byte) []byte {
	off := len(p.arena)
	p.arena = append(p.arena, b...)
	return p.arena[off:len(p.arena):len(p.arena)]
}

// decode appends chunk ck → cv's records, copied, to p.records.
func (p *packer) decode(ck, cv []byte) error {
	var r chunkReader
	r.reset(ck, cv)
	var prev []byte
	for r.next() {
		if prev != nil && bytes.Compare(prev, r.key) >= 0 {
			return fmt.Errorf("%w: key %x after %x", ErrCorrupt, r.key, prev)
		}
		rec := record{k: p.copy(r.key), v: p.copy(r.val)}
		p.records = append(p.records, rec)
		prev = rec.k
	}
	return r.err
}

// merge sets p.merged to p.records with ops applied; changed reports
// whether that differs from the records.
func (p *packer) merge(ops []bop) (changed bool) {
	p.merged = p.merged[:0]
	i := 0
	for _, o := range ops {
		for i < len(p.records) && bytes.Compare(p.records[i].k, o.k) < 0 {
			p.merged = append(p.merged, p.records[i])
			i++
		}
		if i < len(p.records) && bytes.Equal(p.records[i].k, o.k) {
			i++
			changed = true
		}
		if !o.del {
			p.merged = append(p.merged, record{k: o.k, v: o.v})
			changed = true
		}
	}
	p.merged = append(p.merged, p.records[i:]...)
	return changed
}

// write puts recs as chunks within the budget. bbolt keeps the value
// slices it is given until the transaction ends, so each is a new one.
func (p *packer) write(recs []record) error {
	target := 0 // the bytes a part aims at when not greedy (0: fill up)
	if !p.greedy && len(recs) > 0 {
		total := firstSize(recs[0].v)
		for j := 1; j < len(recs); j++ {
			total += recordSize(recs[j-1].k, recs[j].k, recs[j].v)
		}
		lim := maxValue(p.budget, len(recs[0].k))
		if parts := (total + lim - 1) / lim; parts > 1 {
			target = (total + parts - 1) / parts
		}
	}
	for len(recs) > 0 {
		limit := maxValue(p.budget, len(recs[0].k))
		size := firstSize(recs[0].v)
		j := 1
		for ; j < len(recs) && (target == 0 || size < target); j++ {
			n := recordSize(recs[j-1].k, recs[j].k, recs[j].v)
			if size+n > limit {
				break
			}
			size += n
		}
		v := make([]byte, 0, size)
		v = appendFirst(v, recs[0].v)
		for i := 1; i < j; i++ {
			v = appendRecord(v, recs[i-1].k, recs[i].k, recs[i].v)
		}
		if err := p.bk.Put(recs[0].k, v); err != nil {
			return err
		}
		recs = recs[j:]
	}
	return nil
}
