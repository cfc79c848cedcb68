package script

import (
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"

	"utxod/wire"
)

// benchEngines: the btcd control arm and the native engine on each
// verifier, all without a signature cache.
func benchEngines() []namedEngine { return testEngines() }

func benchVerify(b *testing.B, e Engine, tx *wire.Tx, prevs []wire.TxOut, i int, flags Flags) {
	v, err := e.Prepare(tx, prevs)
	if err != nil {
		b.Fatal(err)
	}
	if err := v.VerifyInput(i, flags); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		if err := v.VerifyInput(i, flags); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEngineVerifyInput: one input per kind through every engine.
// P2PKH is a real input of block 277,647 (flags P2SH); P2WPKH and P2TR
// key path are synthetic one-input transactions (flags Mandatory).
func BenchmarkEngineVerifyInput(b *testing.B) {
	ptx, pprevs, pi := p2pkhInput(b)
	wtx, wprevs := synthetic(b, "p2wpkh", 3)
	ttx, tprevs := synthetic(b, "p2tr", 3)
	for _, ne := range benchEngines() {
		b.Run("P2PKH/"+ne.name, func(b *testing.B) { benchVerify(b, ne.e, ptx, pprevs, pi, P2SH) })
		b.Run("P2WPKH/"+ne.name, func(b *testing.B) { benchVerify(b, ne.e, wtx, wprevs, 0, Mandatory) })
		b.Run("P2TR-key/"+ne.name, func(b *testing.B) { benchVerify(b, ne.e, ttx, tprevs, 0, Mandatory) })
	}
	// Warm signature cache (the re-POSTed block case).
	e := NewEngine(WithSigCacheEntries(1 << 12))
	b.Run("P2PKH/utxod-cached", func(b *testing.B) { benchVerify(b, e, ptx, pprevs, pi, P2SH) })
	b.Run("P2WPKH/utxod-cached", func(b *testing.B) { benchVerify(b, e, wtx, wprevs, 0, Mandatory) })
	b.Run("P2TR-key/utxod-cached", func(b *testing.B) { benchVerify(b, e, ttx, tprevs, 0, Mandatory) })
}

// benchSig is the fixed key, message and ECDSA signature of the signature
// benchmarks.
func benchSig() (kb, msg [32]byte, pub, der []byte) {
	for i := range kb {
		kb[i] = byte(i + 1)
		msg[i] = byte(3 * i)
	}
	priv := secp256k1.PrivKeyFromBytes(kb[:])
	return kb, msg, priv.PubKey().SerializeCompressed(), ecdsa.Sign(priv, msg[:]).Serialize()
}

// BenchmarkSigVerify: one ECDSA / Schnorr verification per verifier.
func BenchmarkSigVerify(b *testing.B) {
	kb, msg, pub, der := benchSig()
	bpriv, _ := btcec.PrivKeyFromBytes(kb[:])
	ss, _ := schnorr.Sign(bpriv, msg[:])
	sig := [64]byte(ss.Serialize())
	xonly := [32]byte(schnorr.SerializePubKey(bpriv.PubKey()))
	for _, v := range verifiers() {
		b.Run("ECDSA/"+v.Name(), func(b *testing.B) {
			b.ReportAllocs()
			for n := 0; n < b.N; n++ {
				if !v.VerifyECDSA(pub, der, msg) {
					b.Fatal("verify")
				}
			}
		})
		b.Run("Schnorr/"+v.Name(), func(b *testing.B) {
			b.ReportAllocs()
			for n := 0; n < b.N; n++ {
				if !v.VerifySchnorr(xonly, sig, msg) {
					b.Fatal("verify")
				}
			}
		})
	}
}
