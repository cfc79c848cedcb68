// Package pebble is the embedded default store, on
// github.com/cockroachdb/pebble/v2 (pure Go). It registers itself as
// "pebble".
//
// Empty keys and empty values are allowed. Iterators and snapshots are
// pebble's own (an iterator is a point-in-time view). NoSync writes are in
// pebble's WAL buffer when Write returns and reach the kernel shortly after
// (a SIGKILL may lose the most recent ones, never part of one); Sync and
// KV.Sync fsync the WAL.
package pebble

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"utxod/backends"
	"utxod/backends/internal/guard"
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
	// Tune, if set, is called last with the pebble options before Open, for
	// anything not covered here.
	Tune func(*pebble.Options)
}

// DB is a pebble-backed backends.KV.
type DB struct {
	g        guard.Guard
	db       *pebble.DB
	readOnly bool
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
	opts := &pebble.Options{
		CacheSize:                   cache,
		MemTableSize:                mem,
		MemTableStopWritesThreshold: 4,
		MaxOpenFiles:                1024,
		ReadOnly:                    o.ReadOnly,
		ErrorIfNotExists:            o.ReadOnly,
		FormatMajorVersion:          pebble.FormatNewest,
		Logger:                      slogLogger{o.Log()},
	}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		opts.Levels[i].FilterType = pebble.TableFilter
	}
	if extra.Tune != nil {
		extra.Tune(opts)
	}
	if o.ReadOnly {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("pebble: %w", err)
		}
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("pebble: %w", err)
	}
	return &DB{db: db, readOnly: o.ReadOnly}, nil
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

// Write implements backends.KV.
func (d *DB) Write(b *backends.Batch, mode backends.SyncMode) error {
	if !d.g.Enter() {
		return guard.Closed("pebble")
	}
	defer d.g.Exit()
	if d.readOnly {
		return fmt.Errorf("pebble: %w", backends.ErrReadOnly)
	}
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
	if err := pb.Commit(wo); err != nil {
		_ = pb.Close()
		return fmt.Errorf("pebble: commit: %w", err)
	}
	return pb.Close()
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
	if err := d.db.LogData(nil, pebble.Sync); err != nil {
		return fmt.Errorf("pebble: sync: %w", err)
	}
	return nil
}

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

// Close implements backends.KV.
func (d *DB) Close() error {
	return d.g.Close(func() error {
		if err := d.db.Close(); err != nil {
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
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Infof(format string, args ...any) {
	s.l.Debug(fmt.Sprintf(format, args...), "store", Name)
}

func (s slogLogger) Errorf(format string, args ...any) {
	s.l.Error(fmt.Sprintf(format, args...), "store", Name)
}

// Fatalf is called by pebble on unrecoverable internal errors (for example a
// failed WAL write); pebble's default logger exits the process. We log and
// panic so the stack is visible.
func (s slogLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.l.Error(msg, "store", Name, "fatal", true)
	panic("pebble: fatal: " + msg)
}
