package pebble_test

import (
	"testing"

	"utxod/backends"
	"utxod/backends/kvtest"
	"utxod/backends/pebble"
)

func TestKV(t *testing.T) {
	kvtest.TestKV(t, kvtest.Open[*testing.T](pebble.Name, backends.Options{CacheBytes: 8 << 20}))
}

func BenchmarkKV(b *testing.B) {
	kvtest.BenchKV(b, kvtest.Open[*testing.B](pebble.Name, backends.Options{}))
}
