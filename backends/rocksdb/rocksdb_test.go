//go:build rocksdb

package rocksdb_test

import (
	"testing"

	"utxod/backends"
	"utxod/backends/kvtest"
	"utxod/backends/rocksdb"
)

func TestKV(t *testing.T) {
	kvtest.TestKV(t, kvtest.Open[*testing.T](rocksdb.Name, backends.Options{CacheBytes: 8 << 20}))
}

func BenchmarkKV(b *testing.B) {
	kvtest.BenchKV(b, kvtest.Open[*testing.B](rocksdb.Name, backends.Options{}))
}
