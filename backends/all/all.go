// Package all registers every store. Consumers blank-import it:
//
//	import _ "utxod/backends/all"
//
// and then call backends.Open(name, dir, opts). RocksDB is real only when
// built with -tags rocksdb; otherwise its name is registered but Open fails
// with backends.ErrUnavailable.
package all

import (
	// Stores register themselves in init.
	_ "utxod/backends/bbolt"
	_ "utxod/backends/pebble"
	_ "utxod/backends/rocksdb"
)
