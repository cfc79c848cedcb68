package chainstate

import (
	"testing"

	"utxod/backends"
	"utxod/store/kvstore"
)

// openKVStore is a kvstore over kv with a coins cache of budget bytes.
func openKVStore(t testing.TB, kv backends.KV, budget int64) *kvstore.Store {
	t.Helper()
	st, err := kvstore.Open(kv, kvstore.Options{CacheBytes: budget})
	if err != nil {
		t.Fatal(err)
	}
	return st
}
