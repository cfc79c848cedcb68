package main

import (
	"io"
	"log/slog"
	"testing"

	"utxod/script"
)

// TestValidatorSigCache: every engine has the signature cache; an import's
// (sigCacheLookupOnly) verifies a block's signatures again on a second pass
// because it never stores them, serve's (the default) does not.
func TestValidatorSigCache(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, lookupOnly := range []bool{false, true} {
		c := commonFlags{network: "regtest", sigCacheLookupOnly: lookupOnly}
		_, v, err := c.validator(log)
		if err != nil {
			t.Fatal(err)
		}
		e, ok := v.Engine.(*script.NativeEngine)
		if !ok {
			t.Fatalf("engine %T", v.Engine)
		}
		if e.Cache() == nil {
			t.Fatalf("lookupOnly %v: engine without a cache", lookupOnly)
		}
		if got := e.StoresSignatures(); got == lookupOnly {
			t.Fatalf("lookupOnly %v: engine stores signatures %v", lookupOnly, got)
		}
	}
}
