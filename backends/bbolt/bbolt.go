// Package bbolt is a store on go.etcd.io/bbolt (a single memory-mapped B+tree
// file, dir/bbolt.db, one bucket). It registers itself as "bbolt".
//
// Behaviour specific to this store:
//   - Records are kept in chunks of about a kilobyte, several to a bbolt
//     key (chunk.go): bbolt's 16 bytes of header a key and whole keys
//     made a scripthash row 65 bytes. A file that keeps one record to a
//     key, as utxod did before chunks, is refused with ErrOldLayout.
//   - Empty keys are refused: Write returns ErrEmptyKey and applies nothing.
//     Keys are limited to 32768 bytes and values to about 2 GiB (bbolt's
//     limits); longer ones fail the whole Write.
//   - Every Write is one bbolt read-write transaction; writes are serialised.
//     Write(…, Sync) commits with fdatasync. Write(…, NoSync) commits with
//     bbolt's NoSync mode for that transaction only: the pages reach the
//     kernel before Write returns (so they survive SIGKILL) but are not
//     fsynced. KV.Sync fdatasyncs the file. Caveat: an OS crash or power loss
//     after NoSync commits and before the next Sync can leave the file
//     corrupt, not merely old (bbolt may reuse pages the durable meta page
//     still points at). Use Sync writes at the points you must recover to.
//   - Iterators and snapshots are read transactions. bbolt must remap its
//     file when it outgrows the mapping, and a remap waits for every read
//     transaction to end: a goroutine that writes while holding an iterator
//     or snapshot can deadlock once the file outgrows the mapping. The
//     mapping starts at Extra.InitialMmapSize (default 1 GiB of address
//     space, not memory) to make that rare; close readers promptly.
//   - A write that fails on a full disk (ENOSPC) returns an error wrapping
//     backends.ErrDiskFull; bbolt rolls its transaction back, so the file
//     keeps its last committed state and later writes succeed once space is
//     freed.
//   - The pages a read maps stay in the process's resident set until
//     unmapped; on Linux the iterators of scans (not Range.Few) unmap the
//     file's pages every 256 MiB of keys and values they read between them,
//     so a scan does not hold the file resident (the page cache does).
//     bbolt maps the file MADV_RANDOM, one 4 KiB read a page fault; a scan
//     moving forward page after page asks for the pages ahead of it
//     (MADV_WILLNEED, Linux), as a file's read-ahead would, and Advise asks
//     for the leaves of all its keys at once (advise.go).
//   - Options.CacheBytes is ignored (bbolt reads through the OS page cache),
//     and so is Options.Logger (bbolt logs nothing by default).
package bbolt

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"utxod/backends"
	"utxod/backends/internal/guard"
	"utxod/internal/diskspace"
)

// Name is the registered name.
const Name = "bbolt"

// FileName is the database file inside the data directory.
const FileName = "bbolt.db"

// DefaultInitialMmapSize is the initial memory-map size (address space).
const DefaultInitialMmapSize = 1 << 30

// bucket holds the records in chunks (chunk.go). oldBucket held them one
// to a key, before chunks: such a file is refused (ErrOldLayout).
var (
	bucket    = []byte("chunks")
	oldBucket = []byte("kv")
)

// ErrOldLayout: the file keeps one record to a bbolt key, as utxod did
// before chunks; load the data directory again.
var ErrOldLayout = errors.New("bbolt: the file keeps one record to a key (a utxod before chunks); load the data directory again")

func init() { backends.Register(Name, Open) }

// Extra holds bbolt-specific options; pass Extra or *Extra in
// backends.Options.Extra.
type Extra struct {
	// InitialMmapSize; 0 selects DefaultInitialMmapSize.
	InitialMmapSize int
	// Tune, if set, is called last with the bbolt options before Open.
	Tune func(*bolt.Options)
}

// DB is a bbolt-backed backends.KV.
type DB struct {
	g        guard.Guard
	db       *bolt.DB
	dir      string
	readOnly bool
	writeMu  sync.Mutex // serialises Write and Sync; guards db.NoSync
	// pages is the file's size in pages as of the last write (MaxBatchKeys).
	pages    atomic.Int64
	pageSize int64
	// releaseEvery: iterators release the file's mapped pages each time
	// they have read this many bytes of keys and values between them
	// (scanRelease; 0: never); scanned counts them.
	releaseEvery int64
	scanned      atomic.Int64
}

var (
	_ backends.KV           = (*DB)(nil)
	_ backends.BatchBounder = (*DB)(nil)
	_ backends.Advisor      = (*DB)(nil)
)

// maxWritePages bounds the pages a write is expected to change. A commit
// copies each page it changes into the Go heap, with its node: at 185 M
// coins a flush of 40 blocks' keys, about a page each, took the heap to
// 8 GiB, and batches of 32 Ki keys kept serve within its budget
// (bench/results/scale.md, "bbolt's flush").
const maxWritePages = 32 << 10

// MaxBatchKeys implements backends.BatchBounder.
func (d *DB) MaxBatchKeys() int { return batchKeys(d.pages.Load(), maxWritePages) }

// batchKeys is how many keys, each on a page drawn at random among pages,
// change about limit distinct pages, pages·(1 − e^(−k/pages)) = limit; 0
// (no bound) when the file has no more than limit pages, which no batch
// can pass.
func batchKeys(pages int64, limit int) int {
	if pages <= int64(limit) {
		return 0
	}
	return int(-float64(pages) * math.Log1p(-float64(limit)/float64(pages)))
}

// Open opens or creates the bbolt store in dir (no marker handling; use
// backends.Open).
func Open(dir string, o backends.Options) (backends.KV, error) {
	extra, err := backends.ExtraAs[Extra](o, "bbolt")
	if err != nil {
		return nil, err
	}
	if extra.InitialMmapSize < 0 {
		return nil, fmt.Errorf("%w: negative InitialMmapSize", backends.ErrBadOptions)
	}
	if extra.InitialMmapSize == 0 {
		extra.InitialMmapSize = DefaultInitialMmapSize
	}
	path := filepath.Join(dir, FileName)
	if o.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("bbolt: %w", err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bbolt: %w", err)
	}
	opts := &bolt.Options{
		Timeout:         2 * time.Second, // file lock held by another process
		ReadOnly:        o.ReadOnly,
		InitialMmapSize: extra.InitialMmapSize,
		FreelistType:    bolt.FreelistMapType,
	}
	if extra.Tune != nil {
		extra.Tune(opts)
	}
	db, err := bolt.Open(path, 0o644, opts)
	if err != nil {
		if backends.IsDiskFull(err) {
			err = backends.DiskFull(err)
		}
		return nil, fmt.Errorf("bbolt: open %s: %w", path, err)
	}
	d := &DB{db: db, dir: dir, readOnly: o.ReadOnly, pageSize: int64(db.Info().PageSize), releaseEvery: scanRelease}
	err = db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(oldBucket) != nil {
			return ErrOldLayout
		}
		if o.ReadOnly && tx.Bucket(bucket) == nil {
			return errors.New("bucket missing (not a utxod bbolt store)")
		}
		return nil
	})
	if err == nil && !o.ReadOnly {
		err = db.Update(func(tx *bolt.Tx) error {
			_, err := tx.CreateBucketIfNotExists(bucket)
			d.pages.Store(tx.Size() / d.pageSize)
			return err
		})
	}
	if err != nil {
		_ = db.Close()
		if backends.IsDiskFull(err) {
			err = backends.DiskFull(err)
		}
		return nil, fmt.Errorf("bbolt: %s: %w", path, err)
	}
	return d, nil
}

// Get implements backends.Reader.
func (d *DB) Get(key []byte) ([]byte, error) {
	if !d.g.Enter() {
		return nil, guard.Closed("bbolt")
	}
	defer d.g.Exit()
	var out []byte
	err := d.db.View(func(tx *bolt.Tx) error {
		var err error
		out, err = get(tx.Bucket(bucket), key)
		return err
	})
	return out, err
}

// Advise implements backends.Advisor (advise.go).
func (d *DB) Advise(keys [][]byte) {
	if len(keys) == 0 || !d.g.Enter() {
		return
	}
	defer d.g.Exit()
	_ = d.db.View(func(tx *bolt.Tx) error {
		m := txMapping(tx, int(d.pageSize))
		if m.cached(keys[0]) {
			return nil
		}
		sorted := slices.Clone(keys)
		slices.SortFunc(sorted, bytes.Compare)
		m.leaves(uint64(tx.Bucket(bucket).Root()), sorted, true)
		return nil
	})
}

// Has implements backends.Reader.
func (d *DB) Has(key []byte) (bool, error) {
	if !d.g.Enter() {
		return false, guard.Closed("bbolt")
	}
	defer d.g.Exit()
	var ok bool
	err := d.db.View(func(tx *bolt.Tx) error {
		var err error
		_, ok, err = lookup(tx.Bucket(bucket), key)
		return err
	})
	return ok, err
}

// NewIterator implements backends.Reader. The iterator holds a read
// transaction until Closed.
func (d *DB) NewIterator(r backends.Range) (backends.Iterator, error) {
	if !d.g.Enter() {
		return nil, guard.Closed("bbolt")
	}
	defer d.g.Exit()
	lower, upper, empty := r.Bounds()
	if empty {
		return guard.NewIter(&d.g, nil), nil
	}
	tx, err := d.db.Begin(false)
	if err != nil {
		return nil, fmt.Errorf("bbolt: begin: %w", err)
	}
	return guard.NewIter(&d.g, newCursor(tx, true, d.scans(r), lower, upper)), nil
}

// Write implements backends.KV.
func (d *DB) Write(b *backends.Batch, mode backends.SyncMode) error {
	return d.write(b, mode, 0)
}

// appendFill is the page fill of WriteAppend: pages that only ever grow at
// their end are packed full (bbolt's default, 0.5, leaves every page of a
// sorted load half empty). Later inserts into a full page split it.
const appendFill = 1.0

// WriteAppend implements backends.Appender: Write with the bucket's pages
// filled to appendFill when they split.
func (d *DB) WriteAppend(b *backends.Batch, mode backends.SyncMode) error {
	return d.write(b, mode, appendFill)
}

// write is Write with the bucket's FillPercent for this transaction (0:
// bbolt's default).
func (d *DB) write(b *backends.Batch, mode backends.SyncMode, fill float64) error {
	if !d.g.Enter() {
		return guard.Closed("bbolt")
	}
	defer d.g.Exit()
	if d.readOnly {
		return fmt.Errorf("bbolt: %w", backends.ErrReadOnly)
	}
	if b.HasEmptyKey() {
		return fmt.Errorf("bbolt: %w", backends.ErrEmptyKey)
	}
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	if b.Len() == 0 {
		if mode == backends.Sync {
			return d.sync()
		}
		return nil
	}
	// db.NoSync is read by Commit in this goroutine; writeMu makes this the
	// only writer of the field.
	d.db.NoSync = mode != backends.Sync
	err := d.db.Update(func(tx *bolt.Tx) error {
		// Key order, the last operation on each key: each chunk is
		// rewritten once, in one pass over the B+tree's leaves.
		bk := tx.Bucket(bucket)
		if fill > 0 {
			bk.FillPercent = fill
		}
		p := &packer{bk: bk, budget: chunkBudget(int(d.pageSize)), greedy: fill > 0}
		if err := b.ReplayLast(p); err != nil {
			return err
		}
		if err := p.apply(); err != nil {
			return err
		}
		d.pages.Store(tx.Size() / d.pageSize)
		return nil
	})
	d.db.NoSync = false
	if err != nil {
		if errors.Is(err, bolterrors.ErrKeyRequired) {
			err = fmt.Errorf("%w: %w", backends.ErrEmptyKey, err)
		}
		if backends.IsDiskFull(err) {
			// bbolt rolls the transaction back: the file keeps its last
			// committed state and a later write may succeed once space is
			// freed.
			err = backends.DiskFull(err)
		}
		return fmt.Errorf("bbolt: write: %w", err)
	}
	return nil
}

// Sync implements backends.KV: fdatasync of the database file.
func (d *DB) Sync() error {
	if !d.g.Enter() {
		return guard.Closed("bbolt")
	}
	defer d.g.Exit()
	if d.readOnly {
		return nil
	}
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	return d.sync()
}

func (d *DB) sync() error {
	if err := d.db.Sync(); err != nil {
		if backends.IsDiskFull(err) {
			err = backends.DiskFull(err)
		}
		return fmt.Errorf("bbolt: sync: %w", err)
	}
	return nil
}

// AvailableBytes implements backends.SpaceReporter.
func (d *DB) AvailableBytes() (uint64, error) { return diskspace.Available(d.dir) }

// NewSnapshot implements backends.KV: a read transaction held open until
// the snapshot is closed.
func (d *DB) NewSnapshot() (backends.Snapshot, error) {
	if !d.g.Enter() {
		return nil, guard.Closed("bbolt")
	}
	defer d.g.Exit()
	tx, err := d.db.Begin(false)
	if err != nil {
		return nil, fmt.Errorf("bbolt: begin: %w", err)
	}
	s := &snapshot{tx: tx, owner: &d.g, db: d}
	d.g.Track(s)
	return s, nil
}

// Close implements backends.KV.
func (d *DB) Close() error {
	return d.g.Close(func() error {
		if err := d.db.Close(); err != nil {
			return fmt.Errorf("bbolt: close: %w", err)
		}
		return nil
	})
}

func get(b *bolt.Bucket, key []byte) ([]byte, error) {
	v, ok, err := lookup(b, key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("bbolt: %w", backends.ErrNotFound)
	}
	out := make([]byte, len(v))
	copy(out, v)
	return out, nil
}

// scanRelease is how many bytes of keys and values a DB's iterators read
// between releases of the file's mapped pages. The pages a scan has mapped
// stay in the process's resident set, clean and shared with the page
// cache, until something unmaps them: hash_serialized_3 of 185 M coins
// peaked at 12 GiB of RSS (bench/results/scale.md).
const scanRelease = 256 << 20

// tallyBytes is how many bytes an iterator reads before it adds them to
// its DB's count, so that the count is seldom written.
const tallyBytes = 1 << 20

// scans returns d when r is a scan, whose bytes count toward the next
// release; nil for a lookup (Range.Few), which reads a few pages: `serve`'s
// address lookups and pages keep what they map.
func (d *DB) scans(r backends.Range) *DB {
	if r.Few {
		return nil
	}
	return d
}

// cursor walks [lower, upper) in tx, which keeps the mapping in place while
// it is open (bbolt remaps only once every reader is done). tx is rolled
// back on Close when owned (a plain iterator owns its transaction; a
// snapshot's iterators do not); db counts a scan's bytes (nil: a lookup's
// are not counted).
type cursor struct {
	c            *bolt.Cursor
	tx           *bolt.Tx
	owned        bool
	db           *DB
	lower, upper []byte
	r            chunkReader
	read         int64 // bytes of chunks not yet tallied
	ra           readAhead
}

// readAhead reads a scan's pages into the page cache ahead of it. bbolt
// maps its file MADV_RANDOM, so a scan of pages not in the cache waited
// on one 4 KiB read a page: hash_serialized_3 of 185 M coins took 207 s
// when the cache held part of the file, against 44 s when it held all.
// Once a scan has moved forward from page to page minSeq times in a row
// (as the leaves of a loaded file lie), the next window is asked for,
// from 128 KiB doubling to 4 MiB; a jump (a leaf rewritten elsewhere)
// starts over.
type readAhead struct {
	base, size   uintptr // the mapping and the file's size
	pageSize     uintptr
	last         uintptr // offset of the last page read
	seq          int     // forward steps from page to page in a row
	window, done uintptr // the window's size; the end of what was asked
}

const (
	minAhead = 128 << 10
	maxAhead = 4 << 20
	// seqGap is how far past the last page the next may lie and still
	// count as a forward step; minSeq steps in a row start the windows.
	seqGap = 64 << 10
	minSeq = 4
)

// at notes a chunk at address p.
func (a *readAhead) at(p uintptr) {
	if a.base == 0 || p < a.base || p-a.base >= a.size {
		return
	}
	off := p - a.base
	page := off &^ (a.pageSize - 1)
	switch {
	case page == a.last:
		return // the same leaf page
	case page > a.last && page-a.last <= seqGap:
		a.seq++
	default:
		a.seq, a.window, a.done = 0, 0, 0
	}
	a.last = page
	if a.seq < minSeq || off+a.window/2 < a.done {
		return
	}
	a.window = min(max(2*a.window, minAhead), maxAhead)
	from := max(off, a.done) &^ (a.pageSize - 1)
	a.done = off + a.window
	willNeed(a.base, a.size, from, a.done-from)
}

func newCursor(tx *bolt.Tx, owned bool, scan *DB, lower, upper []byte) *cursor {
	c := &cursor{c: tx.Bucket(bucket).Cursor(), tx: tx, owned: owned, db: scan, lower: lower, upper: upper}
	if scan != nil {
		c.ra = readAhead{base: tx.DB().Info().Data, size: uintptr(tx.Size()), pageSize: uintptr(scan.pageSize)}
	}
	return c
}

// tally adds the bytes read to the DB's count and releases the mapping
// once the count reaches releaseEvery.
func (c *cursor) tally() {
	if c.db == nil || c.db.releaseEvery == 0 || c.read == 0 {
		return
	}
	n := c.db.scanned.Add(c.read)
	c.read = 0
	if n >= c.db.releaseEvery && c.db.scanned.CompareAndSwap(n, 0) {
		releaseMapped(c.tx)
	}
}

func (c *cursor) First() bool {
	ck, cv := chunkFrom(c.c, c.lower)
	if ck == nil {
		return false
	}
	c.load(ck, cv)
	for c.step() {
		if bytes.Compare(c.r.key, c.lower) >= 0 {
			return c.ok()
		}
	}
	return false
}

func (c *cursor) Next() bool { return c.step() && c.ok() }

// step advances to the next record, into the next chunk at a chunk's end.
func (c *cursor) step() bool {
	for !c.r.next() {
		if c.r.err != nil {
			return false
		}
		ck, cv := c.c.Next()
		if ck == nil {
			return false
		}
		c.load(ck, cv)
	}
	return true
}

func (c *cursor) load(ck, cv []byte) {
	c.r.reset(ck, cv)
	if c.db != nil && len(cv) > 0 {
		c.ra.at(uintptr(unsafe.Pointer(unsafe.SliceData(cv))))
	}
	if c.read += int64(len(ck) + len(cv)); c.read >= tallyBytes {
		c.tally()
	}
}

func (c *cursor) ok() bool { return c.upper == nil || bytes.Compare(c.r.key, c.upper) < 0 }

func (c *cursor) Entry() ([]byte, []byte, error) { return c.r.key, c.r.val, nil }
func (c *cursor) Err() error                     { return c.r.err }

func (c *cursor) Close() error {
	c.tally()
	if c.owned {
		return c.tx.Rollback()
	}
	return nil
}

type snapshot struct {
	g     guard.Guard
	tx    *bolt.Tx
	owner *guard.Guard
	db    *DB
}

func (s *snapshot) Get(key []byte) ([]byte, error) {
	if !s.g.Enter() {
		return nil, guard.Closed("bbolt snapshot")
	}
	defer s.g.Exit()
	return get(s.tx.Bucket(bucket), key)
}

func (s *snapshot) Has(key []byte) (bool, error) {
	if !s.g.Enter() {
		return false, guard.Closed("bbolt snapshot")
	}
	defer s.g.Exit()
	_, ok, err := lookup(s.tx.Bucket(bucket), key)
	return ok, err
}

func (s *snapshot) NewIterator(r backends.Range) (backends.Iterator, error) {
	if !s.g.Enter() {
		return nil, guard.Closed("bbolt snapshot")
	}
	defer s.g.Exit()
	lower, upper, empty := r.Bounds()
	if empty {
		return guard.NewIter(&s.g, nil), nil
	}
	return guard.NewIter(&s.g, newCursor(s.tx, false, s.db.scans(r), lower, upper)), nil
}

func (s *snapshot) Close() error {
	err := s.g.Close(s.tx.Rollback)
	s.owner.Untrack(s)
	return err
}

// Release implements guard.Resource.
func (s *snapshot) Release() { _ = s.g.Close(s.tx.Rollback) }
