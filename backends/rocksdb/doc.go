// Package rocksdb is a store on RocksDB through github.com/linxGnu/grocksdb
// (cgo). It registers itself as "rocksdb".
//
// The real implementation is compiled only with the rocksdb build tag and
// needs the RocksDB C library (Debian: librocksdb-dev; grocksdb v1.7.14
// matches RocksDB 7.8). Without the tag the package registers a stub whose
// Open fails with an error wrapping backends.ErrUnavailable, so a plain
// `go build ./...` never needs the C library.
//
// Behaviour specific to this store (rocksdb build):
//   - Empty keys and empty values are allowed.
//   - Write(…, NoSync) writes the WAL record with write(2) before returning
//     (it survives SIGKILL, not power loss); Write(…, Sync) and KV.Sync
//     fsync the WAL.
//   - Debian's librocksdb is built with assertions on, and closing a DB with
//     live iterators or snapshots aborts the process. Close therefore first
//     destroys every live iterator and snapshot (their later calls return
//     ErrClosed) and only then closes the DB.
//   - Options.Logger is not used: RocksDB writes its own LOG file in the
//     data directory (warnings and above, two files kept).
package rocksdb

// Name is the registered name.
const Name = "rocksdb"
