package spindex

import (
	"testing"

	"utxod/backends"
	"utxod/store/kvstore"
)

// openIndexedStore is a kvstore over kv with a coins cache of budget bytes
// and the indexes ixs.
func openIndexedStore(t testing.TB, kv backends.KV, budget int64, ixs ...kvstore.Index) *kvstore.Store {
	t.Helper()
	st, err := kvstore.Open(kv, kvstore.Options{CacheBytes: budget, Indexes: ixs})
	if err != nil {
		t.Fatal(err)
	}
	return st
}
