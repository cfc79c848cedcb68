// Package shindex is the scripthash index of the persistent store: one key
// per unspent output under the prefix 'S', ordered as scripthash.Index's
// rows,
//
//	'S' ‖ scripthash (32) ‖ height (uint32 BE) ‖ txid (32, raw) ‖ vout (uint32 BE)
//	→ uvarint(value << 1 | coinbase)
//
// so a query is one range read that never touches a coin record, and a
// page after a cursor is a seek. The meta key 'S' (one byte) says whether
// the index is complete (or being built) and which tip (hash, height,
// number of outputs) it describes; it is written in every flush batch with
// the rows, the coins and the store's own tip (kvstore.Index), so a crash
// or a reorganisation never leaves index and coins apart.
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
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/RaduBerinde/btreemap"

	"utxod/backends"
	"utxod/scripthash"
	"utxod/utxo"
	"utxod/wire"
)

// Prefix is the first byte of every key of the index.
const Prefix = 'S'

// Name is the index's name on the command line (--index scripthash).
const Name = "scripthash"

const (
	keyLen  = 1 + 32 + 4 + 32 + 4
	hashEnd = 1 + 32
)

// rowKey is a row's key without the prefix.
type rowKey [keyLen - 1]byte

func makeRowKey(e *utxo.Entry) rowKey {
	return makeRowKeyHash(scripthash.Of(e.Script), e.Height, e.Outpoint)
}

func makeRowKeyHash(h scripthash.Hash, height uint32, op utxo.Outpoint) rowKey {
	var k rowKey
	copy(k[:32], h[:])
	binary.BigEndian.PutUint32(k[32:], height)
	copy(k[36:68], op.Hash[:])
	binary.BigEndian.PutUint32(k[68:], op.Index)
	return k
}

func (k *rowKey) full() []byte { return append([]byte{Prefix}, k[:]...) }

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

// decodeRow reads a full key (with the prefix) and value into a UTXO.
func decodeRow(key, val []byte) (scripthash.UTXO, error) {
	if len(key) != keyLen {
		return scripthash.UTXO{}, fmt.Errorf("shindex: bad row key %x", key)
	}
	value, cb, err := decodeValue(val)
	if err != nil {
		return scripthash.UTXO{}, err
	}
	u := scripthash.UTXO{Value: value, Coinbase: cb, Height: binary.BigEndian.Uint32(key[33:])}
	copy(u.Outpoint.Hash[:], key[37:69])
	u.Outpoint.Index = binary.BigEndian.Uint32(key[69:])
	return u, nil
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
const pendEntryBytes = 2 * (keyLen + 16)

// Index is the scripthash index of a store: a kvstore.Index (give it to
// kvstore.Open in Options.Indexes) and a
// scripthash.Index.
type Index struct {
	kv backends.KV
	mu sync.RWMutex
	// pending holds every row changed since the last flush.
	pending *btreemap.BTreeMap[rowKey, pend]
	tip     scripthash.Tip
	// metaDirty: the tip moved since the last flush.
	metaDirty bool
	closed    bool
}

var (
	_ scripthash.Index = (*Index)(nil)
)

func newIndex(kv backends.KV, tip scripthash.Tip) *Index {
	return &Index{kv: kv, tip: tip, pending: btreemap.New[rowKey, pend](16, cmpKey)}
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
	x := newIndex(kv, scripthash.Tip{Hash: genesis})
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
	return newIndex(kv, st.Tip), nil
}

// Prefix implements kvstore.Index.
func (x *Index) Prefix() byte { return Prefix }

// Apply implements kvstore.Index.
func (x *Index) Apply(_ wire.Hash, d *utxo.Delta, connect bool) error {
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
	k := makeRowKey(e)
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
	k := makeRowKey(e)
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
	key := make([]byte, keyLen)
	key[0] = Prefix
	var val []byte
	for k, p := range x.pending.Ascend(btreemap.Min[rowKey](), btreemap.Max[rowKey]()) {
		copy(key[1:], k[:])
		if p.flags&pendDeleted != 0 {
			b.Delete(key)
			continue
		}
		val = encodeValue(val[:0], p.value, p.flags&pendCoinbase != 0)
		b.Put(key, val)
	}
	if x.metaDirty {
		b.Put(metaKey, encodeMeta(Meta{State: Complete, Tip: x.tip}))
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
// operation of keyLen bytes of key and at most a uvarint of value.
func (x *Index) BatchSize() (bytes, ops int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := x.pending.Len()
	return n*(keyLen+binary.MaxVarintLen64) + len(metaKey) + 64, n + 1
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
		if q.Limit < 0 || (q.Script != nil && scripthash.Of(q.Script) != q.Hash) {
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
	var snap backends.Snapshot
	var err error
	overlays := make([][]overlayRow, len(qs))
	if len(qs) > 0 {
		snap, err = x.kv.NewSnapshot()
		if x.pending.Len() > 0 {
			for i := range qs {
				lo, hi := hashBounds(qs[i].Hash)
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
		if err := answer(ctx, snap, &qs[i], overlays[i], &res.Answers[i]); err != nil {
			return scripthash.Result{}, err
		}
	}
	return res, nil
}

// hashBounds are the pending keys of h: [h‖0…, h+1‖0…).
func hashBounds(h scripthash.Hash) (lo, hi rowKey) {
	copy(lo[:], h[:])
	copy(hi[:], h[:])
	for i := 31; i >= 0; i-- {
		hi[i]++
		if hi[i] != 0 {
			return lo, hi
		}
	}
	for i := range hi { // h is all 0xff: above every key
		hi[i] = 0xff
	}
	return lo, hi
}

// answer merges the snapshot's rows of q.Hash with the pending ones (which
// win) in key order.
func answer(ctx context.Context, snap backends.Snapshot, q *scripthash.Query, over []overlayRow, a *scripthash.Answer) error {
	prefix := append([]byte{Prefix}, q.Hash[:]...)
	rng := backends.PrefixRange(prefix)
	var after rowKey
	if q.After != nil {
		after = makeRowKeyHash(q.Hash, q.After.Height, utxo.Outpoint{Hash: q.After.Txid, Index: q.After.Vout})
		if !q.Summary { // only rows after the cursor matter: seek past it
			rng.Start = append(after.full(), 0)
		}
	}
	it, err := snap.NewIterator(rng)
	if err != nil {
		return fmt.Errorf("shindex: %w", err)
	}
	defer it.Close()
	// emit takes one row (its key without the prefix) in key order; false
	// stops the walk.
	emit := func(k []byte, u scripthash.UTXO) bool {
		if q.Summary {
			a.Count++
			a.Sum += u.Value
		}
		if q.After != nil && bytes.Compare(k, after[:]) <= 0 {
			return true
		}
		if len(a.UTXOs) < q.Limit {
			a.UTXOs = append(a.UTXOs, u)
			return true
		}
		a.More = true
		return q.Summary
	}
	var ok bool
	next := func() { ok = it.Next() }
	next()
	n := 0
	for {
		if n++; n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var k []byte
		fromOverlay := false
		switch {
		case ok && len(over) > 0:
			c := bytes.Compare(it.Key()[1:], over[0].key[:])
			switch {
			case c < 0:
				k = it.Key()
			case c == 0: // the pending state replaces the stored one
				next()
				fromOverlay = true
			default:
				fromOverlay = true
			}
		case ok:
			k = it.Key()
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
			u := scripthash.UTXO{Value: o.p.value, Coinbase: o.p.flags&pendCoinbase != 0,
				Height: binary.BigEndian.Uint32(o.key[32:])}
			copy(u.Outpoint.Hash[:], o.key[36:68])
			u.Outpoint.Index = binary.BigEndian.Uint32(o.key[68:])
			if !emit(o.key[:], u) {
				return nil
			}
			continue
		}
		u, err := decodeRow(k, it.Value())
		if err != nil {
			return err
		}
		if !emit(k[1:], u) { // before Next, which invalidates k
			return nil
		}
		next()
	}
}
