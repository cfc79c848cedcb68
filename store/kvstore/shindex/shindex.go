// Package shindex is the scripthash index of the persistent store: one key
// per unspent output under the prefix 'S', ordered as scripthash.Index's
// rows,
//
//	'S' ‖ id (8) ‖ height (24-bit BE) ‖ txid (32, raw) ‖ vout (1–5 bytes, order-preserving)
//	→ uvarint(value << 1 | coinbase)
//
// so a query is one range read that never touches a coin record, and a
// page after a cursor is a seek. The id is SipHash-2-4 of the scripthash
// under a random 128-bit key made with the index and kept in its meta key:
// 8 bytes instead of the scripthash's 32 are most of what keeps the index
// near 50 bytes a coin. Two scripts share an id with probability 2^-64,
// and as the key is secret nobody can choose a script that shares one
// with someone else's (a truncated unkeyed hash could be ground to).
//
// The meta key 'S' (one byte) says whether the index is complete (or
// being built), which tip (hash, height, number of outputs) it describes
// and the id key; it is written in every flush batch with the rows, the
// coins and the store's own tip (kvstore.Index), so a crash or a
// reorganisation never leaves index and coins apart.
//
// Lookups answer from one state: under the index's read lock they copy the
// pending (unflushed) rows of their scripthashes and take a store snapshot;
// the snapshot is at the last flushed state or, between a flush's write and
// its Flushed call, at that state plus exactly the pending rows, and the
// pending rows override it either way, so the merge is the state of the
// last applied block. A lookup never waits for a flush and a flush never
// waits for a lookup (snapshots are taken per lookup: bbolt's writers wait
// for open read transactions when they grow the file).
package shindex

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/RaduBerinde/btreemap"
	"github.com/dchest/siphash"

	"utxod/backends"
	"utxod/scripthash"
	"utxod/utxo"
	"utxod/wire"
)

// Prefix is the first byte of every key of the index.
const Prefix = 'S'

// Name is the index's name on the command line (--index scripthash).
const Name = "scripthash"

// IDKey is the secret SipHash key of an index's row ids.
type IDKey [16]byte

// NewIDKey returns a random key.
func NewIDKey() IDKey {
	var k IDKey
	rand.Read(k[:]) // never fails (crypto/rand)
	return k
}

// ID is the row id of scripthash h.
func (k *IDKey) ID(h scripthash.Hash) uint64 {
	return siphash.Hash(binary.LittleEndian.Uint64(k[:8]), binary.LittleEndian.Uint64(k[8:]), h[:])
}

// MaxHeight is the highest coin height a row can hold (24 bits: enough
// for three centuries of blocks).
const MaxHeight = 1<<24 - 1

// ErrHeight: a coin is above MaxHeight.
var ErrHeight = errors.New("shindex: coin height above the index's 24 bits")

// A row's key in memory (rowKey, fixed width, compared as bytes) and on
// disk (diskKey: prefix, 3-byte height, compact vout).
const (
	idLen      = 8
	kHeight    = idLen
	kTxid      = kHeight + 4
	kVout      = kTxid + 32
	rowKeyLen  = kVout + 4
	minDiskKey = 1 + idLen + 3 + 32 + 1
	maxDiskKey = 1 + idLen + 3 + 32 + 5
)

// rowKey is a row's key in memory: id, height, txid, vout, all big-endian
// so that bytes order as the disk keys do.
type rowKey [rowKeyLen]byte

func makeRowKey(ik *IDKey, e *utxo.Entry) rowKey {
	return makeRowKeyID(ik.ID(scripthash.Of(e.Script)), e.Height, e.Outpoint)
}

func makeRowKeyID(id uint64, height uint32, op utxo.Outpoint) rowKey {
	var k rowKey
	binary.BigEndian.PutUint64(k[:], id)
	binary.BigEndian.PutUint32(k[kHeight:], height)
	copy(k[kTxid:kVout], op.Hash[:])
	binary.BigEndian.PutUint32(k[kVout:], op.Index)
	return k
}

func (k *rowKey) height() uint32 { return binary.BigEndian.Uint32(k[kHeight:]) }

func (k *rowKey) outpoint() utxo.Outpoint {
	op := utxo.Outpoint{Index: binary.BigEndian.Uint32(k[kVout:])}
	copy(op.Hash[:], k[kTxid:kVout])
	return op
}

// appendDiskKey appends k's key on disk; its height is at most MaxHeight.
// The vout takes 1 byte below 2^7, 2 below 2^14, 3 below 2^21 and 5
// otherwise, the first byte's top bits saying which, so that keys order
// as the numbers do.
func appendDiskKey(dst []byte, k *rowKey) []byte {
	dst = append(dst, Prefix)
	dst = append(dst, k[:idLen]...)
	dst = append(dst, k[kHeight+1:kTxid]...)
	dst = append(dst, k[kTxid:kVout]...)
	switch v := binary.BigEndian.Uint32(k[kVout:]); {
	case v < 1<<7:
		return append(dst, byte(v))
	case v < 1<<14:
		return append(dst, 0x80|byte(v>>8), byte(v))
	case v < 1<<21:
		return append(dst, 0xc0|byte(v>>16), byte(v>>8), byte(v))
	default:
		return binary.BigEndian.AppendUint32(append(dst, 0xe0), v)
	}
}

// parseDiskKey is appendDiskKey's inverse; it refuses any other bytes
// (a vout not in its shortest form included).
func parseDiskKey(b []byte) (rowKey, error) {
	var k rowKey
	if len(b) < minDiskKey || len(b) > maxDiskKey || b[0] != Prefix {
		return k, fmt.Errorf("shindex: bad row key %x", b)
	}
	copy(k[:idLen], b[1:])
	copy(k[kHeight+1:kTxid], b[1+idLen:])
	copy(k[kTxid:kVout], b[1+idLen+3:])
	vb := b[minDiskKey-1:]
	var v uint32
	switch {
	case vb[0] < 0x80 && len(vb) == 1:
		v = uint32(vb[0])
	case vb[0]&0xc0 == 0x80 && len(vb) == 2:
		v = uint32(vb[0]&0x3f)<<8 | uint32(vb[1])
		if v < 1<<7 {
			return k, fmt.Errorf("shindex: bad row key %x", b)
		}
	case vb[0]&0xe0 == 0xc0 && len(vb) == 3:
		v = uint32(vb[0]&0x1f)<<16 | uint32(vb[1])<<8 | uint32(vb[2])
		if v < 1<<14 {
			return k, fmt.Errorf("shindex: bad row key %x", b)
		}
	case vb[0] == 0xe0 && len(vb) == 5:
		if v = binary.BigEndian.Uint32(vb[1:]); v < 1<<21 {
			return k, fmt.Errorf("shindex: bad row key %x", b)
		}
	default:
		return k, fmt.Errorf("shindex: bad row key %x", b)
	}
	binary.BigEndian.PutUint32(k[kVout:], v)
	return k, nil
}

func cmpKey(a, b rowKey) int {
	x, y := binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8])
	if x != y {
		if x < y {
			return -1
		}
		return 1
	}
	return bytes.Compare(a[8:], b[8:])
}

// encodeValue is a row's value: the amount shifted left once, the coinbase
// flag in bit 0, as a uvarint (3–5 bytes for most outputs).
func encodeValue(dst []byte, value int64, coinbase bool) []byte {
	v := uint64(value) << 1
	if coinbase {
		v |= 1
	}
	return binary.AppendUvarint(dst, v)
}

func decodeValue(b []byte) (int64, bool, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 || n != len(b) || v>>1 > uint64(utxo.MaxMoney) {
		return 0, false, fmt.Errorf("shindex: bad row value %x", b)
	}
	return int64(v >> 1), v&1 == 1, nil
}

// decodeRow reads a key on disk and its value into the row's key and UTXO.
func decodeRow(key, val []byte) (rowKey, scripthash.UTXO, error) {
	k, err := parseDiskKey(key)
	if err != nil {
		return k, scripthash.UTXO{}, err
	}
	value, cb, err := decodeValue(val)
	if err != nil {
		return k, scripthash.UTXO{}, err
	}
	return k, scripthash.UTXO{Outpoint: k.outpoint(), Value: value, Coinbase: cb, Height: k.height()}, nil
}

// pend is a row's state since the last flush.
type pend struct {
	value int64
	flags uint8
}

const (
	pendCoinbase = 1 << iota
	pendDeleted  // the row is gone (a delete to write)
	pendFresh    // the row was absent at the last flush: deleting it writes nothing
)

// pendEntryBytes estimates one pending row's memory: key and value in a
// B-tree node (nodes run between half and full).
const pendEntryBytes = 2 * (rowKeyLen + 16)

// Index is the scripthash index of a store: a kvstore.Index (give it to
// kvstore.Open in Options.Indexes) and a
// scripthash.Index.
type Index struct {
	kv backends.KV
	mu sync.RWMutex
	// pending holds every row changed since the last flush.
	pending *btreemap.BTreeMap[rowKey, pend]
	tip     scripthash.Tip
	key     IDKey
	// metaDirty: the tip moved since the last flush.
	metaDirty bool
	closed    bool
}

var (
	_ scripthash.Index = (*Index)(nil)
)

func newIndex(kv backends.KV, tip scripthash.Tip, key IDKey) *Index {
	return &Index{kv: kv, tip: tip, key: key, pending: btreemap.New[rowKey, pend](16, cmpKey)}
}

// Errors of Open, Create, Build and Drop.
var (
	// ErrNone: the datadir has no complete index.
	ErrNone = errors.New("shindex: the datadir has no scripthash index")
	// ErrExists: the datadir already has a complete index.
	ErrExists = errors.New("shindex: the datadir already has a scripthash index")
	// ErrStale: the index describes another tip than the store's coins
	// (the datadir was written by a program that did not keep it).
	ErrStale = errors.New("shindex: the scripthash index describes another tip than the coins")
	// ErrNotNew: an index can be created with the chainstate only in a
	// datadir without one; an existing datadir builds it (Build).
	ErrNotNew = errors.New("shindex: the datadir already has a chainstate")
)

// Create returns the index of a new datadir (one whose store has no tip
// yet, or only genesis), empty at genesis; its meta key is written with the
// first flush.
func Create(kv backends.KV, genesis wire.Hash) (*Index, error) {
	// A store at genesis has no coins (the genesis output is not in the
	// set), so its index is empty too: a datadir whose first run stopped
	// before connecting a block can still take it.
	if stats, ok, err := readStoreState(kv); err != nil {
		return nil, err
	} else if ok && (stats.Height != 0 || stats.TxOuts != 0 || stats.BestBlock != genesis) {
		return nil, ErrNotNew
	}
	st, _, err := readMeta(kv)
	if err != nil {
		return nil, err
	}
	if st.State == Complete {
		return nil, ErrExists
	}
	x := newIndex(kv, scripthash.Tip{Hash: genesis}, NewIDKey())
	x.metaDirty = true
	return x, nil
}

// Open returns the complete index of a datadir: ErrNone without one,
// ErrStale when it does not describe the store's tip.
func Open(kv backends.KV) (*Index, error) {
	st, ok, err := readMeta(kv)
	if err != nil {
		return nil, err
	}
	if !ok || st.State != Complete {
		return nil, ErrNone
	}
	stats, ok, err := readStoreState(kv)
	if err != nil {
		return nil, err
	}
	if !ok || stats.BestBlock != st.Tip.Hash || stats.Height != st.Tip.Height || stats.TxOuts != st.Tip.TxOuts {
		return nil, fmt.Errorf("%w: index at %d %s, coins at %d %s (utxod index drop, then utxod index build)",
			ErrStale, st.Tip.Height, st.Tip.Hash, stats.Height, stats.BestBlock)
	}
	return newIndex(kv, st.Tip, st.Key), nil
}

// Prefix implements kvstore.Index.
func (x *Index) Prefix() byte { return Prefix }

// Apply implements kvstore.Index.
func (x *Index) Apply(_ wire.Hash, d *utxo.Delta, connect bool) error {
	for _, es := range [][]utxo.Entry{d.Created, d.Spent, d.Overwritten} {
		for i := range es {
			if es[i].Height > MaxHeight {
				return fmt.Errorf("%w: %s:%d at %d", ErrHeight, es[i].Hash, es[i].Index, es[i].Height)
			}
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if connect {
		for i := range d.Spent {
			x.del(&d.Spent[i])
		}
		for i := range d.Overwritten {
			x.del(&d.Overwritten[i])
		}
		for i := range d.Created {
			x.put(&d.Created[i])
		}
		x.tip.Height++
		x.tip.TxOuts += uint64(len(d.Created))
		x.tip.TxOuts -= uint64(len(d.Spent) + len(d.Overwritten))
	} else {
		for i := range d.Created {
			x.del(&d.Created[i])
		}
		for i := range d.Spent {
			x.put(&d.Spent[i])
		}
		x.tip.Height--
		x.tip.TxOuts += uint64(len(d.Spent))
		x.tip.TxOuts -= uint64(len(d.Created))
	}
	x.metaDirty = true
	return nil
}

// SetTip implements kvstore.TipIndex.
func (x *Index) SetTip(tip wire.Hash) {
	x.mu.Lock()
	x.tip.Hash = tip
	x.mu.Unlock()
}

// put records a row entering the set. A row that enters had no key at the
// last flush unless this window deleted it first (a coin is in the set at
// most once, and the index on disk was the set at the last flush).
func (x *Index) put(e *utxo.Entry) {
	k := makeRowKey(&x.key, e)
	p := pend{value: e.Value}
	if e.Coinbase {
		p.flags |= pendCoinbase
	}
	// One traversal in the common case (a new coin): inserted as fresh, and
	// made not fresh again only when it replaced a deletion of a row the
	// last flush wrote.
	p.flags |= pendFresh
	if _, old, replaced := x.pending.ReplaceOrInsert(k, p); replaced && old.flags&pendFresh == 0 {
		p.flags &^= pendFresh
		x.pending.ReplaceOrInsert(k, p)
	}
}

// del records a row leaving the set; a row created in this window leaves
// nothing to write.
func (x *Index) del(e *utxo.Entry) {
	k := makeRowKey(&x.key, e)
	// One traversal in the common case (a coin created in this window).
	if _, old, ok := x.pending.Delete(k); ok && old.flags&pendFresh != 0 {
		return
	}
	x.pending.ReplaceOrInsert(k, pend{flags: pendDeleted})
}

// AppendBatch implements kvstore.Index: the pending rows in key order, then
// the meta key with the tip.
func (x *Index) AppendBatch(b *backends.Batch) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var key, val []byte
	for k, p := range x.pending.Ascend(btreemap.Min[rowKey](), btreemap.Max[rowKey]()) {
		key = appendDiskKey(key[:0], &k)
		if p.flags&pendDeleted != 0 {
			b.Delete(key)
			continue
		}
		val = encodeValue(val[:0], p.value, p.flags&pendCoinbase != 0)
		b.Put(key, val)
	}
	if x.metaDirty {
		b.Put(metaKey, encodeMeta(Meta{State: Complete, Tip: x.tip, Key: x.key}))
	}
	return nil
}

// Flushed implements kvstore.Index.
func (x *Index) Flushed() {
	x.mu.Lock()
	x.pending.Clear(true)
	x.metaDirty = false
	x.mu.Unlock()
}

// PendingBytes implements kvstore.SizedIndex.
func (x *Index) PendingBytes() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return int64(x.pending.Len()) * pendEntryBytes
}

// BatchSize implements kvstore.BatchSizer: every pending row is one
// operation of at most maxDiskKey bytes of key and a uvarint of value.
func (x *Index) BatchSize() (bytes, ops int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := x.pending.Len()
	return n*(maxDiskKey+binary.MaxVarintLen64) + len(metaKey) + 64, n + 1
}

// Tip is the state the index describes (the last applied block).
func (x *Index) Tip() scripthash.Tip {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.tip
}

// Close ends lookups (they return backends.ErrClosed); the store drops the
// pending rows with its own unflushed changes.
func (x *Index) Close() {
	x.mu.Lock()
	x.closed = true
	x.mu.Unlock()
}

// overlayRow is a pending row a lookup merges over the snapshot.
type overlayRow struct {
	key rowKey
	p   pend
}

// Lookup implements scripthash.Index.
func (x *Index) Lookup(ctx context.Context, qs []scripthash.Query) (scripthash.Result, error) {
	for i := range qs {
		q := &qs[i]
		if q.Limit < 0 || (q.Script != nil && scripthash.Of(q.Script) != q.Hash) || (q.After != nil && q.After.Height > MaxHeight) {
			return scripthash.Result{}, scripthash.ErrQuery
		}
	}
	if err := ctx.Err(); err != nil {
		return scripthash.Result{}, err
	}
	x.mu.RLock()
	if x.closed {
		x.mu.RUnlock()
		return scripthash.Result{}, fmt.Errorf("shindex: %w", backends.ErrClosed)
	}
	res := scripthash.Result{Tip: x.tip, Answers: make([]scripthash.Answer, len(qs))}
	ids := make([]uint64, len(qs)) // the key never changes: hashed once per query
	for i := range qs {
		ids[i] = x.key.ID(qs[i].Hash)
	}
	var snap backends.Snapshot
	var err error
	overlays := make([][]overlayRow, len(qs))
	if len(qs) > 0 {
		snap, err = x.kv.NewSnapshot()
		if x.pending.Len() > 0 {
			for i := range qs {
				lo, hi := idBounds(ids[i])
				for k, p := range x.pending.Ascend(btreemap.GE(lo), btreemap.LT(hi)) {
					overlays[i] = append(overlays[i], overlayRow{k, p})
				}
			}
		}
	}
	x.mu.RUnlock()
	if err != nil {
		return scripthash.Result{}, fmt.Errorf("shindex: %w", err)
	}
	if snap == nil {
		return res, nil
	}
	defer snap.Close()
	for i := range qs {
		if err := answer(ctx, snap, &qs[i], ids[i], overlays[i], &res.Answers[i]); err != nil {
			return scripthash.Result{}, err
		}
	}
	return res, nil
}

// idBounds are the pending keys of id: [id‖0…, id+1‖0…).
func idBounds(id uint64) (lo, hi rowKey) {
	binary.BigEndian.PutUint64(lo[:], id)
	if id == ^uint64(0) { // above every key: no height reaches 0xff…
		for i := range hi {
			hi[i] = 0xff
		}
		return lo, hi
	}
	binary.BigEndian.PutUint64(hi[:], id+1)
	return lo, hi
}

// answer merges the snapshot's rows of id (q.Hash's) with the pending ones
// (which win) in key order.
func answer(ctx context.Context, snap backends.Snapshot, q *scripthash.Query, id uint64, over []overlayRow, a *scripthash.Answer) error {
	prefix := binary.BigEndian.AppendUint64([]byte{Prefix}, id)
	rng := backends.Range{Prefix: prefix, Few: true}
	var after rowKey
	if q.After != nil {
		after = makeRowKeyID(id, q.After.Height, utxo.Outpoint{Hash: q.After.Txid, Index: q.After.Vout})
		if !q.Summary { // only rows after the cursor matter: seek past it
			rng.Start = append(appendDiskKey(nil, &after), 0)
		}
	}
	it, err := snap.NewIterator(rng)
	if err != nil {
		return fmt.Errorf("shindex: %w", err)
	}
	defer it.Close()
	// emit takes one row in key order; false stops the walk.
	emit := func(k *rowKey, u scripthash.UTXO) bool {
		if q.Summary {
			a.Count++
			a.Sum += u.Value
		}
		if q.After != nil && cmpKey(*k, after) <= 0 {
			return true
		}
		if len(a.UTXOs) < q.Limit {
			a.UTXOs = append(a.UTXOs, u)
			return true
		}
		a.More = true
		return q.Summary
	}
	// ok, k and u: the iterator's row, decoded once per step.
	var ok bool
	var k rowKey
	var u scripthash.UTXO
	next := func() error {
		var err error
		if ok = it.Next(); ok {
			k, u, err = decodeRow(it.Key(), it.Value())
		}
		return err
	}
	if err := next(); err != nil {
		return err
	}
	n := 0
	for {
		if n++; n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		fromOverlay := false
		switch {
		case ok && len(over) > 0:
			switch c := cmpKey(k, over[0].key); {
			case c == 0: // the pending state replaces the stored one
				if err := next(); err != nil {
					return err
				}
				fromOverlay = true
			case c > 0:
				fromOverlay = true
			}
		case ok:
		case len(over) > 0:
			fromOverlay = true
		default:
			return it.Err()
		}
		if fromOverlay {
			o := over[0]
			over = over[1:]
			if o.p.flags&pendDeleted != 0 {
				continue
			}
			u := scripthash.UTXO{Outpoint: o.key.outpoint(), Value: o.p.value, Coinbase: o.p.flags&pendCoinbase != 0, Height: o.key.height()}
			if !emit(&o.key, u) {
				return nil
			}
			continue
		}
		if !emit(&k, u) {
			return nil
		}
		if err := next(); err != nil {
			return err
		}
	}
}
