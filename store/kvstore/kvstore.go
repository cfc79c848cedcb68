// Package kvstore is the persistent store.Store over any backends.KV: the
// on-disk schema (schema.go, docs/formats.md), a write-back coins cache with
// a byte budget (cache.go), undo records and raw blocks written ahead of the
// flush by a background writer (pending.go, early.go, undo.go), and the
// flush: one synced batch of coins, index entries, deletions, tip and
// statistics (flush.go), which secondary indexes join (index.go).
package kvstore

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"utxod/backends"
	"utxod/store"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// Store is the persistent store.Store over a backends.KV.
type Store struct {
	// rmu serialises the cache's lookups: they run under the chainstate's
	// read lock, so several HTTP lookups can reach them at once, and a miss
	// inserts into the cache. The store's read of a miss runs without it
	// (fill). Every other method except Block runs under the
	// chainstate's write lock.
	rmu     sync.Mutex
	kv      backends.KV
	budget  int64
	log     *slog.Logger
	minFree uint64 // pre-flush free-space margin (Options.MinFreeBytes)
	coins   coinCache
	// undo and blocks: data not yet durable (nil = delete at the next
	// flush); puts are written early by w and forgotten once written.
	undo   map[wire.Hash]pendingData
	blocks map[wire.Hash]pendingData
	held   int64 // bytes of the puts in undo and blocks
	// bf, when set, holds new raw blocks (Options.BlocksDir); locs are their
	// locations (nil: delete) for the next flush, which syncs bf first.
	// Like the pending maps, locs changes only under the chainstate's
	// write lock and is read under its read lock.
	bf   *blockFiles
	locs map[wire.Hash][]byte
	// uf, when set, holds new undo records (Options.UndoDir); undoLocs are
	// their locations for the next flush, as locs for blocks.
	uf       *blockFiles
	undoLocs map[wire.Hash][]byte
	w        *earlyWriter
	key      [33]byte // undo and block keys handed to w (which copies them)
	tip      wire.Hash
	stats    []byte
	// tipDirty: the tip moved since the last flush (statistics to write).
	tipDirty bool
	genesis  []byte
	closed   bool
	// index holds the block-index entries given since the last successful
	// flush, oldest first (a later entry of a block supersedes an earlier
	// one in the batch).
	index   []validate.IndexEntry
	indexes []Index
	// noted is the block the next Connect applies (NoteBlock).
	noted notedBlock
}

var (
	_ store.Store         = (*Store)(nil)
	_ store.SpentReader   = (*Store)(nil)
	_ store.StagedFlusher = (*Store)(nil)
)

// trustCacheMisses lets the coins cache answer misses without reading the
// store while the cache holds every coin record of the store
// (Options.TrustCacheMisses): it reports whether that is so now (the store
// holds no coin record). It stays so until a flush over budget empties the
// cache; then misses read the store again.
func (s *Store) trustCacheMisses() (bool, error) {
	if s.coins.entries.len() > 0 {
		return false, nil
	}
	it, err := s.kv.NewIterator(backends.PrefixRange([]byte{prefixCoins}))
	if err != nil {
		return false, err
	}
	found := it.Next()
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		return false, fmt.Errorf("kvstore: look for coin records: %w", err)
	}
	s.coins.complete = !found
	return !found, nil
}

// Coin implements utxo.View. The script aliases the cached record, which
// is never modified in place (updates build a new record).
func (s *Store) Coin(op utxo.Outpoint) (utxo.Coin, bool, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	rec, err := s.fill(op.Hash)
	if err != nil {
		return utxo.Coin{}, false, err
	}
	c, found := rec.Get(op.Index)
	return c, found, nil
}

// fill returns txid's cached record (the zero Record when it has no unspent
// output), caching it first on a miss. The store is read with rmu released,
// so that lookups' reads overlap: one waiting on the disk or on a first
// touch of a mapped page no longer holds up every other lookup. rmu is held
// on entry and on return. Nothing writes a key while reads run but a
// StagedFlusher's commit (store.Store), and it writes only keys the cache
// holds dirty, so the record read is current when it is installed, unless
// another lookup installed it meanwhile: that copy is kept. The record
// aliases the arena, where a record is never modified in place.
func (s *Store) fill(txid wire.Hash) (utxo.Record, error) {
	c := &s.coins
	e, ok := c.entries.get(&txid)
	if ok || c.complete || c.fresh { // a miss is then authoritative (load)
		return c.arena.Get(e.ref()), nil
	}
	var err error
	if done := c.inFlight(txid); done != nil {
		s.rmu.Unlock()
		<-done
		s.rmu.Lock()
		e, err = c.load(txid) // takes it
	} else {
		// Not coinKey's shared buffer: other lookups use it meanwhile.
		var buf [33]byte
		key := appendHashKey(buf[:0], prefixCoins, txid)
		s.rmu.Unlock()
		var v []byte
		v, err = c.kv.Get(key)
		s.rmu.Lock()
		if e, ok = c.entries.get(&txid); !ok {
			e, err = c.install(txid, v, err)
		} else {
			err = nil
		}
	}
	if err != nil {
		return utxo.Record{}, err
	}
	return c.arena.Get(e.ref()), nil
}

// AnyUnspent implements utxo.TxOutputsView: one cache lookup of txid's
// record for Core's BIP30 check of all its outputs.
func (s *Store) AnyUnspent(txid wire.Hash, n uint32) (bool, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	rec, err := s.fill(txid)
	if err != nil || len(rec.Bytes()) == 0 {
		return false, err
	}
	return rec.FirstIndex() < n, nil
}

// AppendTxCoins implements utxo.TxCoinsView: one cache lookup of txid's
// record; decompressed scripts go to a buffer the next call reuses.
func (s *Store) AppendTxCoins(dst []utxo.IndexedCoin, txid wire.Hash) ([]utxo.IndexedCoin, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	rec, err := s.fill(txid)
	if err != nil {
		return dst, err
	}
	dst, s.coins.txScripts = rec.AppendCoins(dst, s.coins.txScripts[:0])
	return dst, nil
}

// AppendTxCoinsArena implements utxo.ConcurrentTxCoinsView: only the cache
// lookup holds rmu; the record it finds is never modified in place (a
// change appends a new copy), so it is decoded outside the lock.
func (s *Store) AppendTxCoinsArena(dst []utxo.IndexedCoin, arena []byte, txid wire.Hash) ([]utxo.IndexedCoin, []byte, error) {
	s.rmu.Lock()
	rec, err := s.fill(txid)
	s.rmu.Unlock()
	if err != nil {
		return dst, arena, err
	}
	dst, arena = rec.AppendCoins(dst, arena)
	return dst, arena, nil
}

// LiveOutputs implements store.Store.
func (s *Store) LiveOutputs(txid wire.Hash) (int, error) { return s.coins.liveOutputs(txid) }

func (s *Store) setStats(stats *store.Stats) error {
	b, err := stats.MarshalBinary()
	if err != nil {
		return err
	}
	s.stats = b
	return nil
}

// Connect implements store.Store.
func (s *Store) Connect(block wire.Hash, d *utxo.Delta) error {
	if s.closed {
		return backends.ErrClosed
	}
	if err := s.coins.remove(d.Spent); err != nil {
		return err
	}
	if err := s.coins.remove(d.Overwritten); err != nil {
		return err
	}
	s.coins.fresh = d.Fresh
	err := s.coins.add(d.Created)
	s.coins.fresh = false
	if err != nil {
		return err
	}
	if err := s.applyIndexes(block, block, d, true); err != nil {
		return err
	}
	if err := s.putUndo(block, d); err != nil {
		return err
	}
	s.coins.maybeCompact()
	s.tip, s.tipDirty = block, true
	return nil
}

// ConnectCounting implements store.TxCounter: Connect, returning how many
// txids gained (positive) or lost their last unspent output, which the
// coin records tell as they are updated.
func (s *Store) ConnectCounting(block wire.Hash, d *utxo.Delta) (int64, error) {
	s.coins.txs = 0
	if err := s.Connect(block, d); err != nil {
		return 0, err
	}
	return s.coins.txs, nil
}

// Disconnect implements store.Store.
func (s *Store) Disconnect(block, parent wire.Hash, d *utxo.Delta) error {
	if s.closed {
		return backends.ErrClosed
	}
	if err := s.coins.remove(d.Created); err != nil {
		return err
	}
	if err := s.coins.add(d.Spent); err != nil {
		return err
	}
	if err := s.applyIndexes(block, parent, d, false); err != nil {
		return err
	}
	if err := s.deleteUndo(block); err != nil {
		return err
	}
	s.coins.maybeCompact()
	s.tip, s.tipDirty = parent, true
	return nil
}

// SetGenesis implements store.Store.
func (s *Store) SetGenesis(h wire.Hash, stats *store.Stats) error {
	s.genesis = bytes.Clone(h[:])
	s.tip, s.tipDirty = h, true
	return s.setStats(stats)
}

// NeedsFlush implements store.Store. Undo records and blocks the early
// writer could not write count against the same budget (normally they are
// durable within a few batches), and so do the indexes' pending changes;
// on a store with a bound on a batch's keys (backends.BatchBounder), so
// does the number of keys the flush would write.
func (s *Store) NeedsFlush() bool {
	if s.CacheBytes()+s.indexBytes() > s.budget || s.held > s.budget {
		return true
	}
	bb, ok := s.kv.(backends.BatchBounder)
	if !ok {
		return false
	}
	limit := bb.MaxBatchKeys()
	if limit <= 0 {
		return false
	}
	_, ops := s.batchSize(0, s.coins.dirtyN)
	return ops > limit
}

// CacheBytes implements store.Store: the coins cache's estimated size.
func (s *Store) CacheBytes() int64 { return s.coins.bytes() }

// Snapshot implements store.Store: flush, then scan a store snapshot.
func (s *Store) Snapshot(index []validate.IndexEntry, stats *store.Stats) (store.Scanner, error) {
	if err := s.Flush(index, stats); err != nil {
		return nil, err
	}
	snap, err := s.kv.NewSnapshot()
	if err != nil {
		return nil, err
	}
	return &scanner{snap: snap}, nil
}

// Close implements store.Store. Unflushed changes are dropped (the store
// reopens at the last flushed tip); callers flush first for a clean
// shutdown.
func (s *Store) Close() error {
	s.closed = true
	s.w.close()
	s.coins.reset()
	var errs []error
	if s.bf != nil {
		errs = append(errs, s.bf.close())
	}
	if s.uf != nil {
		errs = append(errs, s.uf.close())
	}
	return errors.Join(errs...)
}

// Warm implements utxo.Warmer: the records b's inputs spend and (own) b's
// own txids that the cache lacks start being read from the store, the reads
// overlapping (prefetch), and the cache entries and the first bytes of the
// records already cached are brought into the CPU cache.
func (s *Store) Warm(b *wire.Block, own bool) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	s.coins.prefetch(b, own)
	s.coins.warm(b, own)
}

// WarmTxids implements utxo.Warmer: the cache entries and the first bytes
// of the records of txids.
func (s *Store) WarmTxids(txids []wire.Hash) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	s.coins.warmTxids(txids)
}
