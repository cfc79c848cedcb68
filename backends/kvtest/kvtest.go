// Package kvtest is the conformance suite every backends.KV implementation
// must pass, plus shared benchmarks. A store's test file is a few lines:
//
//	func TestKV(t *testing.T)      { kvtest.TestKV(t, kvtest.Open[*testing.T]("pebble", backends.Options{})) }
//	func BenchmarkKV(b *testing.B) { kvtest.BenchKV(b, kvtest.Open[*testing.B]("pebble", backends.Options{})) }
//
// The open function must return a store rooted in dir, creating it if needed,
// and fail the test itself on error. The suite closes every store it opens.
package kvtest

import (
	"testing"

	"utxod/backends"
)

// Open returns an open function for TestKV or BenchKV that opens the
// registered store name through backends.Open (so the data-directory marker
// is exercised too).
func Open[T testing.TB](name string, opts backends.Options) func(T, string) backends.KV {
	return func(tb T, dir string) backends.KV {
		tb.Helper()
		kv, err := backends.Open(name, dir, opts)
		if err != nil {
			tb.Fatalf("open %s in %s: %v", name, dir, err)
		}
		return kv
	}
}
