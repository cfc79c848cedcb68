// Package store is where a chainstate keeps its coins, undo data, raw blocks
// and block index: the Store interface, its errors and the in-memory Store.
// Package store/kvstore persists a Store over any backends.KV.
package store

import (
	"errors"

	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// Stats are the chainstate statistics a Store persists with its tip.
type Stats = utxo.Stats

// Store errors.
var (
	// ErrNoUndo reports a block whose undo data is missing.
	ErrNoUndo = errors.New("store: no undo data for block")
	// ErrNoBlock reports block data that is not stored.
	ErrNoBlock = errors.New("store: block data not stored")
)

// Persisted is the state a Store reopens with.
type Persisted struct {
	Genesis wire.Hash
	Tip     wire.Hash
	Stats   Stats
	// Index walks the persisted block index: fn once per entry, in no
	// particular order, the entry valid only during the call (an index of
	// ~900k headers is decoded straight into validate.BlockIndex.Load,
	// never held as a slice).
	Index func(fn func(*validate.IndexEntry) error) error
	// Snapshot is set when the state was loaded from a UTXO snapshot.
	Snapshot *SnapshotBase
}

// Scanner walks one consistent copy of the coin set in hash_serialized_3
// order (txid by raw bytes, then vout numerically). It stays valid while the
// chainstate moves on; Close releases it. Entries passed to fn (scripts
// included) are valid only during the call.
type Scanner interface {
	Scan(fn func(utxo.Entry) error) error
	Close() error
}

// ParallelScanner is a Scanner that can also walk its copy on several
// goroutines at once, for answers that do not depend on the order (a scan
// for scripts); hash_serialized_3 and dumps keep the ordered Scan.
//
// ScanParallel visits every coin Scan visits, exactly once, calling fn from
// up to workers goroutines at once (workers < 1 counts as 1); worker, in
// [0, workers), names the calling goroutine, so fn may keep per-worker state
// without locking. The txid space is cut into contiguous parts, each
// walked in Scan's order by one worker: worker w starts with the w-th part,
// and the rest are handed out in ascending txid order as workers free up
// (so every coin below the lowest txid the workers have reached is done). The
// first error (from fn or the store) stops every worker; ScanParallel
// returns it once all have stopped. Entries are valid only during the call.
type ParallelScanner interface {
	Scanner
	ScanParallel(workers int, fn func(worker int, e utxo.Entry) error) error
}

// TxCounter is implemented by stores that count, while they connect a
// block, the change in the number of transactions with an unspent output
// (gettxoutsetinfo's "transactions"), so the chainstate need not read every
// touched txid's live-output count beforehand.
type TxCounter interface {
	// ConnectCounting is Connect, returning the number of txids that
	// gained their first unspent output minus those that lost their last.
	ConnectCounting(block wire.Hash, d *utxo.Delta) (int64, error)
}

// SpentReader is implemented by stores that read back the coins a block
// of the active chain spent, at any depth (Store.Undo serves only the
// tip): its undo record's Spent list, the coins that existed before the
// block, in the order its inputs spent them (coins created and spent in
// the block are not in it). ErrNoUndo when the block has no undo record.
// Spent runs under the chainstate's read lock, like Coin and Block; the
// entries are the caller's.
type SpentReader interface {
	Spent(block wire.Hash) ([]utxo.Entry, error)
}

// AheadSyncer is implemented by stores that write data to files ahead of
// a flush (kvstore's block and rev files) and can start making it durable
// before the flush is called.
type AheadSyncer interface {
	// SyncAhead starts syncing the files in the background; the next Flush
	// waits for it and fails if it failed.
	SyncAhead()
}

// StagedFlusher is implemented by stores whose flush can let readers in
// while its batch is written. StageFlush does Flush's work up to the write
// and returns the write (commit) and what follows it (finish); a nil
// commit means the flush is already done. The caller runs commit while
// readers may read the store and nothing writes it, then finish under its
// exclusive hold with commit's error; finish's error is the flush's. Until
// finish returns, the store answers reads as it did before commit.
type StagedFlusher interface {
	StageFlush(index []validate.IndexEntry, stats *Stats) (commit func() error, finish func(error) error, err error)
}

// Store is where a chainstate keeps its coins, undo data, raw blocks and
// block index.
//
// Connect and Disconnect are applied in chain order. Coins, index entries,
// deletions, the tip and the statistics reach disk only at Flush, in one
// atomic synced batch, so a store on disk always describes exactly one tip.
// Undo records and raw blocks may be written ahead of that flush (kvstore's
// early writer does, as Core appends to its blk/rev files before
// FlushStateToDisk): their keys are block hashes, so one the flushed state
// does not reference is harmless, and every one it references is durable
// before the batch that references it.
//
// Stores are not safe for concurrent use: the chainstate serialises calls.
// Only reads (Coin, Block, Spent) run under its read lock, concurrently with
// each other and with a StagedFlusher's commit, and stores must allow that.
type Store interface {
	utxo.View
	// LiveOutputs is the number of unspent outputs of txid.
	LiveOutputs(txid wire.Hash) (int, error)
	// Connect applies d as the effect of connecting block (the new tip)
	// and records d as block's undo data. d and the scripts it holds are
	// only read, during the call and after it (the chainstate records a
	// block's MuHash changes from d while the next block connects).
	Connect(block wire.Hash, d *utxo.Delta) error
	// Undo returns the delta block (the current tip) was connected with
	// (ErrNoUndo if none). The caller must not modify it.
	Undo(block wire.Hash) (*utxo.Delta, error)
	// Disconnect reverts block (the current tip, whose delta is d); parent
	// becomes the tip.
	Disconnect(block, parent wire.Hash, d *utxo.Delta) error
	// PutBlock stores raw block data (the store keeps raw: the caller must
	// not modify it). Block returns it (ErrNoBlock if absent; the caller
	// must not modify the bytes). DeleteBlock drops it.
	PutBlock(hash wire.Hash, raw []byte) error
	Block(hash wire.Hash) ([]byte, error)
	DeleteBlock(hash wire.Hash) error
	// Load returns the persisted state, or nil for a new store.
	Load() (*Persisted, error)
	// SetGenesis initialises a new store at the network's genesis block.
	SetGenesis(h wire.Hash, stats *Stats) error
	// Flush writes everything applied so far with the given index entries
	// (those changed since the last call) and the statistics of the current
	// tip, atomically and durably. After a failure everything stays pending
	// for the next Flush, the index entries given included.
	Flush(index []validate.IndexEntry, stats *Stats) error
	// NeedsFlush reports that the cache is over its budget.
	NeedsFlush() bool
	// CacheBytes is the cache's current estimated size.
	CacheBytes() int64
	// Snapshot returns a Scanner over the current coin set (index and stats
	// as for Flush: a persistent store may flush first). The caller holds
	// the chainstate's write lock during the call, not during the scan.
	Snapshot(index []validate.IndexEntry, stats *Stats) (Scanner, error)
	// Close releases the store. Unflushed changes are dropped (a persistent
	// store reopens at its last flushed tip); callers flush first.
	Close() error
}

// Volatile is implemented by a store whose Flush makes nothing durable
// (the in-memory store): after a restart it is new.
type Volatile interface {
	Volatile()
}
