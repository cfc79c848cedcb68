package script

import "testing"

// namedEngine is one engine configuration the vector tests run through.
type namedEngine struct {
	name string
	e    Engine
	btcd bool // the btcd control arm (known deviations from Core apply)
}

// testEngines lists every engine configuration: the btcd control arm and
// the native engine on each SigVerifier compiled in, without a signature
// cache so every signature is really checked.
func testEngines() []namedEngine {
	es := []namedEngine{
		{"btcd", NewBtcdEngine(), true},
		{"utxod-decred", NewEngine(WithSigVerifier(DecredVerifier()), WithSigCacheEntries(0)), false},
	}
	if v := Libsecp256k1Verifier(); v != nil {
		es = append(es, namedEngine{"utxod-libsecp256k1", NewEngine(WithSigVerifier(v), WithSigCacheEntries(0)), false})
	}
	return es
}

// forEachEngine runs f as a subtest per engine.
func forEachEngine(t *testing.T, f func(t *testing.T, ne namedEngine)) {
	for _, ne := range testEngines() {
		t.Run(ne.name, func(t *testing.T) { f(t, ne) })
	}
}
