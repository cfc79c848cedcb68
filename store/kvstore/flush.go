package kvstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"utxod/backends"
	"utxod/store"
	"utxod/validate"
	"utxod/wire"
)

// Flush implements store.Store: build one batch of every pending change,
// commit it, then retire what it made durable. A failed commit retires
// nothing, so the next flush writes it all again.
func (s *Store) Flush(index []validate.IndexEntry, stats *store.Stats) error {
	commit, finish, err := s.StageFlush(index, stats)
	if err != nil || commit == nil {
		return err
	}
	return finish(commit())
}

// StageFlush implements store.StagedFlusher: Flush in its three steps.
// While commit writes the batch, reads find every change in the coins
// cache and the pending maps, which only finish retires.
func (s *Store) StageFlush(index []validate.IndexEntry, stats *store.Stats) (commit func() error, finish func(error) error, err error) {
	if s.closed {
		return nil, nil, backends.ErrClosed
	}
	s.coins.settle() // no read in flight predates the batch
	s.index = append(s.index, index...)
	if err := s.stageStats(stats); err != nil {
		return nil, nil, err
	}
	// Undo records and blocks first (they must be durable before the tip
	// that references them); what the early writer could not write (it
	// stopped at a failure) is still pending and goes into this batch.
	s.w.drain()
	s.forgetWritten()
	b, err := s.buildBatch()
	if err != nil {
		return nil, nil, fmt.Errorf("kvstore: flush: %w", err)
	}
	if b.Len() == 0 {
		// Nothing changed since the last flush but unsynced early batches.
		if s.w.unsynced.Load() {
			if err := s.kv.Sync(); err != nil {
				return nil, nil, fmt.Errorf("kvstore: flush: %w", err)
			}
			s.w.unsynced.Store(false)
		}
		return nil, nil, nil
	}
	// The blocks and undo records before the locations that point at them.
	for _, f := range []*blockFiles{s.bf, s.uf} {
		if f == nil {
			continue
		}
		if err := f.sync(); err != nil {
			return nil, nil, fmt.Errorf("kvstore: flush: %w", err)
		}
	}
	commit = func() error { return s.commit(b) }
	finish = func(err error) error {
		if err != nil {
			return fmt.Errorf("kvstore: flush: %w", err)
		}
		s.log.Debug("flush committed", "keys", b.Len(), "bytes", b.Size())
		s.w.unsynced.Store(false)
		s.retire()
		// Files no durable location points into any more.
		for _, f := range []*blockFiles{s.bf, s.uf} {
			if f == nil {
				continue
			}
			if err := f.prune(); err != nil {
				return fmt.Errorf("kvstore: flush: %w", err)
			}
		}
		return nil
	}
	return commit, finish, nil
}

// SyncAhead implements store.AheadSyncer: the block and rev files start
// their fdatasyncs on goroutines, so that the next Flush finds them done.
// Appends and block reads wait for them; a failure is returned by every
// later Flush.
func (s *Store) SyncAhead() {
	for _, f := range []*blockFiles{s.bf, s.uf} {
		if f != nil {
			f.syncAhead()
		}
	}
}

// putLocs adds the pending flat-file locations to b under prefix; an empty
// one (deleted, or kept in the KV: locInKV) deletes the stored one.
func putLocs(b *backends.Batch, locs map[wire.Hash][]byte, prefix byte) {
	for h, loc := range locs {
		if len(loc) == 0 {
			b.Delete(hashKey(prefix, h))
		} else {
			b.Put(hashKey(prefix, h), loc)
		}
	}
}

// stageStats takes the statistics of the tip the coins describe.
func (s *Store) stageStats(stats *store.Stats) error {
	if !s.tipDirty {
		return nil
	}
	if stats == nil {
		return errors.New("kvstore: flush: the tip moved but no statistics were given")
	}
	if stats.BestBlock != s.tip {
		return fmt.Errorf("kvstore: flush: statistics describe %s, the coins %s", stats.BestBlock, s.tip)
	}
	return s.setStats(stats)
}

// batchSize bounds the bytes and operations of the batch buildBatch makes,
// given its dirty coins' share: one allocation of a flush's ~10 MB buffer,
// where a missed part (the flat-file locations were) made append copy it
// into one twice its size.
func (s *Store) batchSize(coinBytes, coinOps int) (size, ops int) {
	size, ops = coinBytes, coinOps
	for _, u := range s.undo {
		size += 33 + len(u.b)
		ops++
	}
	for _, raw := range s.blocks {
		size += 33 + len(raw.b)
		ops++
	}
	for _, locs := range []map[wire.Hash][]byte{s.locs, s.undoLocs} {
		for _, loc := range locs {
			size += 33 + len(loc)
		}
		ops += len(locs)
	}
	for i := range s.index {
		size += 33 + indexEntrySize(&s.index[i])
	}
	ops += len(s.index)
	for _, ix := range s.indexes {
		if bs, ok := ix.(BatchSizer); ok {
			n, o := bs.BatchSize()
			size, ops = size+n, ops+o
		}
	}
	// Genesis and schema, statistics and tip.
	return size + 33 + len(s.genesis) + 33 + 4 + 33 + len(s.stats) + 33 + 32, ops + 4
}

// buildBatch collects every pending change in a fresh batch (a large
// flush's buffer is not kept alive): dirty coins, pending undo and block
// data and deletions, index entries, each Index's changes, then genesis,
// schema, statistics and tip.
func (s *Store) buildBatch() (*backends.Batch, error) {
	dirty, order, size := s.coins.dirty()
	size, ops := s.batchSize(size, len(dirty))
	b := backends.NewBatch()
	b.Grow(size, ops)
	// Coins in key order: txids are random, and bbolt applies a batch key
	// by key to its B+tree (bench/results/storage.md).
	for _, i := range order {
		txid := &dirty[i]
		if e, _ := s.coins.entries.get(txid); e.len() == 0 {
			b.Delete(s.coins.coinKey(*txid))
		} else {
			b.Put(s.coins.coinKey(*txid), s.coins.arena.Get(e.ref()).Bytes())
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
	putLocs(b, s.locs, prefixBlockLoc)
	putLocs(b, s.undoLocs, prefixUndoLoc)
	var enc []byte
	for i := range s.index {
		e := &s.index[i]
		enc = encodeIndexEntry(enc[:0], e)
		b.Put(hashKey(prefixIndex, e.Header.BlockHash()), enc)
	}
	for _, ix := range s.indexes {
		if err := ix.AppendBatch(b); err != nil {
			return nil, err
		}
	}
	if s.genesis != nil {
		b.Put(keyGenesis, s.genesis)
		b.Put(keySchema, binary.LittleEndian.AppendUint32(nil, schemaVersion))
	}
	if s.stats != nil {
		b.Put(keyStats, s.stats)
		b.Put(keyTip, append([]byte(nil), s.tip[:]...))
	}
	return b, nil
}

// commit writes b synced, after Core's CheckDiskSpace test before
// FlushStateToDisk (stores write a batch at least twice: log and table).
func (s *Store) commit(b *backends.Batch) error {
	if err := backends.CheckSpace(s.kv, 2*uint64(b.Size()), s.minFree); err != nil {
		return err
	}
	return s.kv.Write(b, backends.Sync)
}

// retire forgets what a committed batch made durable.
func (s *Store) retire() {
	clear(s.undo)
	clear(s.blocks)
	clear(s.locs)
	clear(s.undoLocs)
	s.held = 0
	s.w.reset()
	s.genesis, s.stats, s.tipDirty = nil, nil, false
	s.index = nil
	for _, ix := range s.indexes {
		ix.Flushed()
	}
	s.coins.retire(s.budget)
}
