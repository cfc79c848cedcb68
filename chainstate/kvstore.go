package chainstate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"utxod/backends"
	"utxod/internal/diskspace"
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
// record bytes: its slot in a pointer-free Swiss-table map (32-byte key,
// 8-byte packed entry, a control byte; 41 bytes at 100 % load, tables run
// between 7/16 and 7/8 full).
const cacheEntryOverhead = 60

// ErrWrongNetwork reports a datadir created for another network.
var ErrWrongNetwork = errors.New("chainstate: datadir belongs to another network")

// cacheEntry is one cached txid packed in 64 bits: bit 0 dirty (the store
// must be updated at the next flush), bit 1 on disk (the store holds a
// record for the txid as of the last load or flush), bits 2–23 the record
// length (0: no unspent output), bits 24–63 its location in the arena.
// Keeping records out of the map and pointers out of both makes the cache
// invisible to the garbage collector's scan and saves the per-record heap
// object (pointer, slice header, size-class rounding) of a
// map[wire.Hash]*struct{rec []byte} layout.
type cacheEntry uint64

const (
	entryDirty    cacheEntry = 1 << 0
	entryOnDisk   cacheEntry = 1 << 1
	entryFlags               = entryDirty | entryOnDisk
	entryLenShift            = 2
	entryMaxLen              = 1<<22 - 1
	entryLocShift            = 24
)

func (e cacheEntry) len() int          { return int(e>>entryLenShift) & entryMaxLen }
func (e cacheEntry) loc() uint64       { return uint64(e) >> entryLocShift }
func (e cacheEntry) flags() cacheEntry { return e & entryFlags }

func packEntry(loc uint64, n int, flags cacheEntry) cacheEntry {
	return cacheEntry(loc)<<entryLocShift | cacheEntry(n)<<entryLenShift | flags
}

// arena holds the cached records, append-only: a record is never modified
// in place (updates append a new copy and count the old one as dead), so
// slices handed out (coin scripts alias their record) stay valid; compact
// copies the live records into fresh chunks and drops the old ones, which
// the garbage collector frees once nothing aliases them.
type arena struct {
	chunks [][]byte
	cur    int   // index of the chunk being filled; -1 before the first
	used   int64 // bytes consumed in chunks (live + dead + skipped tails)
	dead   int64 // bytes of replaced records
}

const (
	arenaChunk    = 1 << 20 // location = chunk index << 20 | offset
	arenaOffBits  = 20
	arenaBigBytes = arenaChunk / 4 // larger records get a chunk of their own
)

func newArena() arena { return arena{cur: -1} }

// put copies b into the arena and returns its location.
func (a *arena) put(b []byte) uint64 {
	n := len(b)
	if n > arenaBigBytes {
		a.chunks = append(a.chunks, bytes.Clone(b))
		a.used += int64(n)
		return uint64(len(a.chunks)-1) << arenaOffBits
	}
	if a.cur < 0 || len(a.chunks[a.cur])+n > arenaChunk {
		if a.cur >= 0 {
			a.used += int64(arenaChunk - len(a.chunks[a.cur]))
		}
		a.chunks = append(a.chunks, make([]byte, 0, arenaChunk))
		a.cur = len(a.chunks) - 1
	}
	c := a.chunks[a.cur]
	off := len(c)
	a.chunks[a.cur] = append(c, b...)
	a.used += int64(n)
	return uint64(a.cur)<<arenaOffBits | uint64(off)
}

// get returns the record of e (nil when it has none), capacity-limited so
// that an append by the caller cannot overwrite a neighbour.
func (a *arena) get(e cacheEntry) []byte {
	n := e.len()
	if n == 0 {
		return nil
	}
	loc := e.loc()
	off := int(loc & (arenaChunk - 1))
	c := a.chunks[loc>>arenaOffBits]
	return c[off : off+n : off+n]
}

// KVStore is the persistent Store over a backends.KV: a write-back cache of
// per-transaction v5 records with a byte budget; undo records and blocks
// written early (early.go); coins, index entries and deletions flushed in
// one synced batch with the tip.
type KVStore struct {
	// rmu serialises Coin: Chainstate.Coin runs under the chainstate's
	// read lock, so several HTTP lookups can reach it at once, and a miss
	// inserts into the cache (and uses the key buffer). Every other method
	// runs under the chainstate's write lock.
	rmu     sync.Mutex
	kv      backends.KV
	budget  int64
	minFree uint64 // pre-flush free-space margin (SetMinFree)
	cache   map[wire.Hash]cacheEntry
	arena   arena
	scratch [2][]byte
	// undo and blocks: data not yet durable (nil = delete at the next
	// flush); puts are written early by w and forgotten once written.
	undo   map[wire.Hash]pendingData
	blocks map[wire.Hash]pendingData
	held   int64 // bytes of the puts in undo and blocks
	w      *earlyWriter
	tip    wire.Hash
	stats  []byte
	// tipDirty: the tip moved since the last flush (statistics to write).
	tipDirty bool
	genesis  []byte
	closed   bool
	key      [33]byte
	// unflushed holds the index entries of a flush that failed (the
	// chainstate hands each dirty entry over once); the next flush writes
	// them first.
	unflushed []*validate.BlockNode
}

// NewKVStore wraps kv with a coins cache of budget bytes. The caller keeps
// ownership of kv: Close closes the store's cache, not kv.
func NewKVStore(kv backends.KV, budget int64) *KVStore {
	if budget <= 0 {
		budget = 450 << 20
	}
	return &KVStore{kv: kv, budget: budget, cache: make(map[wire.Hash]cacheEntry), arena: newArena(),
		undo: make(map[wire.Hash]pendingData), blocks: make(map[wire.Hash]pendingData),
		w: newEarlyWriter(kv, diskspace.DefaultMinFreeBytes), minFree: diskspace.DefaultMinFreeBytes}
}

// pendingMap returns the pending map of undo records or of raw blocks.
func (s *KVStore) pendingMap(block bool) map[wire.Hash]pendingData {
	if block {
		return s.blocks
	}
	return s.undo
}

// setPending records a put (b non-nil), written early, or a deletion,
// written by the next flush.
func (s *KVStore) setPending(block bool, h wire.Hash, b []byte) {
	m := s.pendingMap(block)
	s.held -= int64(len(m[h].b))
	if b == nil {
		m[h] = pendingData{}
		return
	}
	prefix := byte(prefixUndo)
	if block {
		prefix = prefixBlock
	}
	m[h] = pendingData{b: b, gen: s.w.add(earlyKey{block: block, h: h}, s.keyFor(prefix, h), b)}
	s.held += int64(len(b))
	if s.w.full() {
		s.w.handoff()
	}
	s.forgetWritten()
}

// forgetWritten drops the puts the early writer has made durable (reads of
// them go to the store from now on).
func (s *KVStore) forgetWritten() {
	s.w.collect(func(gen uint64, keys []earlyKey) {
		for _, k := range keys {
			m := s.pendingMap(k.block)
			if p, ok := m[k.h]; ok && p.b != nil && p.gen == gen {
				s.held -= int64(len(p.b))
				delete(m, k.h)
			}
		}
	})
}

// pendingGet returns a pending value: found reports whether h is pending,
// and a nil value a pending deletion.
func (s *KVStore) pendingGet(block bool, h wire.Hash) (b []byte, found bool) {
	p, ok := s.pendingMap(block)[h]
	return p.b, ok
}

// SetMinFree sets the free space every flush leaves on the store's
// filesystem beyond what it writes (default 50 MiB, Core's; 0 turns the
// pre-flush check off). Call it before use.
func (s *KVStore) SetMinFree(bytes uint64) { s.minFree, s.w.minFree = bytes, bytes }

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
func (s *KVStore) load(txid wire.Hash) (cacheEntry, error) {
	if e, ok := s.cache[txid]; ok {
		return e, nil
	}
	v, err := s.kv.Get(s.keyFor(prefixCoins, txid))
	var e cacheEntry
	switch {
	case errors.Is(err, backends.ErrNotFound):
	case err != nil:
		return 0, fmt.Errorf("chainstate: read coins of %s: %w", txid, err)
	case len(v) > entryMaxLen:
		return 0, fmt.Errorf("chainstate: coins of %s: record of %d bytes", txid, len(v))
	case len(v) > 0:
		e = packEntry(s.arena.put(v), len(v), entryOnDisk)
	}
	s.cache[txid] = e
	return e, nil
}

// setRecord replaces txid's cached record (rec empty: no unspent output
// left) and marks it dirty. A txid that never reached the store and has no
// output left is simply forgotten (nothing to write).
func (s *KVStore) setRecord(txid wire.Hash, e cacheEntry, rec []byte) error {
	s.arena.dead += int64(e.len())
	switch {
	case len(rec) == 0 && e&entryOnDisk == 0:
		delete(s.cache, txid)
	case len(rec) == 0:
		s.cache[txid] = packEntry(0, 0, entryOnDisk|entryDirty)
	case len(rec) > entryMaxLen:
		return fmt.Errorf("chainstate: coins of %s: record of %d bytes", txid, len(rec))
	default:
		s.cache[txid] = packEntry(s.arena.put(rec), len(rec), e&entryOnDisk|entryDirty)
	}
	return nil
}

// compactMinDead is the least dead arena bytes worth a compaction (a
// variable for tests).
var compactMinDead int64 = 1 << 20

// maybeCompact copies the live records into fresh chunks when replaced
// records take a quarter of the arena: the garbage stays below a third of
// the live bytes, and each compaction copies at most three live bytes per
// dead one.
func (s *KVStore) maybeCompact() {
	if s.arena.dead < compactMinDead || 4*s.arena.dead < s.arena.used {
		return
	}
	a := newArena()
	for h, e := range s.cache {
		if n := e.len(); n > 0 {
			s.cache[h] = packEntry(a.put(s.arena.get(e)), n, e.flags())
		}
	}
	s.arena = a
}

// Coin implements utxo.View. A raw script aliases the cached record, which
// is never modified in place (updates build a new record).
func (s *KVStore) Coin(op utxo.Outpoint) (utxo.Coin, bool, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	e, err := s.load(op.Hash)
	if err != nil || e.len() == 0 {
		return utxo.Coin{}, false, err
	}
	c, found, err := utxo.RecordGet(s.arena.get(e), op.Index)
	if err != nil {
		return utxo.Coin{}, false, fmt.Errorf("chainstate: coins of %s: %w", op.Hash, err)
	}
	return c, found, nil
}

// LiveOutputs implements Store.
func (s *KVStore) LiveOutputs(txid wire.Hash) (int, error) {
	e, err := s.load(txid)
	if err != nil || e.len() == 0 {
		return 0, err
	}
	return utxo.RecordLen(s.arena.get(e))
}

// sameTxid returns the end of the run of entries of list[i]'s txid.
func sameTxid(list []utxo.Entry, i int) int {
	j := i + 1
	for j < len(list) && list[j].Hash == list[i].Hash {
		j++
	}
	return j
}

// remove deletes the outputs of list.
func (s *KVStore) remove(list []utxo.Entry) error {
	return s.update(list, func(dst, rec []byte, x utxo.Entry) ([]byte, error) {
		if len(rec) == 0 {
			return nil, fmt.Errorf("%w: %s:%d", utxo.ErrCoinNotFound, x.Hash, x.Index)
		}
		out, _, found, err := utxo.RecordRemove(dst, rec, x.Index)
		if err != nil {
			return nil, fmt.Errorf("chainstate: coins of %s: %w", x.Hash, err)
		}
		if !found {
			return nil, fmt.Errorf("%w: %s:%d", utxo.ErrCoinNotFound, x.Hash, x.Index)
		}
		return out, nil
	})
}

// add inserts the outputs of list.
func (s *KVStore) add(list []utxo.Entry) error {
	return s.update(list, func(dst, rec []byte, x utxo.Entry) ([]byte, error) {
		out, err := utxo.RecordAdd(dst, rec, x.Index, x.Coin)
		if err != nil {
			return nil, fmt.Errorf("chainstate: add %s:%d: %w", x.Hash, x.Index, err)
		}
		return out, nil
	})
}

// update applies op to every entry of list. Consecutive entries of one txid
// are applied to scratch copies of its record (op appends the new record to
// dst) and the result is stored once per run.
func (s *KVStore) update(list []utxo.Entry, op func(dst, rec []byte, x utxo.Entry) ([]byte, error)) error {
	for i := 0; i < len(list); {
		j := sameTxid(list, i)
		h := list[i].Hash
		e, err := s.load(h)
		if err != nil {
			return err
		}
		rec := s.arena.get(e)
		for k, x := range list[i:j] {
			out, err := op(s.scratch[k&1][:0], rec, x)
			if err != nil {
				return err
			}
			s.scratch[k&1] = out
			rec = out
		}
		if err := s.setRecord(h, e, rec); err != nil {
			return err
		}
		i = j
	}
	return nil
}

func (s *KVStore) setStats(stats *Stats) error {
	b, err := stats.MarshalBinary()
	if err != nil {
		return err
	}
	s.stats = b
	return nil
}

// Connect implements Store.
func (s *KVStore) Connect(node *validate.BlockNode, d *utxo.Delta) error {
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
	s.setPending(false, node.Hash, encodeUndo(nil, d))
	s.maybeCompact()
	s.tip, s.tipDirty = node.Hash, true
	return nil
}

// Undo implements Store.
func (s *KVStore) Undo(node *validate.BlockNode) (*utxo.Delta, error) {
	b, ok := s.pendingGet(false, node.Hash)
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
func (s *KVStore) Disconnect(node *validate.BlockNode, d *utxo.Delta) error {
	if s.closed {
		return backends.ErrClosed
	}
	if err := s.remove(d.Created); err != nil {
		return err
	}
	if err := s.add(d.Spent); err != nil {
		return err
	}
	s.setPending(false, node.Hash, nil)
	s.maybeCompact()
	s.tip, s.tipDirty = node.Parent.Hash, true
	return nil
}

// PutBlock implements Store.
func (s *KVStore) PutBlock(h wire.Hash, raw []byte) error {
	if s.closed {
		return backends.ErrClosed
	}
	s.setPending(true, h, raw)
	return nil
}

// Block implements Store.
func (s *KVStore) Block(h wire.Hash) ([]byte, error) {
	if b, ok := s.pendingGet(true, h); ok {
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
func (s *KVStore) DeleteBlock(h wire.Hash) error { s.setPending(true, h, nil); return nil }

// SetGenesis implements Store.
func (s *KVStore) SetGenesis(h wire.Hash, stats *Stats) error {
	s.genesis = bytes.Clone(h[:])
	s.tip, s.tipDirty = h, true
	return s.setStats(stats)
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
func (s *KVStore) Flush(index []*validate.BlockNode, stats *Stats) error {
	if s.closed {
		return backends.ErrClosed
	}
	if s.tipDirty && stats == nil {
		return fmt.Errorf("chainstate: flush: the tip moved but no statistics were given")
	}
	if stats != nil && s.tipDirty {
		if stats.BestBlock != s.tip {
			return fmt.Errorf("chainstate: flush: statistics describe %s, the coins %s", stats.BestBlock, s.tip)
		}
		if err := s.setStats(stats); err != nil {
			return err
		}
	}
	if len(s.unflushed) > 0 {
		index = append(s.unflushed, index...)
		s.unflushed = nil
	}
	// Undo records and blocks first (they must be durable before the tip
	// that references them); what the early writer could not write (it
	// stopped at a failure) is still pending and goes into this batch.
	s.w.drain()
	s.forgetWritten()
	// A fresh batch per flush: a large flush's buffer is not kept alive.
	b := backends.NewBatch()
	size, ops := 0, 0
	for _, e := range s.cache {
		if e&entryDirty != 0 {
			size += 33 + e.len()
			ops++
		}
	}
	for _, u := range s.undo {
		size += 33 + len(u.b)
		ops++
	}
	for _, raw := range s.blocks {
		size += 33 + len(raw.b)
		ops++
	}
	size += len(index) * (33 + wire.HeaderSize + 40)
	b.Grow(size+4096, ops+len(index)+8)
	// Dirty coins go into the batch in key order: txids are random, and
	// bbolt applies a batch key by key to its B+tree, so unsorted puts touch
	// leaf pages in random order (docs/benchmarks/storage.md).
	dirty := make([]wire.Hash, 0, ops)
	for txid, e := range s.cache {
		if e&entryDirty != 0 {
			dirty = append(dirty, txid)
		}
	}
	slices.SortFunc(dirty, func(a, b wire.Hash) int { return bytes.Compare(a[:], b[:]) })
	for _, txid := range dirty {
		if e := s.cache[txid]; e.len() == 0 {
			b.Delete(s.keyFor(prefixCoins, txid))
		} else {
			b.Put(s.keyFor(prefixCoins, txid), s.arena.get(e))
		}
	}
	for h, u := range s.undo {
		if u.b == nil {
			b.Delete(hashKey(prefixUndo, h))
		} else {
			b.Put(hashKey(prefixUndo, h), u.b)
		}
	}
	for h, raw := range s.blocks {
		if raw.b == nil {
			b.Delete(hashKey(prefixBlock, h))
		} else {
			b.Put(hashKey(prefixBlock, h), raw.b)
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
	// Core's CheckDiskSpace before FlushStateToDisk: refuse a flush the disk
	// cannot take (stores write a batch at least twice: log and table).
	err := backends.CheckSpace(s.kv, 2*uint64(b.Size()), s.minFree)
	if err == nil {
		err = s.kv.Write(b, backends.Sync)
	}
	if err != nil {
		s.unflushed = index // everything else stays pending in the cache
		return fmt.Errorf("chainstate: flush: %w", err)
	}
	clear(s.undo)
	clear(s.blocks)
	s.held = 0
	s.w.reset()
	s.genesis, s.stats, s.tipDirty = nil, nil, false
	if s.CacheBytes() > s.budget {
		s.cache = make(map[wire.Hash]cacheEntry) // clear would keep the table's memory
		s.arena = newArena()
	} else {
		// Clean entries without outputs (spent, or absent when looked up)
		// are dropped: the store answers for them.
		for txid, e := range s.cache {
			if e.len() == 0 {
				delete(s.cache, txid)
			} else if e&entryDirty != 0 {
				s.cache[txid] = e&^entryDirty | entryOnDisk
			}
		}
		s.maybeCompact()
	}
	return nil
}

// NeedsFlush implements Store.
// Undo records and blocks the early writer could not write count against
// the same budget (normally they are durable within a few batches).
func (s *KVStore) NeedsFlush() bool { return s.CacheBytes() > s.budget || s.held > s.budget }

// CacheBytes implements Store: map slots plus the arena's consumed bytes
// (replaced records included until a compaction).
func (s *KVStore) CacheBytes() int64 {
	return int64(len(s.cache))*cacheEntryOverhead + s.arena.used
}

// Snapshot implements Store: flush, then scan a store snapshot.
func (s *KVStore) Snapshot(index []*validate.BlockNode, stats *Stats) (Scanner, error) {
	if err := s.Flush(index, stats); err != nil {
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
	s.w.close()
	s.cache = make(map[wire.Hash]cacheEntry)
	s.arena = newArena()
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
