// Package pebble is the embedded default store, on
// github.com/cockroachdb/pebble/v2 (pure Go). It registers itself as
// "pebble".
//
// Empty keys and empty values are allowed. Iterators and snapshots are
// pebble's own (an iterator is a point-in-time view). NoSync writes are in
// pebble's WAL buffer when Write returns and reach the kernel shortly after
// (a SIGKILL may lose the most recent ones, never part of one); Sync and
// KV.Sync fsync the WAL.
//
// A full disk stops the store at the first ENOSPC (see diskfull.go): Open,
// Write and Sync then return an error wrapping backends.ErrDiskFull, the
// directory keeps its last durable state, and the store must be reopened
// once space is freed.
package pebble

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"utxod/backends"
	"utxod/backends/internal/guard"
	"utxod/internal/diskspace"
)

// Name is the registered name.
const Name = "pebble"

// DefaultCacheBytes is the block cache used when Options.CacheBytes is 0.
const DefaultCacheBytes = 128 << 20

func init() { backends.Register(Name, Open) }

// Extra holds pebble-specific options; pass a *Extra (or Extra) in
// backends.Options.Extra.
type Extra struct {
	// MemTableBytes is the memtable size; 0 selects CacheBytes/4 clamped to
	// [4 MiB, 256 MiB].
	MemTableBytes uint64
	// FS is the file system the store lives on; nil selects vfs.Default.
	// The store wraps it to stop at the first ENOSPC (see diskfull.go).
	FS vfs.FS
	// Tune, if set, is called last with the pebble options before Open, for
	// anything not covered here.
	Tune func(*pebble.Options)
}

// DB is a pebble-backed backends.KV.
type DB struct {
	g        guard.Guard
	db       *pebble.DB
	dir      string
	readOnly bool
	stop     *stopper
	opts     *pebble.Options // with defaults: the table options of WriteAppend

	appendSeq atomic.Uint64 // names WriteAppend's table files
}

var _ backends.KV = (*DB)(nil)

// Open opens or creates the pebble store in dir. Use backends.Open to get
// the data-directory marker check; this function does no marker handling.
func Open(dir string, o backends.Options) (backends.KV, error) {
	extra, err := backends.ExtraAs[Extra](o, "pebble")
	if err != nil {
		return nil, err
	}
	if o.CacheBytes < 0 {
		return nil, fmt.Errorf("%w: negative CacheBytes", backends.ErrBadOptions)
	}
	cache := o.CacheBytes
	if cache == 0 {
		cache = DefaultCacheBytes
	}
	mem := extra.MemTableBytes
	if mem == 0 {
		mem = uint64(min(max(cache/4, 4<<20), 256<<20))
	}
	base := extra.FS
	if base == nil {
		base = vfs.Default
	}
	stop := newStopper(o.Log())
	opts := &pebble.Options{
		FS:                          stopFS{FS: base, s: stop},
		CacheSize:                   cache,
		MemTableSize:                mem,
		MemTableStopWritesThreshold: 4,
		MaxOpenFiles:                1024,
		ReadOnly:                    o.ReadOnly,
		ErrorIfNotExists:            o.ReadOnly,
		FormatMajorVersion:          pebble.FormatNewest,
		Logger:                      slogLogger{l: o.Log(), stop: stop},
	}
	// Bloom filters on every level but the last: pebble never reads a
	// last-level table's filter (IterOptions.UseL6Filters is off for its
	// gets), and there, where most keys live, it would cost 1.25 bytes a key.
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		opts.Levels[i].FilterType = pebble.TableFilter
	}
	opts.Levels[len(opts.Levels)-1].FilterPolicy = pebble.NoFilterPolicy // nil would take the level above's
	// Tables are written without compression: Bitcoin data is mostly
	// hashes, keys and signatures, which snappy barely shrinks (about 4 %
	// of the datadir) but spends CPU on. Compressed tables an older datadir
	// wrote stay readable.
	opts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionNone })
	if extra.Tune != nil {
		extra.Tune(opts)
	}
	if o.ReadOnly {
		if _, err := base.Stat(dir); err != nil {
			return nil, fmt.Errorf("pebble: %w", err)
		}
	}
	db, err := open(dir, opts, stop)
	if err != nil {
		return nil, fmt.Errorf("pebble: %w", err)
	}
	wopts := opts.Clone()
	wopts.EnsureDefaults()
	d := &DB{db: db, dir: dir, readOnly: o.ReadOnly, stop: stop, opts: wopts}
	if !o.ReadOnly {
		if err := d.removeStaleAppends(); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("pebble: %w", err)
		}
	}
	return d, nil
}

// open runs pebble.Open, returning early when the disk fills under it (Open
// flushes the replayed WAL and would wait for that flush forever; the
// blocked Open is left behind and closes what it opened if it ever ends).
func open(dir string, opts *pebble.Options, stop *stopper) (*pebble.DB, error) {
	type result struct {
		db  *pebble.DB
		err error
	}
	done := make(chan result, 1)
	go func() {
		db, err := pebble.Open(dir, opts)
		done <- result{db, err}
	}()
	select {
	case r := <-done:
		return r.db, r.err
	case <-stop.stopped:
		select {
		case r := <-done:
			return r.db, r.err
		default:
		}
		go func() {
			if r := <-done; r.db != nil {
				_ = r.db.Close()
			}
		}()
		return nil, fmt.Errorf("open: %w", stop.failed())
	}
}

// Get implements backends.Reader.
func (d *DB) Get(key []byte) ([]byte, error) {
	if !d.g.Enter() {
		return nil, guard.Closed("pebble")
	}
	defer d.g.Exit()
	return get(d.db, key)
}

// Has implements backends.Reader.
func (d *DB) Has(key []byte) (bool, error) {
	if !d.g.Enter() {
		return false, guard.Closed("pebble")
	}
	defer d.g.Exit()
	return has(d.db, key)
}

// NewIterator implements backends.Reader.
func (d *DB) NewIterator(r backends.Range) (backends.Iterator, error) {
	if !d.g.Enter() {
		return nil, guard.Closed("pebble")
	}
	defer d.g.Exit()
	return newIter(&d.g, d.db, r)
}

// enterWrite enters the guard for a write (the caller Exits it unless an
// error is returned): not closed, not read-only, not stopped by a full disk.
func (d *DB) enterWrite() error {
	if !d.g.Enter() {
		return guard.Closed("pebble")
	}
	if d.readOnly {
		d.g.Exit()
		return fmt.Errorf("pebble: %w", backends.ErrReadOnly)
	}
	if err := d.stop.failed(); err != nil {
		d.g.Exit()
		return fmt.Errorf("pebble: %w", err)
	}
	return nil
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
	// Pre-size: each op costs its key and value plus a few header bytes.
	pb := d.db.NewBatchWithSize(b.Size() + 16*b.Len())
	if err := b.Replay(batchWriter{pb}); err != nil {
		_ = pb.Close()
		return fmt.Errorf("pebble: %w", err)
	}
	wo := pebble.NoSync
	if mode == backends.Sync {
		wo = pebble.Sync
	}
	return d.commit("commit", func() error {
		if err := pb.Commit(wo); err != nil {
			_ = pb.Close()
			return err
		}
		return pb.Close()
	})
}

// commit runs fn, a pebble write, and returns its error, or the disk-full
// error as soon as the store stops under it (fn then stays blocked in
// pebble for good; see diskfull.go).
func (d *DB) commit(what string, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	var err error
	select {
	case err = <-done:
	case <-d.stop.stopped:
		select {
		case err = <-done: // finished too: its answer stands
		default:
			return fmt.Errorf("pebble: %s: %w", what, d.stop.failed())
		}
	}
	if err != nil {
		return fmt.Errorf("pebble: %s: %w", what, err)
	}
	return nil
}

// Sync implements backends.KV: it appends an empty record to the WAL with
// sync, which fsyncs every earlier record.
func (d *DB) Sync() error {
	if !d.g.Enter() {
		return guard.Closed("pebble")
	}
	defer d.g.Exit()
	if d.readOnly {
		return nil
	}
	return d.sync()
}

func (d *DB) sync() error {
	if err := d.stop.failed(); err != nil {
		return fmt.Errorf("pebble: sync: %w", err)
	}
	return d.commit("sync", func() error { return d.db.LogData(nil, pebble.Sync) })
}

// AvailableBytes implements backends.SpaceReporter.
func (d *DB) AvailableBytes() (uint64, error) { return diskspace.Available(d.dir) }

// NewSnapshot implements backends.KV.
func (d *DB) NewSnapshot() (backends.Snapshot, error) {
	if !d.g.Enter() {
		return nil, guard.Closed("pebble")
	}
	defer d.g.Exit()
	s := &snapshot{snap: d.db.NewSnapshot(), owner: &d.g}
	d.g.Track(s)
	return s, nil
}

// Close implements backends.KV. A store stopped by a full disk, before or
// during Close, is not closed in pebble (that would wait for its blocked
// flush): its files stay as a crash would leave them, and Close returns an
// error wrapping backends.ErrDiskFull.
func (d *DB) Close() error {
	return d.g.Close(func() error {
		stopped := func() error {
			return fmt.Errorf("pebble: close: %w: the store stopped at its first failed write and was left as a crash would leave it", backends.ErrDiskFull)
		}
		if d.stop.failed() != nil {
			return stopped()
		}
		done := make(chan error, 1)
		go func() { done <- d.db.Close() }()
		var err error
		select {
		case err = <-done:
		case <-d.stop.stopped: // a background flush met ENOSPC
			select {
			case err = <-done:
			default:
				return stopped()
			}
		}
		if err != nil {
			return fmt.Errorf("pebble: close: %w", err)
		}
		return nil
	})
}

type batchWriter struct{ b *pebble.Batch }

func (w batchWriter) Put(k, v []byte) error { return w.b.Set(k, v, nil) }
func (w batchWriter) Delete(k []byte) error { return w.b.Delete(k, nil) }

// reader is what *pebble.DB and *pebble.Snapshot have in common.
type reader interface {
	Get(key []byte) ([]byte, io.Closer, error)
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

func get(r reader, key []byte) ([]byte, error) {
	v, c, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("pebble: %w", backends.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("pebble: get: %w", err)
	}
	out := make([]byte, len(v))
	copy(out, v)
	if err := c.Close(); err != nil {
		return nil, fmt.Errorf("pebble: get: %w", err)
	}
	return out, nil
}

func has(r reader, key []byte) (bool, error) {
	_, c, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("pebble: has: %w", err)
	}
	if err := c.Close(); err != nil {
		return false, fmt.Errorf("pebble: has: %w", err)
	}
	return true, nil
}

func newIter(owner *guard.Guard, r reader, rg backends.Range) (backends.Iterator, error) {
	lower, upper, empty := rg.Bounds()
	if empty {
		return guard.NewIter(owner, nil), nil
	}
	if len(lower) == 0 {
		// A non-nil empty bound trips an invariant check in pebble's
		// race/invariants builds (testingDisableSeekOpt indexes key[0]).
		lower = nil
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, fmt.Errorf("pebble: new iterator: %w", err)
	}
	return guard.NewIter(owner, cursor{it}), nil
}

type cursor struct{ it *pebble.Iterator }

func (c cursor) First() bool  { return c.it.First() }
func (c cursor) Next() bool   { return c.it.Next() }
func (c cursor) Err() error   { return c.it.Error() }
func (c cursor) Close() error { return c.it.Close() }
func (c cursor) Entry() ([]byte, []byte, error) {
	v, err := c.it.ValueAndErr()
	return c.it.Key(), v, err
}

// snapshot is a pebble snapshot with its own guard for its iterators.
type snapshot struct {
	g     guard.Guard
	snap  *pebble.Snapshot
	owner *guard.Guard
}

func (s *snapshot) Get(key []byte) ([]byte, error) {
	if !s.g.Enter() {
		return nil, guard.Closed("pebble snapshot")
	}
	defer s.g.Exit()
	return get(s.snap, key)
}

func (s *snapshot) Has(key []byte) (bool, error) {
	if !s.g.Enter() {
		return false, guard.Closed("pebble snapshot")
	}
	defer s.g.Exit()
	return has(s.snap, key)
}

func (s *snapshot) NewIterator(r backends.Range) (backends.Iterator, error) {
	if !s.g.Enter() {
		return nil, guard.Closed("pebble snapshot")
	}
	defer s.g.Exit()
	return newIter(&s.g, s.snap, r)
}

func (s *snapshot) Close() error {
	err := s.g.Close(s.snap.Close)
	s.owner.Untrack(s)
	return err
}

// Release implements guard.Resource: the store is closing.
func (s *snapshot) Release() { _ = s.g.Close(s.snap.Close) }

// slogLogger adapts *slog.Logger to pebble.Logger. Pebble's informational
// lines go to Debug.
type slogLogger struct {
	l    *slog.Logger
	stop *stopper
}

func (s slogLogger) Infof(format string, args ...any) {
	s.l.Debug(fmt.Sprintf(format, args...), "store", Name)
}

func (s slogLogger) Errorf(format string, args ...any) {
	s.l.Error(fmt.Sprintf(format, args...), "store", Name)
}

// Fatalf is called by pebble on unrecoverable internal errors (for example a
// failed WAL write); pebble's default logger exits the process. We log and
// panic so the stack is visible. A full disk never gets here (the stopper
// keeps ENOSPC from pebble); should one still arrive, the store stops
// instead and the caller blocked in pebble is answered by the store.
func (s slogLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.l.Error(msg, "store", Name, "fatal", true)
	if s.stop != nil && strings.Contains(strings.ToLower(msg), "no space left on device") {
		s.stop.stop("fatal", errors.New(msg))
		select {}
	}
	panic("pebble: fatal: " + msg)
}
