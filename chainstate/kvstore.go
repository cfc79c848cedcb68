package chainstate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"utxod/backends"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// Key layout of the persistent chainstate (docs/formats.md). One byte of
// prefix, then the hash in internal byte order.
const (
	prefixCoins = 'c' // txid → v5 record of its unspent outputs
	prefixUndo  = 'u' // block hash → undo record
	prefixBlock = 'b' // block hash → raw block (side branches, recent blocks)
	prefixIndex = 'i' // block hash → index entry
	prefixMeta  = 'm'
)

var (
	keyTip     = []byte("mtip")
	keyStats   = []byte("mstats")
	keyGenesis = []byte("mgenesis")
	keySchema  = []byte("mschema")
)

// schemaVersion is the persistent layout version (v5 coin records).
const schemaVersion = 5

// cacheEntryOverhead estimates the memory one cached txid costs besides its
// record bytes: map slot (32-byte key, pointer), the entry struct and slice
// header, and allocator rounding.
const cacheEntryOverhead = 112

// ErrWrongNetwork reports a datadir created for another network.
var ErrWrongNetwork = errors.New("chainstate: datadir belongs to another network")

type cachedRecord struct {
	rec   []byte // v5 record; nil when the txid has no unspent output
	dirty bool
}

// KVStore is the persistent Store over a backends.KV: a write-back cache of
// per-transaction v5 records with a byte budget, and pending undo, block
// and index writes, all flushed in one synced batch with the tip.
type KVStore struct {
	kv         backends.KV
	budget     int64
	cache      map[wire.Hash]*cachedRecord
	cacheBytes int64
	undo       map[wire.Hash][]byte // pending; nil value = delete
	blocks     map[wire.Hash][]byte // pending; nil value = delete
	tip        wire.Hash
	stats      []byte
	genesis    []byte
	closed     bool
	key        [33]byte
}

// NewKVStore wraps kv with a coins cache of budget bytes. The caller keeps
// ownership of kv: Close closes the store's cache, not kv.
func NewKVStore(kv backends.KV, budget int64) *KVStore {
	if budget <= 0 {
		budget = 450 << 20
	}
	return &KVStore{kv: kv, budget: budget, cache: make(map[wire.Hash]*cachedRecord),
		undo: make(map[wire.Hash][]byte), blocks: make(map[wire.Hash][]byte)}
}

func (s *KVStore) keyFor(prefix byte, h wire.Hash) []byte {
	s.key[0] = prefix
	copy(s.key[1:], h[:])
	return s.key[:]
}

func hashKey(prefix byte, h wire.Hash) []byte {
	k := make([]byte, 33)
	k[0] = prefix
	copy(k[1:], h[:])
	return k
}

// load returns the cache entry of txid, reading it from the store on a miss.
func (s *KVStore) load(txid wire.Hash) (*cachedRecord, error) {
	if e, ok := s.cache[txid]; ok {
		return e, nil
	}
	v, err := s.kv.Get(s.keyFor(prefixCoins, txid))
	switch {
	case errors.Is(err, backends.ErrNotFound):
		v = nil
	case err != nil:
		return nil, fmt.Errorf("chainstate: read coins of %s: %w", txid, err)
	}
	e := &cachedRecord{rec: v}
	s.cache[txid] = e
	s.cacheBytes += cacheEntryOverhead + int64(cap(v))
	return e, nil
}

func (s *KVStore) setRecord(e *cachedRecord, rec []byte) {
	s.cacheBytes += int64(cap(rec)) - int64(cap(e.rec))
	e.rec = rec
	e.dirty = true
}

// Coin implements utxo.View. A raw script aliases the cached record, which
// is never modified in place (updates build a new record).
func (s *KVStore) Coin(op utxo.Outpoint) (utxo.Coin, bool, error) {
	e, err := s.load(op.Hash)
	if err != nil || e.rec == nil {
		return utxo.Coin{}, false, err
	}
	c, found, err := utxo.RecordGet(e.rec, op.Index)
	if err != nil {
		return utxo.Coin{}, false, fmt.Errorf("chainstate: coins of %s: %w", op.Hash, err)
	}
	return c, found, nil
}

// LiveOutputs implements Store.
func (s *KVStore) LiveOutputs(txid wire.Hash) (int, error) {
	e, err := s.load(txid)
	if err != nil || e.rec == nil {
		return 0, err
	}
	return utxo.RecordLen(e.rec)
}

func (s *KVStore) remove(list []utxo.Entry) error {
	for _, x := range list {
		e, err := s.load(x.Hash)
		if err != nil {
			return err
		}
		if e.rec == nil {
			return fmt.Errorf("%w: %s:%d", utxo.ErrCoinNotFound, x.Hash, x.Index)
		}
		rec, _, found, err := utxo.RecordRemove(nil, e.rec, x.Index)
		if err != nil {
			return fmt.Errorf("chainstate: coins of %s: %w", x.Hash, err)
		}
		if !found {
			return fmt.Errorf("%w: %s:%d", utxo.ErrCoinNotFound, x.Hash, x.Index)
		}
		if len(rec) == 0 {
			rec = nil
		}
		s.setRecord(e, rec)
	}
	return nil
}

func (s *KVStore) add(list []utxo.Entry) error {
	for _, x := range list {
		e, err := s.load(x.Hash)
		if err != nil {
			return err
		}
		rec, err := utxo.RecordAdd(nil, e.rec, x.Index, x.Coin)
		if err != nil {
			return fmt.Errorf("chainstate: add %s:%d: %w", x.Hash, x.Index, err)
		}
		s.setRecord(e, rec)
	}
	return nil
}

func (s *KVStore) setTip(h wire.Hash, stats *Stats) error {
	b, err := stats.MarshalBinary()
	if err != nil {
		return err
	}
	s.tip, s.stats = h, b
	return nil
}

// Connect implements Store.
func (s *KVStore) Connect(node *validate.BlockNode, d *utxo.Delta, stats *Stats) error {
	if s.closed {
		return backends.ErrClosed
	}
	if err := s.remove(d.Spent); err != nil {
		return err
	}
	if err := s.remove(d.Overwritten); err != nil {
		return err
	}
	if err := s.add(d.Created); err != nil {
		return err
	}
	s.undo[node.Hash] = encodeUndo(nil, d)
	return s.setTip(node.Hash, stats)
}

// Undo implements Store.
func (s *KVStore) Undo(node *validate.BlockNode) (*utxo.Delta, error) {
	b, ok := s.undo[node.Hash]
	if !ok {
		v, err := s.kv.Get(s.keyFor(prefixUndo, node.Hash))
		if errors.Is(err, backends.ErrNotFound) {
			return nil, ErrNoUndo
		}
		if err != nil {
			return nil, err
		}
		b = v
	}
	if b == nil {
		return nil, ErrNoUndo
	}
	return decodeUndo(b)
}

// Disconnect implements Store.
func (s *KVStore) Disconnect(node *validate.BlockNode, d *utxo.Delta, stats *Stats) error {
	if s.closed {
		return backends.ErrClosed
	}
	if err := s.remove(d.Created); err != nil {
		return err
	}
	if err := s.add(d.Spent); err != nil {
		return err
	}
	s.undo[node.Hash] = nil
	return s.setTip(node.Parent.Hash, stats)
}

// PutBlock implements Store.
func (s *KVStore) PutBlock(h wire.Hash, raw []byte) error { s.blocks[h] = raw; return nil }

// Block implements Store.
func (s *KVStore) Block(h wire.Hash) ([]byte, error) {
	if b, ok := s.blocks[h]; ok {
		if b == nil {
			return nil, ErrNoBlock
		}
		return b, nil
	}
	v, err := s.kv.Get(s.keyFor(prefixBlock, h))
	if errors.Is(err, backends.ErrNotFound) {
		return nil, ErrNoBlock
	}
	return v, err
}

// DeleteBlock implements Store.
func (s *KVStore) DeleteBlock(h wire.Hash) error { s.blocks[h] = nil; return nil }

// SetGenesis implements Store.
func (s *KVStore) SetGenesis(h wire.Hash, stats *Stats) error {
	s.genesis = bytes.Clone(h[:])
	return s.setTip(h, stats)
}

// Load implements Store.
func (s *KVStore) Load() (*Persisted, error) {
	tip, err := s.kv.Get(keyTip)
	if errors.Is(err, backends.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p := &Persisted{}
	copy(p.Tip[:], tip)
	schema, err := s.kv.Get(keySchema)
	if err != nil {
		return nil, fmt.Errorf("chainstate: schema version: %w", err)
	}
	if len(schema) != 4 || binary.LittleEndian.Uint32(schema) != schemaVersion {
		return nil, fmt.Errorf("chainstate: datadir has schema %x, this build reads %d", schema, schemaVersion)
	}
	g, err := s.kv.Get(keyGenesis)
	if err != nil {
		return nil, fmt.Errorf("chainstate: genesis: %w", err)
	}
	copy(p.Genesis[:], g)
	st, err := s.kv.Get(keyStats)
	if err != nil {
		return nil, fmt.Errorf("chainstate: stats: %w", err)
	}
	if err := p.Stats.UnmarshalBinary(st); err != nil {
		return nil, err
	}
	it, err := s.kv.NewIterator(backends.PrefixRange([]byte{prefixIndex}))
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for it.Next() {
		v := it.Value()
		if len(v) < wire.HeaderSize+4 {
			return nil, fmt.Errorf("chainstate: corrupt index entry %x", it.Key())
		}
		h, err := wire.ParseHeader(v)
		if err != nil {
			return nil, err
		}
		p.Index = append(p.Index, validate.IndexEntry{
			Header:       h,
			Status:       validate.BlockStatus(binary.LittleEndian.Uint32(v[wire.HeaderSize:])),
			RejectReason: string(v[wire.HeaderSize+4:]),
		})
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	s.tip = p.Tip
	return p, nil
}

// Flush implements Store: one synced batch with every pending change.
func (s *KVStore) Flush(index []*validate.BlockNode) error {
	if s.closed {
		return backends.ErrClosed
	}
	// A fresh batch per flush: a large flush's buffer is not kept alive.
	b := backends.NewBatch()
	size, ops := 0, 0
	for _, e := range s.cache {
		if e.dirty {
			size += 33 + len(e.rec)
			ops++
		}
	}
	for _, u := range s.undo {
		size += 33 + len(u)
		ops++
	}
	for _, raw := range s.blocks {
		size += 33 + len(raw)
		ops++
	}
	size += len(index) * (33 + wire.HeaderSize + 40)
	b.Grow(size+4096, ops+len(index)+8)
	for txid, e := range s.cache {
		if !e.dirty {
			continue
		}
		if e.rec == nil {
			b.Delete(hashKey(prefixCoins, txid))
		} else {
			b.Put(hashKey(prefixCoins, txid), e.rec)
		}
	}
	for h, u := range s.undo {
		if u == nil {
			b.Delete(hashKey(prefixUndo, h))
		} else {
			b.Put(hashKey(prefixUndo, h), u)
		}
	}
	for h, raw := range s.blocks {
		if raw == nil {
			b.Delete(hashKey(prefixBlock, h))
		} else {
			b.Put(hashKey(prefixBlock, h), raw)
		}
	}
	for _, n := range index {
		b.Put(hashKey(prefixIndex, n.Hash), encodeIndexEntry(nil, &n.Header, uint32(n.Status), n.RejectReason))
	}
	if s.genesis != nil {
		b.Put(keyGenesis, s.genesis)
		b.Put(keySchema, binary.LittleEndian.AppendUint32(nil, schemaVersion))
	}
	if s.stats != nil {
		b.Put(keyStats, s.stats)
		b.Put(keyTip, bytes.Clone(s.tip[:]))
	}
	if b.Len() == 0 {
		return nil // nothing changed since the last flush
	}
	if err := s.kv.Write(b, backends.Sync); err != nil {
		return fmt.Errorf("chainstate: flush: %w", err)
	}
	clear(s.undo)
	clear(s.blocks)
	s.genesis, s.stats = nil, nil
	if s.cacheBytes > s.budget {
		clear(s.cache)
		s.cacheBytes = 0
	} else {
		for _, e := range s.cache {
			e.dirty = false
		}
	}
	return nil
}

// NeedsFlush implements Store.
func (s *KVStore) NeedsFlush() bool { return s.cacheBytes > s.budget }

// CacheBytes implements Store.
func (s *KVStore) CacheBytes() int64 { return s.cacheBytes }

// Snapshot implements Store: flush, then scan a store snapshot.
func (s *KVStore) Snapshot(index []*validate.BlockNode) (Scanner, error) {
	if err := s.Flush(index); err != nil {
		return nil, err
	}
	snap, err := s.kv.NewSnapshot()
	if err != nil {
		return nil, err
	}
	return &kvScanner{snap: snap}, nil
}

// Close implements Store. Unflushed changes are dropped (the store reopens
// at the last flushed tip); callers flush first for a clean shutdown.
func (s *KVStore) Close() error {
	s.closed = true
	clear(s.cache)
	return nil
}

type kvScanner struct{ snap backends.Snapshot }

func (k *kvScanner) Scan(fn func(utxo.Entry) error) error {
	it, err := k.snap.NewIterator(backends.PrefixRange([]byte{prefixCoins}))
	if err != nil {
		return err
	}
	defer it.Close()
	var outs []utxo.IndexedCoin
	for it.Next() {
		key := it.Key()
		if len(key) != 33 {
			return fmt.Errorf("chainstate: bad coins key %x", key)
		}
		var txid wire.Hash
		copy(txid[:], key[1:])
		outs, err = utxo.DecodeRecord(it.Value(), outs[:0])
		if err != nil {
			return fmt.Errorf("chainstate: coins of %s: %w", txid, err)
		}
		// Records keep outputs in numeric vout order, which is Core's
		// hash_serialized_3 order within a txid.
		for _, o := range outs {
			if err := fn(utxo.Entry{Outpoint: utxo.Outpoint{Hash: txid, Index: o.Index}, Coin: o.Coin}); err != nil {
				return err
			}
		}
	}
	return it.Err()
}

func (k *kvScanner) Close() error { return k.snap.Close() }
