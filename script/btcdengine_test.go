package script_test

import (
	"utxod/script"
	"utxod/testkit/btcdengine"
)

// The btcd control arm of the engine tests (script.NewBtcdEngine in the
// package's own tests): testkit/btcdengine imports script, so only an
// external test can import it.
func init() {
	script.SetBtcdEngine(func(sigCacheEntries uint) script.Engine {
		return btcdengine.New(btcdengine.WithSigCache(sigCacheEntries))
	})
}
