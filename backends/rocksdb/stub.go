//go:build !rocksdb

package rocksdb

import (
	"fmt"

	"utxod/backends"
)

// Available reports whether the real RocksDB store is compiled in.
const Available = false

// errNotCompiled names the build tag and the package a build with RocksDB needs.
var errNotCompiled = fmt.Errorf("%w: rocksdb is not compiled into this binary: build with -tags rocksdb "+
	"(make build does), which needs RocksDB's C headers and library (Debian: apt-get install -y librocksdb-dev)",
	backends.ErrUnavailable)

func init() { backends.RegisterUnavailable(Name, errNotCompiled) }

// Open always fails: this binary was built without the rocksdb tag.
func Open(dir string, o backends.Options) (backends.KV, error) { return nil, errNotCompiled }
