// Package backends defines the key-value store interface every storage engine
// implements, its sentinel errors and the registry stores add themselves to.
//
// # The interface
//
// A KV is an ordered map from byte-string keys to byte-string values:
//
//   - Get returns an owned copy of the value (ErrNotFound when absent); Has
//     tests presence.
//   - NewIterator walks a Range ([Start, End) intersected with a Prefix; nil
//     or empty bounds are unbounded) in ascending bytewise order. Key and
//     Value slices belong to the iterator and are valid only until the next
//     Next or Close. An iterator sees the store as of its creation.
//   - Writes go through a Batch (Put, Delete, Len, Size, Reset, Replay),
//     applied atomically and in order by Write. Durability is explicit per
//     write: Write(b, Sync) is durable when it returns; Write(b, NoSync) is
//     atomic and visible but only durable after a later Sync write or
//     KV.Sync.
//   - NewSnapshot returns a consistent read-only view (Get, Has, iteration)
//     unaffected by later writes, for scans such as chainstate digests that
//     run while writes continue.
//   - Close closes live iterators and snapshots and then the store; it is
//     idempotent, and every method of the store, its snapshots and
//     iterators returns an error wrapping ErrClosed afterwards (never a
//     panic).
//
// All KV and Snapshot methods are safe for concurrent use; an Iterator is
// used by one goroutine at a time.
//
// # Stores
//
// Stores live in sub-packages and register by name in init; consumers
// blank-import utxod/backends/all and call Open(name, dir, Options):
//
//	store    package                   empty keys   notes
//	pebble   utxod/backends/pebble     allowed      pure Go, the default
//	rocksdb  utxod/backends/rocksdb    allowed      cgo, needs -tags rocksdb
//	bbolt    utxod/backends/bbolt      ErrEmptyKey  one B+tree file, writes serialised
//
// Empty values are allowed by every store. See each package's
// documentation for its durability details and caveats.
//
// A data directory records the store that created it in dir/BACKEND; Open
// refuses (ErrWrongBackend) to open it with another store.
//
// The conformance suite, utxod/backends/kvtest, defines the contract in
// executable form; every store passes it, including a SIGKILL crash test.
package backends
