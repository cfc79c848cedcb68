package main

import (
	"io"
	"log/slog"
	"testing"

	"utxod/script"
)

// TestValidatorSigCache: the engine of an import (noSigCache) has no
// signature cache; serve's (the default) has one.
func TestValidatorSigCache(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, off := range []bool{false, true} {
		c := commonFlags{network: "regtest", merkleKernel: "generic", scriptEngine: "utxod", noSigCache: off}
		_, v, err := c.validator(log)
		if err != nil {
			t.Fatal(err)
		}
		e, ok := v.Engine.(*script.NativeEngine)
		if !ok {
			t.Fatalf("engine %T", v.Engine)
		}
		if got := e.Cache() == nil; got != off {
			t.Fatalf("noSigCache %v: engine without a cache %v", off, got)
		}
	}
}
