package bbolt_test

import (
	"testing"

	"utxod/backends"
	"utxod/backends/bbolt"
	"utxod/backends/kvtest"
)

func TestKV(t *testing.T) {
	kvtest.TestKV(t, kvtest.Open[*testing.T](bbolt.Name, backends.Options{}))
}

func BenchmarkKV(b *testing.B) {
	kvtest.BenchKV(b, kvtest.Open[*testing.B](bbolt.Name, backends.Options{}))
}
