package script

import "testing"

// The btcd control arm lives in testkit/btcdengine, which imports this
// package; btcdengine_test.go, an external test of this directory, hands
// it in through SetBtcdEngine before any test runs.
var btcdEngine func(sigCacheEntries uint) Engine

// SetBtcdEngine sets the constructor of the btcd control arm.
func SetBtcdEngine(f func(sigCacheEntries uint) Engine) { btcdEngine = f }

// btcdOption is WithSigCache's setting.
type btcdOption uint

// WithSigCache gives the btcd engine a signature cache of at most
// maxEntries valid signatures (0: none).
func WithSigCache(maxEntries uint) btcdOption { return btcdOption(maxEntries) }

// NewBtcdEngine returns the btcd control arm (testkit/btcdengine).
func NewBtcdEngine(opts ...btcdOption) Engine {
	if btcdEngine == nil {
		panic("script: the btcd engine is not set (btcdengine_test.go)")
	}
	var n uint
	for _, o := range opts {
		n = uint(o)
	}
	return btcdEngine(n)
}

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
