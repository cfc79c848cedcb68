//go:build rocksdb

package rocksdb

/*
#cgo LDFLAGS: -lrocksdb
#include <stdint.h>
#include <string.h>
#include <rocksdb/c.h>

// utxod_iter_fill copies entries from it's current position into buf as
// records [u32 LE key length][u32 LE value length][key][value], advancing
// it past each one, until buf is full or it is no longer valid. It returns
// the number of records and sets *used to their bytes. When the first
// entry alone does not fit, it returns 0 with *need set to its size
// (UINT64_MAX for an entry whose lengths do not fit 32 bits).
static size_t utxod_iter_fill(rocksdb_iterator_t* it, char* buf, size_t cap,
                              size_t* used, uint64_t* need) {
	size_t off = 0, n = 0;
	*need = 0;
	while (rocksdb_iter_valid(it)) {
		size_t kl, vl;
		const char* k = rocksdb_iter_key(it, &kl);
		const char* v = rocksdb_iter_value(it, &vl);
		if (kl > 0xffffffffu || vl > 0xffffffffu) {
			if (n == 0) *need = UINT64_MAX;
			break;
		}
		size_t sz = 8 + kl + vl;
		if (sz > cap - off) {
			if (n == 0) *need = sz;
			break;
		}
		unsigned char* p = (unsigned char*)buf + off;
		for (int i = 0; i < 4; i++) {
			p[i] = (unsigned char)(kl >> (8 * i));
			p[4 + i] = (unsigned char)(vl >> (8 * i));
		}
		if (kl) memcpy(p + 8, k, kl);
		if (vl) memcpy(p + 8 + kl, v, vl);
		off += sz;
		n++;
		rocksdb_iter_next(it);
	}
	*used = off;
	return n;
}
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"unsafe"

	"github.com/linxGnu/grocksdb"
)

// A batched cursor reads entries in bulk: one cgo call copies as many as
// fit into a Go buffer, where grocksdb's iterator needs four cgo calls and
// two allocations per entry (Valid, Key, Value, Next), which made RocksDB's
// scans and dumps 3× slower than pebble's (bench/results/snapshot.md,
// addressindex.md). The first fill is small so that short ranges (an index
// lookup, a first key) copy little; each later fill doubles up to
// maxFillBytes.
const (
	firstFillBytes = 4 << 10
	maxFillBytes   = 1 << 20
)

// errEntryTooLarge reports an entry whose key or value length does not fit
// the fill record's 32 bits.
var errEntryTooLarge = errors.New("rocksdb: iterator: entry larger than 4 GiB")

// cIterator returns the C iterator behind it. grocksdb keeps it in the only
// field of Iterator and has no accessor; iteratorLayoutOK checks that
// layout (grocksdb is pinned in go.mod, and TestBatchedIteratorLayout fails
// if an upgrade changes it).
func cIterator(it *grocksdb.Iterator) *C.rocksdb_iterator_t {
	return *(**C.rocksdb_iterator_t)(unsafe.Pointer(it))
}

// iteratorLayoutOK reports whether grocksdb.Iterator is one pointer field,
// the layout cIterator reads.
func iteratorLayoutOK() bool {
	t := reflect.TypeOf(grocksdb.Iterator{})
	return t.NumField() == 1 && t.Field(0).Type.Kind() == reflect.Pointer &&
		t.Field(0).Offset == 0 && t.Size() == unsafe.Sizeof(uintptr(0))
}

var batchedIterators = iteratorLayoutOK()

// batchCursor is a guard.Cursor over a grocksdb iterator that copies
// entries out in fills. Entry's slices point into buf and stay valid until
// the next fill, which happens only in Next or First (the Iterator
// contract: valid until the next Next).
type batchCursor struct {
	cursor // the iterator, its options and bounds; Err and Close extend its
	c      *C.rocksdb_iterator_t

	buf      []byte
	fill     int // bytes of the current fill
	off      int // start of the next record in buf
	left     int // records of the fill not yet returned
	key, val []byte
	err      error
}

func newBatchCursor(it *grocksdb.Iterator, ro *grocksdb.ReadOptions, lower []byte) *batchCursor {
	return &batchCursor{cursor: cursor{it: it, ro: ro, lower: lower}, c: cIterator(it)}
}

func (c *batchCursor) First() bool {
	c.it.Seek(c.lower)
	return c.refill() && c.next()
}

func (c *batchCursor) Next() bool {
	if c.err != nil {
		return false
	}
	if c.left == 0 && !c.refill() {
		return false
	}
	return c.next()
}

// refill copies the next entries into buf; false at the end or on error.
func (c *batchCursor) refill() bool {
	size := firstFillBytes
	if len(c.buf) > 0 {
		size = min(2*len(c.buf), maxFillBytes)
	}
	for {
		if len(c.buf) < size {
			c.buf = make([]byte, size)
		}
		var used C.size_t
		var need C.uint64_t
		n := C.utxod_iter_fill(c.c, (*C.char)(unsafe.Pointer(&c.buf[0])), C.size_t(len(c.buf)), &used, &need)
		if n > 0 {
			c.fill, c.off, c.left = int(used), 0, int(n)
			return true
		}
		switch {
		case need == 0: // the iterator is done (end of range or error)
			c.left = 0
			return false
		case uint64(need) == math.MaxUint64 || uint64(need) > math.MaxInt32:
			c.err = errEntryTooLarge
			return false
		}
		size = int(need)
	}
}

// next decodes the record at off; the fill holds at least one more.
func (c *batchCursor) next() bool {
	b := c.buf[c.off:c.fill]
	kl := int(binary.LittleEndian.Uint32(b))
	vl := int(binary.LittleEndian.Uint32(b[4:]))
	c.key = b[8 : 8+kl : 8+kl]
	c.val = b[8+kl : 8+kl+vl : 8+kl+vl]
	c.off += 8 + kl + vl
	c.left--
	return true
}

func (c *batchCursor) Entry() ([]byte, []byte, error) { return c.key, c.val, nil }

func (c *batchCursor) Err() error {
	if c.err != nil {
		return c.err
	}
	return c.cursor.Err()
}

func (c *batchCursor) Close() error {
	c.buf = nil
	return c.cursor.Close()
}
