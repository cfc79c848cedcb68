package script

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	btcaddr "github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/testkit/raceflag"
	"utxod/wire"
)

// synthetic builds a one-input transaction spending a P2WPKH ("p2wpkh"),
// P2TR key-path ("p2tr") or P2PKH ("p2pkh") output, signed with btcd's
// signer, and returns it parsed with the project's parser.
func synthetic(t testing.TB, kind string, seed uint64) (*wire.Tx, []wire.TxOut) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	var kb [32]byte
	for i := range kb {
		kb[i] = byte(rng.Uint32())
	}
	priv, pub := btcec.PrivKeyFromBytes(kb[:])
	var pk []byte
	switch kind {
	case "p2wpkh":
		pk = append([]byte{0, 20}, btcaddr.Hash160(pub.SerializeCompressed())...)
	case "p2pkh":
		pk = append([]byte{0x76, 0xa9, 20}, btcaddr.Hash160(pub.SerializeCompressed())...)
		pk = append(pk, 0x88, 0xac)
	case "p2tr":
		q := txscript.ComputeTaprootKeyNoScript(pub)
		pk = append([]byte{0x51, 32}, schnorr.SerializePubKey(q)...)
	}
	const amt = 50_000
	msg := btcwire.NewMsgTx(2)
	var h chainhash.Hash
	h[0] = byte(seed)
	msg.AddTxIn(btcwire.NewTxIn(btcwire.NewOutPoint(&h, 1), nil, nil))
	msg.AddTxOut(btcwire.NewTxOut(amt-1000, []byte{0x51}))
	fetch := txscript.NewCannedPrevOutputFetcher(pk, amt)
	hashes := txscript.NewTxSigHashes(msg, fetch)
	switch kind {
	case "p2wpkh":
		wit, err := txscript.WitnessSignature(msg, hashes, 0, amt, pk, txscript.SigHashAll, priv, true)
		if err != nil {
			t.Fatal(err)
		}
		msg.TxIn[0].Witness = wit
	case "p2pkh":
		ss, err := txscript.SignatureScript(msg, 0, pk, txscript.SigHashAll, priv, true)
		if err != nil {
			t.Fatal(err)
		}
		msg.TxIn[0].SignatureScript = ss
	case "p2tr":
		wit, err := txscript.TaprootWitnessSignature(msg, hashes, 0, amt, pk, txscript.SigHashDefault, priv)
		if err != nil {
			t.Fatal(err)
		}
		msg.TxIn[0].Witness = wit
	}
	var buf bytes.Buffer
	if err := msg.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	tx, err := wire.ParseTx(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return tx, []wire.TxOut{{Value: amt, Script: pk}}
}

// TestNativeZeroAlloc: the P2PKH, P2WPKH and P2TR key-path paths allocate
// nothing per input (after the per-transaction midstates).
func TestNativeZeroAlloc(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("allocation counts are inflated by the race detector")
	}
	for _, kind := range []string{"p2pkh", "p2wpkh", "p2tr"} {
		tx, prevs := synthetic(t, kind, 1)
		for _, withCache := range []bool{false, true} {
			opts := []Option{WithSigCacheEntries(0)}
			if withCache {
				opts = []Option{WithSigCacheEntries(4096)}
			}
			v, err := NewEngine(opts...).Prepare(tx, prevs)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.VerifyInput(0, Mandatory); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			n := testing.AllocsPerRun(50, func() {
				if err := v.VerifyInput(0, Mandatory); err != nil {
					t.Fatal(err)
				}
			})
			// decred's ECDSA path allocates inside ModNScalar.InverseValNonConst
			// (math/big); everything else must be allocation-free.
			allowed := 0.0
			if Libsecp256k1Verifier() == nil && kind != "p2tr" && !withCache {
				allowed = 12
			}
			if n > allowed {
				t.Errorf("%s (cache %v, %s): %.1f allocs per VerifyInput", kind, withCache, DefaultSigVerifier().Name(), n)
			}
		}
	}
}

// countingVerifier counts calls through to an inner SigVerifier.
type countingVerifier struct {
	SigVerifier
	ecdsa, schnorr atomic.Int64
}

func (c *countingVerifier) VerifyECDSA(pub, sig []byte, msg [32]byte) bool {
	c.ecdsa.Add(1)
	return c.SigVerifier.VerifyECDSA(pub, sig, msg)
}

func (c *countingVerifier) VerifySchnorr(pub [32]byte, sig [64]byte, msg [32]byte) bool {
	c.schnorr.Add(1)
	return c.SigVerifier.VerifySchnorr(pub, sig, msg)
}

// TestSigCache: a second verification of the same inputs (a re-POSTed or
// re-connected block) makes no curve operation; failures are not cached;
// a shared cache serves another engine; a cache-less engine always
// verifies.
func TestSigCache(t *testing.T) {
	cv := &countingVerifier{SigVerifier: DefaultSigVerifier()}
	cache := NewSigCache(1 << 16) // large enough that no bucket overflows
	e := NewEngine(WithSigVerifier(cv), WithSignatureCache(cache))
	blk, prevs := loadBlock277647(t)
	run := func(e Engine) {
		for ti := 1; ti < len(blk.Txs); ti++ {
			v, err := e.Prepare(&blk.Txs[ti], prevs[ti])
			if err != nil {
				t.Fatal(err)
			}
			for i := range blk.Txs[ti].Inputs {
				if err := v.VerifyInput(i, P2SH); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	run(e)
	first := cv.ecdsa.Load()
	if first == 0 {
		t.Fatal("no signature verified")
	}
	// The second pass re-verifies only the failed trials (CHECKMULTISIG
	// tries signatures against keys they do not match; Core does not cache
	// failures either).
	run(e)
	second := cv.ecdsa.Load() - first
	if second*20 > first {
		t.Errorf("second pass verified %d of %d signatures", second, first)
	}
	// Another engine sharing the cache: the same.
	base := cv.ecdsa.Load()
	run(NewEngine(WithSigVerifier(cv), WithSignatureCache(cache)))
	if n := cv.ecdsa.Load() - base; n != second {
		t.Errorf("shared-cache engine verified %d signatures, want %d", n, second)
	}
	// Without a cache every signature is verified again.
	base = cv.ecdsa.Load()
	run(NewEngine(WithSigVerifier(cv), WithSigCacheEntries(0)))
	if n := cv.ecdsa.Load() - base; n != first {
		t.Errorf("cache-less pass verified %d signatures, want %d", n, first)
	}
	// Look-up-only engines (an import, as Core's ConnectBlock): on a fresh
	// cache every signature is verified on every pass and nothing is
	// stored; on the warm cache they hit like a storing engine.
	fresh := NewSigCache(1 << 16)
	for pass := 0; pass < 2; pass++ {
		base = cv.ecdsa.Load()
		run(NewEngine(WithSigVerifier(cv), WithSignatureCache(fresh), WithSigCacheStore(false)))
		if n := cv.ecdsa.Load() - base; n != first {
			t.Errorf("look-up-only pass %d on a fresh cache verified %d signatures, want %d", pass, n, first)
		}
	}
	if !fresh.empty() {
		t.Error("a look-up-only engine inserted into its cache")
	}
	// Once another engine stored a signature the cache is looked up, and
	// still nothing of the block's is stored.
	otx, opv := synthetic(t, "p2wpkh", 5)
	ov, _ := NewEngine(WithSignatureCache(fresh)).Prepare(otx, opv)
	if err := ov.VerifyInput(0, Mandatory); err != nil || fresh.empty() {
		t.Fatalf("storing engine: %v, cache still empty %v", err, fresh.empty())
	}
	for pass := 0; pass < 2; pass++ {
		base = cv.ecdsa.Load()
		run(NewEngine(WithSigVerifier(cv), WithSignatureCache(fresh), WithSigCacheStore(false)))
		if n := cv.ecdsa.Load() - base; n != first {
			t.Errorf("look-up-only pass %d on a non-empty cache verified %d signatures, want %d", pass, n, first)
		}
	}
	base = cv.ecdsa.Load()
	run(NewEngine(WithSigVerifier(cv), WithSignatureCache(cache), WithSigCacheStore(false)))
	if n := cv.ecdsa.Load() - base; n != second {
		t.Errorf("look-up-only engine on the warm cache verified %d signatures, want %d", n, second)
	}
	t.Logf("block 277647: %d ECDSA verifications cold, %d with a warm cache (failed multisig trials)", first, second)
	// Taproot: valid cached, invalid never cached.
	for _, kind := range []string{"p2tr", "p2wpkh"} {
		tx, pv := synthetic(t, kind, 9)
		before := cv.schnorr.Load() + cv.ecdsa.Load()
		for k := 0; k < 3; k++ {
			v, _ := e.Prepare(tx, pv)
			if err := v.VerifyInput(0, Mandatory); err != nil {
				t.Fatal(err)
			}
		}
		if n := cv.schnorr.Load() + cv.ecdsa.Load() - before; n != 1 {
			t.Errorf("%s: %d verifications for 3 runs", kind, n)
		}
		r := fromTx(tx)
		w := append([]byte(nil), r.ins[0].Witness[0]...)
		w[5] ^= 1
		r.ins[0].Witness = append([][]byte{w}, r.ins[0].Witness[1:]...)
		bad := mustParse(t, r)
		before = cv.schnorr.Load() + cv.ecdsa.Load()
		for k := 0; k < 2; k++ {
			v, _ := e.Prepare(bad, pv)
			if v.VerifyInput(0, Mandatory) == nil {
				t.Fatalf("%s: mutated signature verifies", kind)
			}
		}
		if n := cv.schnorr.Load() + cv.ecdsa.Load() - before; n != 2 {
			t.Errorf("%s: invalid signature verified %d times for 2 runs", kind, n)
		}
	}
	// Key construction follows Core: 'E'/'S' padding separates the kinds.
	var sh [32]byte
	k1 := cache.ecdsaKey(nil, &sh, []byte{1}, []byte{2})
	k2 := cache.schnorrKey(nil, &sh, []byte{1}, []byte{2})
	if k1 == k2 {
		t.Error("ECDSA and Schnorr entries collide")
	}
	buf := append(append(append([]byte(nil), cache.salt[:32]...), 'E'), make([]byte, 31)...)
	buf = append(append(append(buf, sh[:]...), 1), 2)
	if sha256.Sum256(buf) != k1 {
		t.Error("ECDSA key is not SHA256(nonce||'E'pad||sighash||pubkey||sig)")
	}
	if cache.Entries() < 1<<12 {
		t.Errorf("entries %d", cache.Entries())
	}
}

// TestSyntheticAllEngines: the synthetic inputs verify on every engine and
// a flipped signature byte fails on every engine.
func TestSyntheticAllEngines(t *testing.T) {
	forEachEngine(t, func(t *testing.T, ne namedEngine) {
		for _, kind := range []string{"p2pkh", "p2wpkh", "p2tr"} {
			for seed := uint64(0); seed < 8; seed++ {
				tx, pv := synthetic(t, kind, seed)
				if err := verifyAll(ne.e, tx, pv, Mandatory); err != nil {
					t.Fatalf("%s seed %d: %v", kind, seed, err)
				}
			}
		}
	})
}
