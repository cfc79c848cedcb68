//go:build cgo && !purego

package secp256k1

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// The C library against btcec/decred (pure Go, independent code): the same
// RFC 6979 signatures, the same verdicts on valid and altered signatures,
// and the same taproot tweaks. script's verifier tests and Core's vectors
// run the library through the engine.
func TestAgainstBtcec(t *testing.T) {
	t.Logf("compiled in: %s", Library)
	for i := range 200 {
		seed := sha256.Sum256([]byte(fmt.Sprintf("key %d", i)))
		priv, pub := btcec.PrivKeyFromBytes(seed[:])
		msg := sha256.Sum256([]byte(fmt.Sprintf("msg %d", i)))
		key := priv.Key.Bytes()

		var der [72]byte
		n, ok := SignECDSA(&key, &msg, &der)
		if !ok {
			t.Fatalf("%d: sign failed", i)
		}
		want := ecdsa.Sign(priv, msg[:]).Serialize()
		if !bytes.Equal(der[:n], want) {
			t.Fatalf("%d: DER %x, btcec %x", i, der[:n], want)
		}
		sig, err := ecdsa.ParseDERSignature(want)
		if err != nil {
			t.Fatal(err)
		}
		r, s := sig.R(), sig.S()
		var compact [64]byte
		r.PutBytesUnchecked(compact[:32])
		s.PutBytesUnchecked(compact[32:])
		for _, pk := range [][]byte{pub.SerializeCompressed(), pub.SerializeUncompressed()} {
			if !VerifyECDSA(pk, &compact, &msg) {
				t.Fatalf("%d: valid ECDSA signature rejected", i)
			}
			bad := msg
			bad[i%32] ^= 1 << (i % 8)
			if VerifyECDSA(pk, &compact, &bad) {
				t.Fatalf("%d: ECDSA signature of another message accepted", i)
			}
		}
		// High S verifies too: the library normalizes, as Core's
		// CPubKey::Verify does (low S is policy, not consensus).
		var negS btcec.ModNScalar
		negS.NegateVal(&s)
		high := compact
		negS.PutBytesUnchecked(high[32:])
		if !VerifyECDSA(pub.SerializeCompressed(), &high, &msg) {
			t.Fatalf("%d: high-S form rejected", i)
		}
		if VerifyECDSA(nil, &compact, &msg) || VerifyECDSA(pub.SerializeCompressed()[:32], &compact, &msg) {
			t.Fatalf("%d: malformed key accepted", i)
		}

		ssig, err := schnorr.Sign(priv, msg[:])
		if err != nil {
			t.Fatal(err)
		}
		var xonly [32]byte
		copy(xonly[:], schnorr.SerializePubKey(pub))
		var s64 [64]byte
		copy(s64[:], ssig.Serialize())
		if !VerifySchnorr(&xonly, &s64, &msg) {
			t.Fatalf("%d: valid Schnorr signature rejected", i)
		}
		s64[i%64] ^= 1
		if VerifySchnorr(&xonly, &s64, &msg) {
			t.Fatalf("%d: altered Schnorr signature accepted", i)
		}

		root := sha256.Sum256(seed[:])
		out := txscript.ComputeTaprootOutputKey(pub, root[:])
		tw := taggedHash("TapTweak", xonly[:], root[:])
		var outX [32]byte
		copy(outX[:], schnorr.SerializePubKey(out))
		odd := out.SerializeCompressed()[0] == 0x03
		if !CheckTapTweak(&xonly, &outX, &tw, odd) {
			t.Fatalf("%d: taproot tweak rejected", i)
		}
		if CheckTapTweak(&xonly, &outX, &tw, !odd) {
			t.Fatalf("%d: taproot tweak with the wrong parity accepted", i)
		}
	}
}

// taggedHash is BIP340's tagged hash, written out independently of btcd.
func taggedHash(tag string, parts ...[]byte) [32]byte {
	t := sha256.Sum256([]byte(tag))
	h := sha256.New()
	h.Write(t[:])
	h.Write(t[:])
	for _, p := range parts {
		h.Write(p)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// BenchmarkVerifyECDSA verifies one signature against its key in both
// encodings: the difference is the compressed key's decompression (a field
// square root), which every P2PKH/P2WPKH spend with a compressed key pays.
func BenchmarkVerifyECDSA(b *testing.B) {
	seed := sha256.Sum256([]byte("bench"))
	priv, pub := btcec.PrivKeyFromBytes(seed[:])
	msg := sha256.Sum256([]byte("msg"))
	sig := ecdsa.Sign(priv, msg[:])
	r, s := sig.R(), sig.S()
	var compact [64]byte
	r.PutBytesUnchecked(compact[:32])
	s.PutBytesUnchecked(compact[32:])
	for _, k := range []struct {
		name string
		pk   []byte
	}{{"compressed", pub.SerializeCompressed()}, {"uncompressed", pub.SerializeUncompressed()}} {
		b.Run(k.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !VerifyECDSA(k.pk, &compact, &msg) {
					b.Fatal("rejected")
				}
			}
		})
	}
}
