package kvtest

import (
	"testing"

	"utxod/backends"
)

// BenchKV runs the shared benchmarks against the store open creates.
func BenchKV(b *testing.B, open func(b *testing.B, dir string) backends.KV) {
	b.Skip("not yet")
}
