// Package spindex is the silent-payments tweak index of the persistent
// store (--index silentpayments, BIP352): for every block connected while
// it is on, one row per eligible transaction,
//
//	'P' ‖ height (uint32 BE) ‖ txid (32, raw)
//	→ tweak (33) ‖ uvarint(largest taproot value) ‖ uvarint(taproot outputs unspent)
//	  ‖ uvarint(n) ‖ n × uvarint(vout of a taproot output)
//
// one block key per indexed height,
//
//	'P' ‖ height (uint32 BE) → block hash (32)
//
// (so a range read returns each block's hash with its rows, and a client
// sees a reorganisation), and the meta key 'P' (one byte: state, tip, the
// lowest indexed height). A block's rows are one key range; the unspent
// count of a row is decremented when one of its taproot outputs is spent in
// any later block (the spent coin carries its height, so its row's key is
// known without a txid lookup) and incremented when a disconnect brings it
// back. Cut-through is decided per transaction: count 0 means every taproot
// output it made is spent.
//
// Everything is written in the store's flush batch with the coins
// (kvstore.Index), so a crash or a reorganisation never leaves the index
// and the coins apart. Connecting needs the block's transactions and the
// scripts its inputs spend, so the index is a kvstore.BlockIndex.
package spindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/RaduBerinde/btreemap"

	"utxod/backends"
	"utxod/silentpayments"
	"utxod/store/kvstore"
	"utxod/utxo"
	"utxod/wire"
)

// Prefix is the first byte of every key of the index.
const Prefix = 'P'

// Name is the index's name on the command line (--index silentpayments).
const Name = "silentpayments"

const (
	rowKeyLen   = 1 + 4 + 32
	blockKeyLen = 1 + 4
)

// rowKey is a row's key without the prefix: height (BE) ‖ txid.
type rowKey [rowKeyLen - 1]byte

func makeRowKey(height uint32, txid wire.Hash) rowKey {
	var k rowKey
	binary.BigEndian.PutUint32(k[:4], height)
	copy(k[4:], txid[:])
	return k
}

func (k *rowKey) height() uint32 { return binary.BigEndian.Uint32(k[:4]) }

func (k *rowKey) full() []byte { return append([]byte{Prefix}, k[:]...) }

func cmpKey(a, b rowKey) int { return bytes.Compare(a[:], b[:]) }

func blockKey(height uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{Prefix}, height)
}

// row is a row's value.
type row struct {
	tweak    [silentpayments.TweakSize]byte
	maxValue int64
	unspent  uint32
	outs     []uint32
}

func encodeRow(dst []byte, r *row) []byte {
	dst = append(dst, r.tweak[:]...)
	dst = binary.AppendUvarint(dst, uint64(r.maxValue))
	dst = binary.AppendUvarint(dst, uint64(r.unspent))
	dst = binary.AppendUvarint(dst, uint64(len(r.outs)))
	for _, o := range r.outs {
		dst = binary.AppendUvarint(dst, uint64(o))
	}
	return dst
}

// ErrCorrupt reports a row or meta key that does not decode, or counts that
// cannot be (an unspent count below zero or above the taproot outputs).
var ErrCorrupt = errors.New("spindex: corrupt index")

func decodeRow(b []byte) (row, error) {
	var r row
	bad := func() (row, error) { return row{}, fmt.Errorf("%w: row value %x", ErrCorrupt, b) }
	if len(b) < silentpayments.TweakSize {
		return bad()
	}
	copy(r.tweak[:], b)
	b = b[silentpayments.TweakSize:]
	var vals [3]uint64
	for i := range vals {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return bad()
		}
		vals[i], b = v, b[n:]
	}
	if vals[0] > uint64(utxo.MaxMoney) || vals[2] > uint64(len(b)) || vals[1] > vals[2] {
		return bad()
	}
	r.maxValue, r.unspent = int64(vals[0]), uint32(vals[1])
	r.outs = make([]uint32, vals[2])
	for i := range r.outs {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > 1<<32-1 {
			return bad()
		}
		r.outs[i], b = uint32(v), b[n:]
	}
	if len(b) != 0 {
		return bad()
	}
	return r, nil
}

func (r *row) public(k rowKey) silentpayments.TweakRow {
	t := silentpayments.TweakRow{Tweak: r.tweak, MaxValue: r.maxValue, Unspent: r.unspent, Outputs: slices.Clone(r.outs)}
	copy(t.Txid[:], k[4:])
	return t
}

// pendRow is a row's state since the last flush.
type pendRow struct {
	r     row
	flags uint8
}

// pendBlock is a block key's state since the last flush.
type pendBlock struct {
	hash  wire.Hash
	flags uint8
}

const (
	pendDeleted = 1 << iota // the key is gone (a delete to write)
	pendFresh               // the key was absent at the last flush: deleting it writes nothing
)

// pendRowBytes estimates one pending row's memory.
const pendRowBytes = 2 * (rowKeyLen + 64)

// Tip is the state of the index: the block the coin set ends at, and the
// lowest height it has rows for (From > Height: no block indexed yet).
type Tip struct {
	Hash   wire.Hash
	Height uint32
	From   uint32
}

// Index is the tweak index of a store: a kvstore.BlockIndex (register it
// with AddIndex before the chainstate opens the store) and a
// silentpayments.Index.
type Index struct {
	kv backends.KV
	mu sync.RWMutex
	// rows and blocks hold every key changed since the last flush.
	rows      *btreemap.BTreeMap[rowKey, pendRow]
	blocks    map[uint32]pendBlock
	tip       Tip
	metaDirty bool
	closed    bool
	// Workers computes a block's tweaks on this many goroutines (default
	// GOMAXPROCS); set it before use.
	Workers int
}

var (
	_ kvstore.BlockIndex   = (*Index)(nil)
	_ kvstore.TipIndex     = (*Index)(nil)
	_ kvstore.SizedIndex   = (*Index)(nil)
	_ kvstore.BatchSizer   = (*Index)(nil)
	_ silentpayments.Index = (*Index)(nil)
)

func newIndex(kv backends.KV, tip Tip) *Index {
	return &Index{kv: kv, tip: tip, rows: btreemap.New[rowKey, pendRow](16, cmpKey), blocks: map[uint32]pendBlock{}}
}

// Errors of Open, Create, Build, Drop and Verify.
var (
	// ErrNone: the datadir has no complete index.
	ErrNone = errors.New("spindex: the datadir has no silent-payments index")
	// ErrExists: the datadir already has a complete index.
	ErrExists = errors.New("spindex: the datadir already has a silent-payments index")
	// ErrStale: the index describes another tip than the store's coins.
	ErrStale = errors.New("spindex: the silent-payments index describes another tip than the coins")
	// ErrNotNew: an index can be created with the chainstate only in a
	// datadir without one; an existing datadir builds it (Build).
	ErrNotNew = errors.New("spindex: the datadir already has a chainstate")
	// ErrNeedBlock: Apply was asked to connect a block without it (the
	// store must call ApplyBlock).
	ErrNeedBlock = errors.New("spindex: connecting a block needs the block (kvstore.BlockIndex)")
)

// Create returns the index of a new datadir (one whose store has no tip
// yet, or only genesis), empty at genesis; its meta key is written with the
// first flush.
func Create(kv backends.KV, genesis wire.Hash) (*Index, error) {
	if stats, ok, err := kvstore.ReadState(kv); err != nil {
		return nil, err
	} else if ok && (stats.Height != 0 || stats.BestBlock != genesis) {
		return nil, ErrNotNew
	}
	m, ok, err := ReadMeta(kv)
	if err != nil {
		return nil, err
	}
	if ok && m.State == Complete {
		return nil, ErrExists
	}
	x := newIndex(kv, Tip{Hash: genesis, From: 1})
	x.metaDirty = true
	return x, nil
}

// Open returns the complete index of a datadir: ErrNone without one,
// ErrStale when it does not describe the store's tip.
func Open(kv backends.KV) (*Index, error) {
	m, ok, err := ReadMeta(kv)
	if err != nil {
		return nil, err
	}
	if !ok || m.State != Complete {
		return nil, ErrNone
	}
	stats, ok, err := kvstore.ReadState(kv)
	if err != nil {
		return nil, err
	}
	if !ok || stats.BestBlock != m.Tip.Hash || stats.Height != m.Tip.Height {
		return nil, fmt.Errorf("%w: index at %d %s, coins at %d %s (utxod index drop, then utxod index build --index %s)",
			ErrStale, m.Tip.Height, m.Tip.Hash, stats.Height, stats.BestBlock, Name)
	}
	return newIndex(kv, m.Tip), nil
}

// Prefix implements kvstore.Index.
func (x *Index) Prefix() byte { return Prefix }

// Apply implements kvstore.Index for disconnects; a connect goes through
// ApplyBlock (ErrNeedBlock here).
func (x *Index) Apply(_ wire.Hash, d *utxo.Delta, connect bool) error {
	if connect {
		return ErrNeedBlock
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	h := x.tip.Height
	if h == 0 {
		return fmt.Errorf("%w: disconnect below genesis", ErrCorrupt)
	}
	if err := x.deleteHeight(h); err != nil {
		return err
	}
	// The coins the block spent come back: their rows count them again.
	for i := range d.Spent {
		if e := &d.Spent[i]; isP2TR(e.Script) {
			if err := x.adjust(e.Height, e.Hash, +1); err != nil {
				return err
			}
		}
	}
	x.tip.Height = h - 1
	x.tip.From = min(x.tip.From, h)
	x.metaDirty = true
	return nil
}

// deleteHeight removes the block key and every row of height h, pending or
// flushed.
func (x *Index) deleteHeight(h uint32) error {
	lo, hi := makeRowKey(h, wire.Hash{}), makeRowKey(h+1, wire.Hash{})
	var drop []rowKey
	for k, p := range x.rows.Ascend(btreemap.GE(lo), btreemap.LT(hi)) {
		if p.flags&pendDeleted == 0 {
			drop = append(drop, k)
		}
	}
	it, err := x.kv.NewIterator(backends.PrefixRange(blockKey(h)))
	if err != nil {
		return fmt.Errorf("spindex: %w", err)
	}
	for it.Next() {
		if len(it.Key()) != rowKeyLen {
			continue
		}
		k := rowKey(it.Key()[1:])
		if _, _, ok := x.rows.Get(k); !ok {
			drop = append(drop, k)
		}
	}
	err = errors.Join(it.Err(), it.Close())
	if err != nil {
		return fmt.Errorf("spindex: %w", err)
	}
	for _, k := range drop {
		x.del(k)
	}
	if p, ok := x.blocks[h]; ok && p.flags&pendFresh != 0 {
		delete(x.blocks, h)
	} else {
		x.blocks[h] = pendBlock{flags: pendDeleted}
	}
	return nil
}

func (x *Index) del(k rowKey) {
	if _, old, ok := x.rows.Delete(k); ok && old.flags&pendFresh != 0 {
		return
	}
	x.rows.ReplaceOrInsert(k, pendRow{flags: pendDeleted})
}

// adjust adds delta to the unspent count of the row of txid at height, if
// the index has one (an ineligible transaction, or one below From, has
// none).
func (x *Index) adjust(height uint32, txid wire.Hash, delta int) error {
	k := makeRowKey(height, txid)
	_, p, ok := x.rows.Get(k)
	if ok && p.flags&pendDeleted != 0 {
		return nil
	}
	if !ok {
		v, err := x.kv.Get(k.full())
		if errors.Is(err, backends.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("spindex: %w", err)
		}
		r, err := decodeRow(v)
		if err != nil {
			return err
		}
		p = pendRow{r: r}
	}
	n := int64(p.r.unspent) + int64(delta)
	if n < 0 || n > int64(len(p.r.outs)) {
		return fmt.Errorf("%w: %s at height %d: %d of %d taproot outputs unspent", ErrCorrupt, txid, height, n, len(p.r.outs))
	}
	p.r.unspent = uint32(n)
	x.rows.ReplaceOrInsert(k, p)
	return nil
}

// ApplyBlock implements kvstore.BlockIndex: b, at height, connected with
// delta d.
func (x *Index) ApplyBlock(b *wire.Block, height int32, d *utxo.Delta) error {
	x.mu.RLock()
	h := x.tip.Height + 1
	workers := x.Workers
	x.mu.RUnlock()
	if height >= 0 && uint32(height) != h {
		return fmt.Errorf("spindex: block %s at height %d connected on an index at height %d", b.Hash, height, h-1)
	}
	rows, err := BlockRows(b, d, workers)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for i := range rows {
		x.put(makeRowKey(h, rows[i].Txid), &rows[i])
	}
	for _, list := range [][]utxo.Entry{d.Spent, d.Overwritten} {
		for i := range list {
			if e := &list[i]; isP2TR(e.Script) {
				if err := x.adjust(e.Height, e.Hash, -1); err != nil {
					return err
				}
			}
		}
	}
	p := pendBlock{hash: b.Hash, flags: pendFresh}
	if old, ok := x.blocks[h]; ok && old.flags&pendFresh == 0 {
		p.flags = 0
	}
	x.blocks[h] = p
	x.tip.Height, x.tip.Hash = h, b.Hash
	x.metaDirty = true
	return nil
}

func (x *Index) put(k rowKey, t *silentpayments.TweakRow) {
	p := pendRow{r: row{tweak: t.Tweak, maxValue: t.MaxValue, unspent: t.Unspent, outs: t.Outputs}, flags: pendFresh}
	if _, old, replaced := x.rows.ReplaceOrInsert(k, p); replaced && old.flags&pendFresh == 0 {
		p.flags = 0
		x.rows.ReplaceOrInsert(k, p)
	}
}

// SetTip implements kvstore.TipIndex.
func (x *Index) SetTip(tip wire.Hash) {
	x.mu.Lock()
	x.tip.Hash = tip
	x.mu.Unlock()
}

// AppendBatch implements kvstore.Index: the pending rows and block keys in
// key order, then the meta key with the tip.
func (x *Index) AppendBatch(b *backends.Batch) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	heights := make([]uint32, 0, len(x.blocks))
	for h := range x.blocks {
		heights = append(heights, h)
	}
	slices.Sort(heights)
	for _, h := range heights {
		p := x.blocks[h]
		if p.flags&pendDeleted != 0 {
			b.Delete(blockKey(h))
		} else {
			b.Put(blockKey(h), p.hash[:])
		}
	}
	key := make([]byte, rowKeyLen)
	key[0] = Prefix
	var val []byte
	for k, p := range x.rows.Ascend(btreemap.Min[rowKey](), btreemap.Max[rowKey]()) {
		copy(key[1:], k[:])
		if p.flags&pendDeleted != 0 {
			b.Delete(key)
			continue
		}
		val = encodeRow(val[:0], &p.r)
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
	x.rows.Clear(true)
	clear(x.blocks)
	x.metaDirty = false
	x.mu.Unlock()
}

// BatchSize implements kvstore.BatchSizer: a row of a tweak and three
// uvarints (its outputs' numbers vary, so the bytes are a guess), a block
// key with its hash, and the meta key.
func (x *Index) BatchSize() (bytes, ops int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	rows, blocks := x.rows.Len(), len(x.blocks)
	return rows*(rowKeyLen+silentpayments.TweakSize+3*binary.MaxVarintLen32) + blocks*(blockKeyLen+32) + 64,
		rows + blocks + 1
}

// PendingBytes implements kvstore.SizedIndex.
func (x *Index) PendingBytes() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return int64(x.rows.Len())*pendRowBytes + int64(len(x.blocks))*64
}

// State is the state the index describes (the last applied block).
func (x *Index) State() Tip {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.tip
}

// Tip implements silentpayments.Index.
func (x *Index) Tip() silentpayments.IndexTip {
	return publicTip(x.State())
}

func publicTip(t Tip) silentpayments.IndexTip {
	return silentpayments.IndexTip{Height: int32(t.Height), Hash: t.Hash, From: int32(t.From)}
}

// Close ends lookups (they return backends.ErrClosed); the store drops the
// pending changes with its own.
func (x *Index) Close() {
	x.mu.Lock()
	x.closed = true
	x.mu.Unlock()
}

// MaxBlocks is the most blocks one Blocks call returns.
const MaxBlocks = 1000

// Blocks implements silentpayments.Index: the pending changes copied under
// the read lock are merged over a store snapshot taken under it, so the
// answer is the state of the last applied block.
func (x *Index) Blocks(ctx context.Context, from int32, count int) (silentpayments.IndexTip, []silentpayments.BlockTweaks, error) {
	if count < 0 || from < 0 {
		return silentpayments.IndexTip{}, nil, fmt.Errorf("spindex: bad range %d+%d", from, count)
	}
	count = min(count, MaxBlocks)
	x.mu.RLock()
	if x.closed {
		x.mu.RUnlock()
		return silentpayments.IndexTip{}, nil, fmt.Errorf("spindex: %w", backends.ErrClosed)
	}
	tip := x.tip
	lo := max(uint32(from), tip.From)
	hi := min(uint64(from)+uint64(count), uint64(tip.Height)+1) // exclusive
	if count == 0 || uint64(lo) >= hi {
		x.mu.RUnlock()
		return publicTip(tip), nil, nil
	}
	over := map[rowKey]pendRow{}
	for k, p := range x.rows.Ascend(btreemap.GE(makeRowKey(lo, wire.Hash{})), btreemap.LT(makeRowKey(uint32(hi), wire.Hash{}))) {
		over[k] = p
	}
	overBlocks := map[uint32]pendBlock{}
	for h := uint64(lo); h < hi; h++ {
		if p, ok := x.blocks[uint32(h)]; ok {
			overBlocks[uint32(h)] = p
		}
	}
	snap, err := x.kv.NewSnapshot()
	x.mu.RUnlock()
	if err != nil {
		return silentpayments.IndexTip{}, nil, fmt.Errorf("spindex: %w", err)
	}
	defer snap.Close()
	out := make([]silentpayments.BlockTweaks, 0, hi-uint64(lo))
	for h := uint64(lo); h < hi; h++ {
		out = append(out, silentpayments.BlockTweaks{Height: int32(h)})
	}
	have := make([]bool, len(out))
	for h, p := range overBlocks {
		if p.flags&pendDeleted == 0 {
			out[h-lo].Hash, have[h-lo] = p.hash, true
		}
	}
	it, err := snap.NewIterator(backends.Range{Prefix: []byte{Prefix}, Start: blockKey(lo), End: blockKey(uint32(hi))})
	if err != nil {
		return silentpayments.IndexTip{}, nil, fmt.Errorf("spindex: %w", err)
	}
	defer it.Close()
	n := 0
	for it.Next() {
		if n++; n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return silentpayments.IndexTip{}, nil, err
			}
		}
		key := it.Key()
		switch len(key) {
		case blockKeyLen:
			h := binary.BigEndian.Uint32(key[1:])
			if _, ok := overBlocks[h]; ok {
				continue
			}
			if len(it.Value()) != 32 {
				return silentpayments.IndexTip{}, nil, fmt.Errorf("%w: block key %x = %x", ErrCorrupt, key, it.Value())
			}
			copy(out[h-lo].Hash[:], it.Value())
			have[h-lo] = true
		case rowKeyLen:
			k := rowKey(key[1:])
			if _, ok := over[k]; ok {
				continue
			}
			r, err := decodeRow(it.Value())
			if err != nil {
				return silentpayments.IndexTip{}, nil, err
			}
			b := &out[k.height()-lo]
			b.Rows = append(b.Rows, r.public(k))
		default:
			return silentpayments.IndexTip{}, nil, fmt.Errorf("%w: key %x", ErrCorrupt, key)
		}
	}
	if err := it.Err(); err != nil {
		return silentpayments.IndexTip{}, nil, fmt.Errorf("spindex: %w", err)
	}
	for k, p := range over {
		if p.flags&pendDeleted == 0 {
			b := &out[k.height()-lo]
			b.Rows = append(b.Rows, p.r.public(k))
		}
	}
	for i := range out {
		if !have[i] {
			return silentpayments.IndexTip{}, nil, fmt.Errorf("%w: no block key at height %d", ErrCorrupt, out[i].Height)
		}
		if len(over) > 0 {
			slices.SortFunc(out[i].Rows, func(a, b silentpayments.TweakRow) int { return bytes.Compare(a.Txid[:], b.Txid[:]) })
		}
	}
	return publicTip(tip), out, nil
}

func isP2TR(spk []byte) bool { return len(spk) == 34 && spk[0] == 0x51 && spk[1] == 0x20 }

// BlockRows computes the rows of block b connected with delta d (or its
// undo record: only the outpoints of d.Created are read): for each eligible
// transaction its tweak, from the scripts its inputs spend (d.Spent, in
// input order, for coins older than b; b's own outputs for the others),
// its taproot outputs, and how many of them the block leaves unspent (its
// d.Created outpoints). Rows come in block order; the tweaks are computed
// on up to workers goroutines (< 1: GOMAXPROCS).
func BlockRows(b *wire.Block, d *utxo.Delta, workers int) ([]silentpayments.TweakRow, error) {
	type job struct {
		tx      int
		scripts [][]byte
	}
	var jobs []job
	next := 0
	var inBlock map[wire.Hash]int
	for i := 1; i < len(b.Txs); i++ {
		tx := &b.Txs[i]
		want := silentpayments.HasTaprootOutput(tx)
		var scripts [][]byte
		if want {
			scripts = make([][]byte, len(tx.Inputs))
		}
		for j := range tx.Inputs {
			in := &tx.Inputs[j]
			if next < len(d.Spent) && d.Spent[next].Hash == in.PrevHash && d.Spent[next].Index == in.PrevIndex {
				if want {
					scripts[j] = d.Spent[next].Script
				}
				next++
				continue
			}
			if inBlock == nil {
				inBlock = make(map[wire.Hash]int, len(b.Txs))
				for k := range b.Txs {
					inBlock[b.Txs[k].TxID] = k
				}
			}
			k, ok := inBlock[in.PrevHash]
			if !ok || k >= i || int(in.PrevIndex) >= len(b.Txs[k].Outputs) {
				return nil, fmt.Errorf("spindex: block %s: input %d of %s spends %s:%d, in neither the delta nor the block",
					b.Hash, j, tx.TxID, in.PrevHash, in.PrevIndex)
			}
			if want {
				scripts[j] = b.Txs[k].Outputs[in.PrevIndex].Script
			}
		}
		if want {
			jobs = append(jobs, job{i, scripts})
		}
	}
	if next != len(d.Spent) {
		return nil, fmt.Errorf("spindex: block %s: %d spent coins, %d matched its inputs", b.Hash, len(d.Spent), next)
	}
	type result struct {
		tweak [silentpayments.TweakSize]byte
		ok    bool
		err   error
	}
	res := make([]result, len(jobs))
	do := func(i int) {
		res[i].tweak, res[i].ok, res[i].err = silentpayments.ComputeTweak(&b.Txs[jobs[i].tx], jobs[i].scripts)
	}
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers = min(workers, len(jobs)/16); workers > 1 {
		var wg sync.WaitGroup
		var mu sync.Mutex
		nextJob := 0
		for range workers {
			wg.Go(func() {
				for {
					mu.Lock()
					i := nextJob
					nextJob += 8
					mu.Unlock()
					if i >= len(jobs) {
						return
					}
					for j := i; j < min(i+8, len(jobs)); j++ {
						do(j)
					}
				}
			})
		}
		wg.Wait()
	} else {
		for i := range jobs {
			do(i)
		}
	}
	var rows []silentpayments.TweakRow
	byTxid := map[wire.Hash]int{}
	for i, j := range jobs {
		if res[i].err != nil {
			return nil, fmt.Errorf("spindex: block %s: %w", b.Hash, res[i].err)
		}
		if !res[i].ok {
			continue
		}
		tx := &b.Txs[j.tx]
		r := silentpayments.TweakRow{Txid: tx.TxID, Tweak: res[i].tweak}
		for v := range tx.Outputs {
			if o := &tx.Outputs[v]; isP2TR(o.Script) {
				r.Outputs = append(r.Outputs, uint32(v))
				r.MaxValue = max(r.MaxValue, o.Value)
			}
		}
		byTxid[tx.TxID] = len(rows)
		rows = append(rows, r)
	}
	// The taproot outputs the block leaves unspent: its created outpoints.
	for i := range d.Created {
		e := &d.Created[i]
		if k, ok := byTxid[e.Hash]; ok {
			if _, found := slices.BinarySearch(rows[k].Outputs, e.Index); found {
				rows[k].Unspent++
			}
		}
	}
	return rows, nil
}
