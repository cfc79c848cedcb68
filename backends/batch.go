package backends

import (
	"bytes"
	"slices"
)

// Writer receives the operations of a Batch during Replay.
type Writer interface {
	Put(key, value []byte) error
	Delete(key []byte) error
}

type opKind uint8

const (
	opPut opKind = iota + 1
	opDelete
)

type op struct {
	kind       opKind
	koff, klen int
	voff, vlen int
}

// Batch collects Put and Delete operations to be applied atomically by
// KV.Write. It belongs to no store: the same batch may be written to any KV.
// Put and Delete copy their arguments, so the caller may reuse its buffers
// immediately. A Batch is not safe for concurrent use. The zero value is an
// empty batch ready for use.
type Batch struct {
	buf  []byte
	ops  []op
	size int
}

// NewBatch returns an empty batch.
func NewBatch() *Batch { return &Batch{} }

// Put records that key is to hold value. An empty value is allowed. Whether an
// empty key is allowed depends on the store (Write reports ErrEmptyKey).
func (b *Batch) Put(key, value []byte) {
	b.init()
	ko := len(b.buf)
	b.buf = append(b.buf, key...)
	vo := len(b.buf)
	b.buf = append(b.buf, value...)
	b.ops = append(b.ops, op{kind: opPut, koff: ko, klen: len(key), voff: vo, vlen: len(value)})
	b.size += len(key) + len(value)
}

// Delete records that key is to be removed. Deleting an absent key is not an
// error.
func (b *Batch) Delete(key []byte) {
	b.init()
	ko := len(b.buf)
	b.buf = append(b.buf, key...)
	b.ops = append(b.ops, op{kind: opDelete, koff: ko, klen: len(key)})
	b.size += len(key)
}

// init makes buf non-nil so that Replay never hands out nil slices.
func (b *Batch) init() {
	if b.buf == nil {
		b.buf = make([]byte, 0, 256)
	}
}

// Len returns the number of operations recorded.
// A nil *Batch is an empty batch for Len, Size, Replay and HasEmptyKey.
func (b *Batch) Len() int {
	if b == nil {
		return 0
	}
	return len(b.ops)
}

// Size returns the number of key and value bytes recorded, a measure of the
// memory the batch holds and of the write it will cause.
func (b *Batch) Size() int {
	if b == nil {
		return 0
	}
	return b.size
}

// Grow makes room for at least n more bytes of keys and values and ops more
// operations without reallocating (a caller that knows a large batch's size
// avoids repeated growth copies).
func (b *Batch) Grow(n, ops int) {
	if cap(b.buf)-len(b.buf) < n {
		nb := make([]byte, len(b.buf), len(b.buf)+n)
		copy(nb, b.buf)
		b.buf = nb
	}
	if cap(b.ops)-len(b.ops) < ops {
		no := make([]op, len(b.ops), len(b.ops)+ops)
		copy(no, b.ops)
		b.ops = no
	}
}

// Reset empties the batch, keeping its allocated memory for reuse.
func (b *Batch) Reset() {
	b.buf = b.buf[:0]
	b.ops = b.ops[:0]
	b.size = 0
}

// Replay feeds the operations to w in the order they were recorded, stopping
// at the first error, which it returns. The key and value slices passed to w
// alias the batch's memory: w must copy them if it keeps them, must not
// modify them, and they are invalid after the batch is modified or Reset.
// Keys and values are never nil (empty ones are zero-length slices).
func (b *Batch) Replay(w Writer) error {
	if b == nil {
		return nil
	}
	for _, o := range b.ops {
		key := b.buf[o.koff : o.koff+o.klen : o.koff+o.klen]
		var err error
		switch o.kind {
		case opPut:
			err = w.Put(key, b.buf[o.voff:o.voff+o.vlen:o.voff+o.vlen])
		case opDelete:
			err = w.Delete(key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ReplayLast is Replay in key order with only the last operation on each
// key, so the keys arrive strictly ascending and the result equals
// Replay's: what a sorted table file (RocksDB's ingested flush) must be
// given, and what lets a B+tree store (bbolt) rewrite each of its pages
// once.
func (b *Batch) ReplayLast(w Writer) error {
	if b == nil {
		return nil
	}
	if b.ascending() {
		return b.Replay(w) // already in key order (a bulk load's appends)
	}
	idx := make([]int32, len(b.ops))
	for i := range idx {
		idx[i] = int32(i)
	}
	key := func(i int32) []byte {
		o := b.ops[i]
		return b.buf[o.koff : o.koff+o.klen]
	}
	slices.SortStableFunc(idx, func(x, y int32) int { return bytes.Compare(key(x), key(y)) })
	for j, i := range idx {
		if j+1 < len(idx) && bytes.Equal(key(i), key(idx[j+1])) {
			continue // a later operation on this key follows
		}
		o := b.ops[i]
		k := b.buf[o.koff : o.koff+o.klen : o.koff+o.klen]
		var err error
		switch o.kind {
		case opPut:
			err = w.Put(k, b.buf[o.voff:o.voff+o.vlen:o.voff+o.vlen])
		case opDelete:
			err = w.Delete(k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// HasEmptyKey reports whether any operation has an empty key. Stores that
// cannot hold empty keys call it before applying a batch.
func (b *Batch) HasEmptyKey() bool {
	if b == nil {
		return false
	}
	for _, o := range b.ops {
		if o.klen == 0 {
			return true
		}
	}
	return false
}

// AscendingPuts reports whether b is non-empty and holds only Puts, in
// strictly ascending key order: what a store can write as one sorted table
// file (see Appender).
func (b *Batch) AscendingPuts() bool {
	if b.Len() == 0 {
		return false
	}
	for _, o := range b.ops {
		if o.kind != opPut {
			return false
		}
	}
	return b.ascending()
}

// ascending reports whether the keys of b's operations strictly ascend.
func (b *Batch) ascending() bool {
	for i := 1; i < len(b.ops); i++ {
		o, p := b.ops[i], b.ops[i-1]
		if bytes.Compare(b.buf[o.koff:o.koff+o.klen], b.buf[p.koff:p.koff+p.klen]) <= 0 {
			return false
		}
	}
	return true
}
