package backends

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
)

// Sentinel errors. Stores wrap them with %w; test with errors.Is.
var (
	// ErrNotFound is returned by Get when the key is absent.
	ErrNotFound = errors.New("backends: key not found")
	// ErrClosed is returned by every method of a KV, Snapshot or Iterator
	// once it (or the store it came from) has been closed.
	ErrClosed = errors.New("backends: store closed")
	// ErrReadOnly is returned by Write when the store was opened with
	// Options.ReadOnly.
	ErrReadOnly = errors.New("backends: store is read-only")
	// ErrEmptyKey is returned by Write when a batch holds an empty key and the
	// store does not support empty keys (bbolt). Nothing of the batch is
	// applied.
	ErrEmptyKey = errors.New("backends: empty key not supported by this store")
	// ErrWrongBackend is returned by Open when the data directory was created
	// by a different store.
	ErrWrongBackend = errors.New("backends: data directory belongs to another store")
	// ErrUnknownBackend is returned by Open for a name nobody registered.
	ErrUnknownBackend = errors.New("backends: unknown store")
	// ErrUnavailable is returned by Open for a store that is registered but
	// not usable in this build (rocksdb without the rocksdb build tag).
	ErrUnavailable = errors.New("backends: store not available in this build")
	// ErrBadOptions is returned by Open when Options.Extra has the wrong type
	// or an option value is invalid.
	ErrBadOptions = errors.New("backends: bad options")
)

// SyncMode is the durability asked of one Write.
type SyncMode uint8

const (
	// NoSync: the write is atomic and visible to readers when Write returns,
	// survives a crash of this process (SIGKILL) for stores that hand it to
	// the kernel immediately, but is only guaranteed to survive an OS crash or
	// power loss after a later Write(…, Sync) or KV.Sync returns.
	NoSync SyncMode = iota
	// Sync: the write (and every earlier write) is on stable storage when
	// Write returns.
	Sync
)

// String returns "sync" or "nosync".
func (m SyncMode) String() string {
	if m == Sync {
		return "sync"
	}
	return "nosync"
}

// Range selects the keys an iterator visits: every key k with
// Start <= k < End that begins with Prefix, in ascending bytewise order.
// A nil or empty Start, End or Prefix does not constrain (the zero Range is
// the whole store). Start and End may be combined with Prefix; the effective
// range is the intersection. The iterator does not retain the Range's slices
// beyond the call that creates it (stores copy what they keep).
type Range struct {
	Start  []byte
	End    []byte
	Prefix []byte
	// Few says the caller expects few keys (a lookup, not a scan): a store
	// that reads ahead for scans does not, and caches what it reads.
	Few bool
}

// PrefixRange returns the Range of all keys beginning with prefix.
func PrefixRange(prefix []byte) Range { return Range{Prefix: prefix} }

// Bounds returns the effective half-open interval [lower, upper) of r.
// lower is never nil (an empty slice means "from the first key"); upper is
// nil when unbounded. empty reports that no key can be in the range. The
// returned slices are fresh copies the caller may keep.
func (r Range) Bounds() (lower, upper []byte, empty bool) {
	lower = append([]byte{}, r.Start...)
	if len(r.End) > 0 {
		upper = append([]byte(nil), r.End...)
	}
	if len(r.Prefix) > 0 {
		if bytes.Compare(r.Prefix, lower) > 0 {
			lower = append(lower[:0], r.Prefix...)
		}
		if pe := PrefixEnd(r.Prefix); pe != nil && (upper == nil || bytes.Compare(pe, upper) < 0) {
			upper = pe
		}
	}
	if upper != nil && bytes.Compare(lower, upper) >= 0 {
		return lower, upper, true
	}
	return lower, upper, false
}

// PrefixEnd returns the smallest key greater than every key beginning with
// prefix, or nil when there is none (prefix empty or all 0xff bytes). The
// result is a fresh slice.
func PrefixEnd(prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xff {
			end := append([]byte(nil), prefix[:i+1]...)
			end[i]++
			return end
		}
	}
	return nil
}

// Reader is the read side shared by a KV and its snapshots. All methods are
// safe for concurrent use.
type Reader interface {
	// Get returns the value stored under key. The returned slice is an owned
	// copy: the caller may keep and modify it. Absent keys give an error
	// wrapping ErrNotFound. An empty stored value is returned as a non-nil,
	// zero-length slice.
	Get(key []byte) ([]byte, error)
	// Has reports whether key is present.
	Has(key []byte) (bool, error)
	// NewIterator returns an iterator over r, positioned before the first
	// key: call Next before Key/Value. The caller must Close it. The iterator
	// sees the store as of its creation (an implicit snapshot): writes made
	// afterwards are not visible through it. A live iterator pins resources
	// (old file versions; on bbolt a read transaction, which blocks writes
	// that must grow the memory map), so Close iterators promptly.
	NewIterator(r Range) (Iterator, error)
}

// Iterator walks keys in ascending order. An Iterator is not safe for
// concurrent use by several goroutines (it is safe to Close the owning
// store or snapshot concurrently: the iterator then stops with ErrClosed).
type Iterator interface {
	// Next advances to the next key and reports whether there is one. It
	// returns false at the end of the range, on error, and after Close.
	Next() bool
	// Key returns the current key. The slice is owned by the iterator and is
	// valid only until the next call to Next or Close; copy it to keep it.
	// Do not modify it. Nil when not positioned on a key.
	Key() []byte
	// Value returns the current value, with the same validity rule as Key.
	Value() []byte
	// Err returns the error that stopped iteration, nil at a normal end, and
	// ErrClosed (wrapped) once the iterator, its snapshot or its store was
	// closed.
	Err() error
	// Close releases the iterator. It is idempotent; later calls return nil.
	Close() error
}

// Snapshot is a consistent, read-only view of the store at the moment it was
// taken: later writes are never visible through it. It must be Closed; a
// store's Close closes its live snapshots (and their iterators) first.
// Closing a snapshot closes the iterators created from it.
type Snapshot interface {
	Reader
	// Close releases the snapshot. Idempotent; later calls return nil.
	Close() error
}

// KV is an ordered key-value store. All methods are safe for concurrent use
// (iterators themselves are not). After Close every method returns an error
// wrapping ErrClosed; Close is idempotent.
type KV interface {
	Reader
	// Write applies every operation of b atomically, in order (a later
	// operation on the same key wins), with the durability mode asks. The
	// batch is not modified or retained; it may be Reset and reused after
	// Write returns. An empty batch is a no-op (with Sync it still makes
	// earlier NoSync writes durable).
	Write(b *Batch, mode SyncMode) error
	// Sync makes every earlier successful Write durable, as if it had been
	// written with Sync. It is a no-op for a read-only store.
	Sync() error
	// NewSnapshot returns a consistent read-only view; see Snapshot.
	NewSnapshot() (Snapshot, error)
	// Close closes live iterators and snapshots, then the store. Data written
	// with NoSync is flushed as the store's normal shutdown does (all three
	// stores make it durable on a clean Close). Idempotent: later calls return
	// nil.
	Close() error
}

// Appender is implemented by stores with a cheaper path for appended keys
// (a bulk load's): pebble and RocksDB write a batch of ascending Puts as one
// table file and ingest it, skipping the write-ahead log, memtable and
// flush; bbolt fills the B+tree pages of an append to the brim instead of
// half. WriteAppend is Write (same atomicity and errors; durability at
// least Write's: an ingested table is synced) for a batch whose keys all
// sort after every key in the store; a batch that breaks this is still
// applied as Write would apply it, only without the saving.
type Appender interface {
	WriteAppend(b *Batch, mode SyncMode) error
}

// BatchBounder is implemented by stores whose write holds memory for every
// page it changes (bbolt copies each B+tree page it changes into the Go
// heap), so a batch of keys at random places costs memory for each key
// until it has touched every page. MaxBatchKeys is how many such keys a
// batch may hold to stay within the store's bound as the store is now
// (the bound rises as it grows); 0: no bound. Callers that can split
// their writes, as a flush between blocks, keep under it.
type BatchBounder interface {
	MaxBatchKeys() int
}

// Advisor is implemented by stores that read through a memory mapping
// (bbolt), where the first touch of a page the page cache lacks waits for
// that page alone. Advise asks the OS for the pages Gets of keys will
// touch, all at once, and returns without waiting for the last of them;
// it changes nothing a read returns. Callers about to read many keys at
// random places, as a block's connect, call it first.
type Advisor interface {
	Advise(keys [][]byte)
}

// WriteAppend writes b with kv's WriteAppend when it has one, else with
// Write; b's keys should all sort after every key in kv (see Appender).
func WriteAppend(kv KV, b *Batch, mode SyncMode) error {
	if a, ok := kv.(Appender); ok {
		return a.WriteAppend(b, mode)
	}
	return kv.Write(b, mode)
}

// Options configure Open. The zero value is valid.
type Options struct {
	// CacheBytes is the block-cache budget; 0 selects the store's default.
	// bbolt has no cache of its own (it relies on the OS page cache) and
	// ignores it.
	CacheBytes int64
	// ReadOnly opens an existing store without write access; Write returns
	// ErrReadOnly. The data directory must already exist.
	ReadOnly bool
	// Logger receives the store's own log lines. Nil discards them.
	Logger *slog.Logger
	// Extra holds store-specific options; each store documents the type it
	// accepts (for example *pebble.Extra). A value of another type makes Open
	// fail with ErrBadOptions. Nil selects the defaults.
	Extra any
}

// Log returns o.Logger, or a logger that discards everything when nil.
func (o Options) Log() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// ExtraAs returns o.Extra as the store-specific options type T (given as a
// T or a *T; nil selects T's zero value, the store's defaults). Any other
// type fails with ErrBadOptions naming the store.
func ExtraAs[T any](o Options, store string) (T, error) {
	var zero T
	switch e := o.Extra.(type) {
	case nil:
		return zero, nil
	case T:
		return e, nil
	case *T:
		if e != nil {
			return *e, nil
		}
		return zero, nil
	}
	return zero, fmt.Errorf("%w: %s wants %T, got %T", ErrBadOptions, store, zero, o.Extra)
}
