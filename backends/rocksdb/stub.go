//go:build !rocksdb

package rocksdb

import (
	"fmt"

	"utxod/backends"
)

// Available reports whether the real RocksDB store is compiled in.
const Available = false

func init() { backends.Register(Name, Open) }

// Open always fails: this binary was built without the rocksdb tag.
func Open(dir string, o backends.Options) (backends.KV, error) {
	return nil, fmt.Errorf("%w: rocksdb backend not compiled in: build with -tags rocksdb (needs librocksdb-dev)",
		backends.ErrUnavailable)
}
