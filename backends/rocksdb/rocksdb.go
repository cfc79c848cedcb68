//go:build rocksdb

package rocksdb

import (
	"fmt"
	"os"
	"sync"

	"github.com/linxGnu/grocksdb"

	"utxod/backends"
	"utxod/backends/internal/guard"
	"utxod/internal/diskspace"
)

// Available reports whether the real RocksDB store is compiled in.
const Available = true

// headerInfoLogLevel is RocksDB's HEADER_LEVEL (grocksdb has no constant).
const headerInfoLogLevel = grocksdb.InfoLogLevel(5)

// DefaultCacheBytes is the block cache used when Options.CacheBytes is 0.
const DefaultCacheBytes = 128 << 20

func init() { backends.Register(Name, Open) }

// Extra holds RocksDB-specific options; pass Extra or *Extra in
// backends.Options.Extra.
type Extra struct {
	// WriteBufferBytes is the memtable size; 0 selects CacheBytes/4 clamped
	// to [4 MiB, 256 MiB].
	WriteBufferBytes uint64
	// Tune, if set, is called last with the RocksDB options before Open.
	Tune func(*grocksdb.Options)
	// PerEntryIterators makes iterators call grocksdb once per entry (four
	// cgo calls) instead of copying entries out in batches: the control arm
	// of the batched cursor (batchiter.go).
	PerEntryIterators bool
	// PerEntryBatches builds each write batch with one grocksdb call per
	// operation instead of encoding RocksDB's batch format in Go and
	// handing it over in one call: the control arm of writerep.go.
	PerEntryBatches bool
	// LoggedFlushes writes every batch through the log and the memtable,
	// large synced ones too: the control arm of writeIngest (ingest.go).
	LoggedFlushes bool
}

// DB is a RocksDB-backed backends.KV.
type DB struct {
	g               guard.Guard
	db              *grocksdb.DB
	dir             string
	readOnly        bool
	batched         bool // iterators use batchCursor
	perEntryBatches bool
	loggedFlushes   bool

	failMu sync.Mutex
	failed error // the first disk-full write error; later writes return it

	opts *grocksdb.Options
	// plainOpts write the table files ingested uncompressed (ingest.go).
	plainOpts *grocksdb.Options
	bbto      *grocksdb.BlockBasedTableOptions
	cache     *grocksdb.Cache
	ro        *grocksdb.ReadOptions // shared by Get/Has (const in C++)
	woSync    *grocksdb.WriteOptions
	woNo      *grocksdb.WriteOptions
}

var _ backends.KV = (*DB)(nil)

// Open opens or creates the RocksDB store in dir (no marker handling; use
// backends.Open).
func Open(dir string, o backends.Options) (backends.KV, error) {
	extra, err := backends.ExtraAs[Extra](o, "rocksdb")
	if err != nil {
		return nil, err
	}
	if o.CacheBytes < 0 {
		return nil, fmt.Errorf("%w: negative CacheBytes", backends.ErrBadOptions)
	}
	cacheBytes := o.CacheBytes
	if cacheBytes == 0 {
		cacheBytes = DefaultCacheBytes
	}
	wbuf := extra.WriteBufferBytes
	if wbuf == 0 {
		wbuf = uint64(min(max(cacheBytes/4, 4<<20), 256<<20))
	}
	if o.ReadOnly {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("rocksdb: %w", err)
		}
	}

	d := &DB{readOnly: o.ReadOnly, dir: dir, batched: batchedIterators && !extra.PerEntryIterators,
		perEntryBatches: extra.PerEntryBatches, loggedFlushes: extra.LoggedFlushes}
	d.cache = grocksdb.NewLRUCache(uint64(cacheBytes))
	d.bbto = grocksdb.NewDefaultBlockBasedTableOptions()
	d.bbto.SetBlockCache(d.cache)
	d.bbto.SetFilterPolicy(grocksdb.NewBloomFilterFull(10))
	d.opts = grocksdb.NewDefaultOptions()
	d.opts.SetBlockBasedTableFactory(d.bbto)
	// Tables are written without compression (see pebble's Open), but for
	// the last level's, where nearly every key lives, with zstd: it keeps
	// a block only if it shrinks by an eighth, so the coins' blocks stay
	// as they are and are read without decompressing, while the
	// scripthash index's shrink by 13 % (its 8-byte sequence trailers are
	// zeros there), about the bytes a key pebble's format saves. Appended
	// tables are compressed only when a sample of them compresses
	// (ingest.go). An older datadir's tables stay readable.
	d.opts.SetCompression(grocksdb.NoCompression)
	d.opts.SetBottommostCompression(grocksdb.ZSTDCompression)
	d.opts.SetCreateIfMissing(!o.ReadOnly)
	d.opts.SetWriteBufferSize(wbuf)
	d.opts.SetMaxBackgroundJobs(2)
	d.opts.SetMaxOpenFiles(1024)
	// Only the header RocksDB writes at open goes to the info LOG: on a full
	// disk a LOG write fails, and Debian's librocksdb (built with
	// assertions) aborts the process at the next line any thread logs to
	// that file (WritableFileWriter::AssertFalseAndGetStatusForPrevError;
	// SstFileManagerImpl's error-recovery thread logs "free space ... is
	// less than required disk buffer" every 5 s). Nothing reads the LOG;
	// utxod reports the errors RocksDB returns.
	d.opts.SetInfoLogLevel(headerInfoLogLevel)
	d.opts.SetKeepLogFileNum(2)
	if extra.Tune != nil {
		extra.Tune(d.opts)
	}
	// The options of the table files ingested uncompressed (ingest.go).
	d.plainOpts = grocksdb.NewDefaultOptions()
	d.plainOpts.SetBlockBasedTableFactory(d.bbto)
	d.plainOpts.SetCompression(grocksdb.NoCompression)
	d.plainOpts.SetBottommostCompression(grocksdb.NoCompression)
	if o.ReadOnly {
		d.db, err = grocksdb.OpenDbForReadOnly(d.opts, dir, false)
	} else {
		d.db, err = grocksdb.OpenDb(d.opts, dir)
	}
	if err != nil {
		d.destroyOptions()
		if backends.IsDiskFull(err) {
			err = backends.DiskFull(err)
		}
		return nil, fmt.Errorf("rocksdb: %w", err)
	}
	if !o.ReadOnly {
		if err := removeStaleAppends(dir); err != nil {
			d.db.Close()
			d.destroyOptions()
			return nil, fmt.Errorf("rocksdb: %w", err)
		}
	}
	d.ro = grocksdb.NewDefaultReadOptions()
	d.woSync = grocksdb.NewDefaultWriteOptions()
	d.woSync.SetSync(true)
	d.woNo = grocksdb.NewDefaultWriteOptions()
	o.Log().Debug("rocksdb store opened", "dir", dir, "cache", cacheBytes, "write_buffer", wbuf)
	return d, nil
}

func (d *DB) destroyOptions() {
	d.opts.Destroy()
	d.plainOpts.Destroy()
	d.bbto.Destroy()
	d.cache.Destroy()
}

// Get implements backends.Reader.
func (d *DB) Get(key []byte) ([]byte, error) {
	if !d.g.Enter() {
		return nil, guard.Closed("rocksdb")
	}
	defer d.g.Exit()
	return get(d.db, d.ro, key)
}

// Has implements backends.Reader.
func (d *DB) Has(key []byte) (bool, error) {
	if !d.g.Enter() {
		return false, guard.Closed("rocksdb")
	}
	defer d.g.Exit()
	return has(d.db, d.ro, key)
}

// NewIterator implements backends.Reader.
func (d *DB) NewIterator(r backends.Range) (backends.Iterator, error) {
	if !d.g.Enter() {
		return nil, guard.Closed("rocksdb")
	}
	defer d.g.Exit()
	return newIter(&d.g, d.db, nil, r, d.batched), nil
}

// Write implements backends.KV.
func (d *DB) Write(b *backends.Batch, mode backends.SyncMode) error {
	if err := d.enterWrite(); err != nil {
		return err
	}
	defer d.g.Exit()
	if b.Len() == 0 {
		if mode == backends.Sync {
			return d.sync()
		}
		return nil
	}
	if mode == backends.Sync && b.Size() >= ingestFlushBytes && !d.loggedFlushes {
		return d.writeIngest(b)
	}
	wb, err := d.writeBatch(b)
	if err != nil {
		return fmt.Errorf("rocksdb: %w", err)
	}
	defer wb.Destroy()
	wo := d.woNo
	if mode == backends.Sync {
		wo = d.woSync
	}
	if err := d.db.Write(wo, wb); err != nil {
		return fmt.Errorf("rocksdb: write: %w", d.fail(err))
	}
	return nil
}

// enterWrite enters the guard for a write (the caller Exits it unless an
// error is returned): not closed, not read-only, no disk-full failure.
func (d *DB) enterWrite() error {
	if !d.g.Enter() {
		return guard.Closed("rocksdb")
	}
	if d.readOnly {
		d.g.Exit()
		return fmt.Errorf("rocksdb: %w", backends.ErrReadOnly)
	}
	if err := d.failure(); err != nil {
		d.g.Exit()
		return fmt.Errorf("rocksdb: write: %w", err)
	}
	return nil
}

// fail records err when it says the disk is full and returns it (wrapping
// backends.ErrDiskFull then). After a failed write RocksDB holds a
// background error and refuses writes until it recovers on its own; the
// store keeps refusing them with the first error until it is reopened.
func (d *DB) fail(err error) error {
	if !backends.IsDiskFull(err) {
		return err
	}
	err = backends.DiskFull(err)
	d.failMu.Lock()
	defer d.failMu.Unlock()
	if d.failed == nil {
		d.failed = err
	}
	return err
}

// failure returns the recorded disk-full error, if any.
func (d *DB) failure() error {
	d.failMu.Lock()
	defer d.failMu.Unlock()
	return d.failed
}

// AvailableBytes implements backends.SpaceReporter.
func (d *DB) AvailableBytes() (uint64, error) { return diskspace.Available(d.dir) }

// Sync implements backends.KV: FlushWAL(sync=true), which fsyncs the WAL.
func (d *DB) Sync() error {
	if !d.g.Enter() {
		return guard.Closed("rocksdb")
	}
	defer d.g.Exit()
	if d.readOnly {
		return nil
	}
	return d.sync()
}

func (d *DB) sync() error {
	if err := d.failure(); err != nil {
		return fmt.Errorf("rocksdb: sync: %w", err)
	}
	if err := d.db.FlushWAL(true); err != nil {
		return fmt.Errorf("rocksdb: sync: %w", d.fail(err))
	}
	return nil
}

// NewSnapshot implements backends.KV.
func (d *DB) NewSnapshot() (backends.Snapshot, error) {
	if !d.g.Enter() {
		return nil, guard.Closed("rocksdb")
	}
	defer d.g.Exit()
	s := &snapshot{db: d.db, snap: d.db.NewSnapshot(), ro: grocksdb.NewDefaultReadOptions(), owner: &d.g, batched: d.batched}
	s.ro.SetSnapshot(s.snap)
	d.g.Track(s)
	return s, nil
}

// Close implements backends.KV. Live iterators and snapshots are destroyed
// first (RocksDB asserts there are none at close).
func (d *DB) Close() error {
	return d.g.Close(func() error {
		if !d.readOnly && d.failure() == nil {
			// Flush the memtables, so the next open reads tables instead of
			// replaying the write-ahead log into a memtable (a dump right
			// after an import took 2× the time and 6× the memory). An
			// error leaves the log, which the next open replays.
			fo := grocksdb.NewDefaultFlushOptions()
			fo.SetWait(true)
			_ = d.db.Flush(fo)
			fo.Destroy()
		}
		d.db.Close()
		d.ro.Destroy()
		d.woSync.Destroy()
		d.woNo.Destroy()
		d.destroyOptions()
		return nil
	})
}

type batchWriter struct{ wb *grocksdb.WriteBatch }

func (w batchWriter) Put(k, v []byte) error { w.wb.Put(k, v); return nil }
func (w batchWriter) Delete(k []byte) error { w.wb.Delete(k); return nil }

func get(db *grocksdb.DB, ro *grocksdb.ReadOptions, key []byte) ([]byte, error) {
	h, err := db.GetPinned(ro, key)
	if err != nil {
		return nil, fmt.Errorf("rocksdb: get: %w", err)
	}
	defer h.Destroy()
	if !h.Exists() {
		return nil, fmt.Errorf("rocksdb: %w", backends.ErrNotFound)
	}
	v := h.Data()
	out := make([]byte, len(v))
	copy(out, v)
	return out, nil
}

func has(db *grocksdb.DB, ro *grocksdb.ReadOptions, key []byte) (bool, error) {
	h, err := db.GetPinned(ro, key)
	if err != nil {
		return false, fmt.Errorf("rocksdb: has: %w", err)
	}
	defer h.Destroy()
	return h.Exists(), nil
}

// newIter creates an iterator, reading at snap when non-nil.
func newIter(owner *guard.Guard, db *grocksdb.DB, snap *grocksdb.Snapshot, r backends.Range, batched bool) backends.Iterator {
	lower, upper, empty := r.Bounds()
	if empty {
		return guard.NewIter(owner, nil)
	}
	ro := grocksdb.NewDefaultReadOptions()
	if !r.Few {
		// A scan (hash_serialized_3, snapshot dumps, the block index at
		// open): read ahead, and leave the block cache to point lookups
		// (bench/results/snapshot.md). A lookup reading 2 MiB ahead would
		// read far more than its keys (RocksDB's own read-ahead still grows
		// on long sequential runs).
		ro.SetReadaheadSize(2 << 20)
		ro.SetFillCache(false)
	}
	if snap != nil {
		ro.SetSnapshot(snap)
	}
	if upper != nil {
		// ro keeps a reference to upper, which RocksDB reads in place.
		ro.SetIterateUpperBound(upper)
	}
	if batched {
		return guard.NewIter(owner, newBatchCursor(db.NewIterator(ro), ro, lower))
	}
	return guard.NewIter(owner, &cursor{it: db.NewIterator(ro), ro: ro, lower: lower})
}

type cursor struct {
	it    *grocksdb.Iterator
	ro    *grocksdb.ReadOptions
	lower []byte
}

func (c *cursor) First() bool {
	c.it.Seek(c.lower)
	return c.it.Valid()
}

func (c *cursor) Next() bool {
	c.it.Next()
	return c.it.Valid()
}

// Entry returns slices pointing into RocksDB's memory, valid until the
// iterator moves or is destroyed.
func (c *cursor) Entry() ([]byte, []byte, error) {
	return sliceData(c.it.Key()), sliceData(c.it.Value()), nil
}

func sliceData(s *grocksdb.Slice) []byte {
	if s == nil {
		return []byte{}
	}
	if d := s.Data(); d != nil {
		return d
	}
	return []byte{}
}

func (c *cursor) Err() error {
	if err := c.it.Err(); err != nil {
		return fmt.Errorf("rocksdb: iterator: %w", err)
	}
	return nil
}

func (c *cursor) Close() error {
	c.it.Close()
	c.ro.Destroy()
	return nil
}

type snapshot struct {
	g       guard.Guard
	db      *grocksdb.DB
	snap    *grocksdb.Snapshot
	ro      *grocksdb.ReadOptions
	owner   *guard.Guard
	batched bool
}

func (s *snapshot) Get(key []byte) ([]byte, error) {
	if !s.g.Enter() {
		return nil, guard.Closed("rocksdb snapshot")
	}
	defer s.g.Exit()
	return get(s.db, s.ro, key)
}

func (s *snapshot) Has(key []byte) (bool, error) {
	if !s.g.Enter() {
		return false, guard.Closed("rocksdb snapshot")
	}
	defer s.g.Exit()
	return has(s.db, s.ro, key)
}

func (s *snapshot) NewIterator(r backends.Range) (backends.Iterator, error) {
	if !s.g.Enter() {
		return nil, guard.Closed("rocksdb snapshot")
	}
	defer s.g.Exit()
	return newIter(&s.g, s.db, s.snap, r, s.batched), nil
}

func (s *snapshot) release() error {
	s.ro.Destroy()
	s.db.ReleaseSnapshot(s.snap)
	return nil
}

func (s *snapshot) Close() error {
	err := s.g.Close(s.release)
	s.owner.Untrack(s)
	return err
}

// Release implements guard.Resource.
func (s *snapshot) Release() { _ = s.g.Close(s.release) }
