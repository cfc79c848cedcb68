package kvstore

import (
	"errors"
	"log/slog"

	"utxod/backends"
	"utxod/internal/diskspace"
	"utxod/wire"
)

// DefaultCacheBytes is the coins cache budget Open gives for a zero
// Options.CacheBytes (utxod's --cache-mb default): Core's default -dbcache.
const DefaultCacheBytes = 450 << 20

// Options configure a Store. The zero value is a store with the default
// cache and free-space margin that keeps blocks and undo records in the KV,
// syncs every early batch and has no index.
type Options struct {
	// CacheBytes is the coins cache budget; NeedsFlush reports when the
	// cache (and what the early writer holds) is over it. 0:
	// DefaultCacheBytes.
	CacheBytes int64
	// MinFreeBytes is the free space every flush and early batch leave on
	// the store's filesystem beyond what they write, as Core's
	// CheckDiskSpace. 0: diskspace.DefaultMinFreeBytes (Core's 50 MiB);
	// negative: no pre-flush check.
	MinFreeBytes int64
	// BlocksDir and UndoDir, when set, keep raw blocks and undo records in
	// flat files there (blk00000.dat, rev00000.dat; created if absent), as
	// Core's blk and rev files, the KV keeping their locations; records
	// already in the KV stay readable. Give them again on every later open
	// of a datadir whose records went to files (their locations are useless
	// without them). Empty: the records go to the KV.
	BlocksDir, UndoDir string
	// UnsyncedEarlyWrites writes the early batches of undo records and
	// blocks with backends.NoSync: they are durable once the next flush's
	// synced batch is (the KV contract: a Sync write makes every earlier
	// write durable), as Core syncs its block and undo files only in
	// FlushStateToDisk. Only for stores whose unsynced writes cannot corrupt
	// what is already durable (pebble and RocksDB: write-ahead logs; not
	// bbolt). false: every early batch is synced.
	UnsyncedEarlyWrites bool
	// TrustCacheMisses lets the coins cache answer misses without reading
	// the store when the store holds no coin record (a new datadir), until
	// a flush over budget empties the cache; then misses read the store
	// again.
	TrustCacheMisses bool
	// Indexes are the secondary indexes the store keeps in its flush batch
	// (index.go); their prefixes must differ from each other and from the
	// store's own.
	Indexes []Index
	// Log receives the store's debug lines. Nil discards them.
	Log *slog.Logger
}

// Open wraps kv in a Store configured by opts. The caller keeps ownership
// of kv: Close closes the store's cache and flat files, not kv.
func Open(kv backends.KV, opts Options) (*Store, error) {
	budget := opts.CacheBytes
	if budget <= 0 {
		budget = DefaultCacheBytes
	}
	minFree := uint64(diskspace.DefaultMinFreeBytes)
	switch {
	case opts.MinFreeBytes > 0:
		minFree = uint64(opts.MinFreeBytes)
	case opts.MinFreeBytes < 0:
		minFree = 0
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Store{kv: kv, log: log, budget: budget, coins: newCoinCache(kv),
		undo: make(map[wire.Hash]pendingData), blocks: make(map[wire.Hash]pendingData), locs: make(map[wire.Hash][]byte), undoLocs: make(map[wire.Hash][]byte),
		w: newEarlyWriter(kv, minFree), minFree: minFree}
	if opts.UnsyncedEarlyWrites {
		s.w.mode = backends.NoSync
	}
	if err := s.configure(opts); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// configure applies the options that read the KV or can be refused.
func (s *Store) configure(opts Options) error {
	if opts.BlocksDir != "" {
		if err := s.useBlockFiles(opts.BlocksDir); err != nil {
			return err
		}
	}
	if opts.UndoDir != "" {
		if err := s.useUndoFiles(opts.UndoDir); err != nil {
			return err
		}
	}
	if opts.TrustCacheMisses {
		on, err := s.trustCacheMisses()
		if err != nil {
			return err
		}
		if opts.Log != nil {
			opts.Log.Debug("coins cache misses", "trusted", on)
		}
	}
	for _, ix := range opts.Indexes {
		if err := s.addIndex(ix); err != nil {
			return err
		}
	}
	return nil
}

// CacheMissesTrusted reports whether the coins cache answers misses without
// reading the store now (Options.TrustCacheMisses).
func (s *Store) CacheMissesTrusted() bool { return s.coins.complete }
