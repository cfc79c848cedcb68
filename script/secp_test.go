package script

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// verifiers lists every SigVerifier compiled into this build.
func verifiers() []SigVerifier {
	vs := []SigVerifier{DecredVerifier()}
	if v := Libsecp256k1Verifier(); v != nil {
		vs = append(vs, v)
	}
	return vs
}

// derEncode builds a DER signature from big-endian r and s (no hash type).
func derEncode(r, s []byte) []byte {
	trim := func(b []byte) []byte {
		for len(b) > 1 && b[0] == 0 && b[1]&0x80 == 0 {
			b = b[1:]
		}
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	r, s = trim(append([]byte(nil), r...)), trim(append([]byte(nil), s...))
	out := []byte{0x30, byte(4 + len(r) + len(s)), 0x02, byte(len(r))}
	out = append(out, r...)
	out = append(out, 0x02, byte(len(s)))
	return append(out, s...)
}

// ecdsaCase is one input with the result every verifier must give (want
// -1: only agreement is required).
type ecdsaCase struct {
	name string
	pub  []byte
	sig  []byte
	msg  [32]byte
	want int
}

func ecdsaCases(rng *rand.Rand, n int) []ecdsaCase {
	var out []ecdsaCase
	orderBytes := secp256k1.Params().N.FillBytes(make([]byte, 32))
	for k := 0; k < n; k++ {
		var seed [32]byte
		for i := range seed {
			seed[i] = byte(rng.Uint32())
		}
		priv := secp256k1.PrivKeyFromBytes(seed[:])
		var msg [32]byte
		for i := range msg {
			msg[i] = byte(rng.Uint32())
		}
		sig := ecdsa.Sign(priv, msg[:])
		r, s := sig.R(), sig.S()
		rb, sb := r.Bytes(), s.Bytes()
		der := derEncode(rb[:], sb[:])
		pubC := priv.PubKey().SerializeCompressed()
		pubU := priv.PubKey().SerializeUncompressed()
		hybrid := append([]byte(nil), pubU...)
		hybrid[0] = 6 | pubU[64]&1
		badHybrid := append([]byte(nil), hybrid...)
		badHybrid[0] ^= 1
		out = append(out,
			ecdsaCase{"valid compressed", pubC, der, msg, 1},
			ecdsaCase{"valid uncompressed", pubU, der, msg, 1},
			ecdsaCase{"valid hybrid", hybrid, der, msg, 1},
			ecdsaCase{"hybrid wrong parity", badHybrid, der, msg, 0},
			ecdsaCase{"compressed wrong parity", append([]byte{pubC[0] ^ 1}, pubC[1:]...), der, msg, 0},
			ecdsaCase{"truncated key", pubC[:32], der, msg, 0},
			ecdsaCase{"uncompressed header on 33 bytes", append([]byte{4}, pubC[1:]...), der, msg, 0},
		)
		// High S: n - s verifies after normalization.
		var hs secp256k1.ModNScalar
		hs.NegateVal(&s)
		hsb := hs.Bytes()
		out = append(out, ecdsaCase{"high S", pubC, derEncode(rb[:], hsb[:]), msg, 1})
		// Wrong message / key.
		msg2 := msg
		msg2[rng.IntN(32)] ^= 1 << rng.IntN(8)
		out = append(out, ecdsaCase{"wrong msg", pubC, der, msg2, 0})
		// Lax DER forms Core accepts.
		lax := append([]byte{0x30, 0x81, der[1]}, der[2:]...) // long-form sequence length
		out = append(out, ecdsaCase{"long-form seq length", pubC, lax, msg, 1})
		padR := append([]byte(nil), rb[:]...)
		padR = append([]byte{0, 0, 0}, padR...)
		lax2 := []byte{0x30, 0, 0x02, 0x82, 0, byte(len(padR))}
		lax2 = append(lax2, padR...)
		lax2 = append(lax2, der[4+int(der[3]):]...)
		out = append(out, ecdsaCase{"padded R, long-form len", pubC, lax2, msg, 1})
		out = append(out, ecdsaCase{"trailing garbage", pubC, append(append([]byte(nil), der...), 1, 2, 3), msg, 1})
		out = append(out, ecdsaCase{"wrong seq tag", pubC, append([]byte{0x31}, der[1:]...), msg, 0})
		out = append(out, ecdsaCase{"truncated", pubC, der[:len(der)-1], msg, 0})
		out = append(out, ecdsaCase{"empty", pubC, nil, msg, 0})
		// R = n (overflow → zero signature).
		out = append(out, ecdsaCase{"R = n", pubC, derEncode(orderBytes, sb[:]), msg, 0})
		out = append(out, ecdsaCase{"S = 0", pubC, derEncode(rb[:], []byte{0}), msg, 0})
		big := append(bytes.Repeat([]byte{1}, 33), rb[:]...)
		out = append(out, ecdsaCase{"33-byte R", pubC, derEncode(big[:33], sb[:]), msg, 0})
		// Random byte mutations: only agreement is required.
		for m := 0; m < 4; m++ {
			d := append([]byte(nil), der...)
			d[rng.IntN(len(d))] ^= byte(1 + rng.IntN(255))
			out = append(out, ecdsaCase{"mutated sig", pubC, d, msg, -1})
			p := append([]byte(nil), pubC...)
			p[rng.IntN(len(p))] ^= byte(1 + rng.IntN(255))
			out = append(out, ecdsaCase{"mutated key", p, der, msg, -1})
		}
		// Random garbage of random length.
		g := make([]byte, rng.IntN(80))
		for i := range g {
			g[i] = byte(rng.Uint32())
		}
		if len(g) > 0 {
			g[0] = 0x30
		}
		out = append(out, ecdsaCase{"garbage", pubC, g, msg, -1})
	}
	return out
}

func TestSigVerifierECDSAAgreement(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vs := verifiers()
	t.Logf("verifiers: %d", len(vs))
	for _, c := range ecdsaCases(rng, 200) {
		var got []bool
		for _, v := range vs {
			got = append(got, v.VerifyECDSA(c.pub, c.sig, c.msg))
		}
		for i := range got {
			if got[i] != got[0] {
				t.Fatalf("%s: %s=%v %s=%v (pub %x sig %x)", c.name, vs[0].Name(), got[0], vs[i].Name(), got[i], c.pub, c.sig)
			}
		}
		if c.want >= 0 && got[0] != (c.want == 1) {
			t.Fatalf("%s: got %v want %v (pub %x sig %x)", c.name, got[0], c.want == 1, c.pub, c.sig)
		}
	}
}

func TestSigVerifierSchnorrAgreement(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vs := verifiers()
	check := func(name string, pk [32]byte, sig [64]byte, msg [32]byte, want int) {
		t.Helper()
		g0 := vs[0].VerifySchnorr(pk, sig, msg)
		for _, v := range vs[1:] {
			if g := v.VerifySchnorr(pk, sig, msg); g != g0 {
				t.Fatalf("%s: disagreement %v/%v pk %x sig %x", name, g0, g, pk, sig)
			}
		}
		if want >= 0 && g0 != (want == 1) {
			t.Fatalf("%s: got %v", name, g0)
		}
	}
	for k := 0; k < 300; k++ {
		var seed, msg [32]byte
		for i := range seed {
			seed[i] = byte(rng.Uint32())
			msg[i] = byte(rng.Uint32())
		}
		priv, _ := btcec.PrivKeyFromBytes(seed[:])
		s, err := schnorr.Sign(priv, msg[:])
		if err != nil {
			t.Fatal(err)
		}
		var sig [64]byte
		copy(sig[:], s.Serialize())
		var pk [32]byte
		copy(pk[:], schnorr.SerializePubKey(priv.PubKey()))
		check("valid", pk, sig, msg, 1)
		m2 := msg
		m2[rng.IntN(32)] ^= 1
		check("wrong msg", pk, sig, m2, 0)
		s2 := sig
		s2[rng.IntN(64)] ^= byte(1 + rng.IntN(255))
		check("mutated sig", pk, s2, msg, 0)
		p2 := pk
		p2[rng.IntN(32)] ^= byte(1 + rng.IntN(255))
		check("mutated key", p2, sig, msg, 0)
		s3 := sig
		for i := 32; i < 64; i++ {
			s3[i] = 0xff
		}
		check("s >= n", pk, s3, msg, 0)
		s4 := sig
		for i := 0; i < 32; i++ {
			s4[i] = 0xff
		}
		check("r >= p", pk, s4, msg, 0)
		var p3 [32]byte
		for i := range p3 {
			p3[i] = 0xff
		}
		check("key >= p", p3, sig, msg, 0)
	}
}

func TestSigVerifierTapTweakAgreement(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vs := verifiers()
	for k := 0; k < 200; k++ {
		var seed, root [32]byte
		for i := range seed {
			seed[i] = byte(rng.Uint32())
			root[i] = byte(rng.Uint32())
		}
		priv, _ := btcec.PrivKeyFromBytes(seed[:])
		var internal [32]byte
		copy(internal[:], schnorr.SerializePubKey(priv.PubKey()))
		h := sha256.New()
		h.Write(tagTapTweak[:])
		h.Write(internal[:])
		h.Write(root[:])
		var tweak [32]byte
		h.Sum(tweak[:0])
		var tw secp256k1.ModNScalar
		tw.SetBytes(&tweak)
		var p, tg, q secp256k1.JacobianPoint
		liftX(&internal, &p)
		secp256k1.ScalarBaseMultNonConst(&tw, &tg)
		secp256k1.AddNonConst(&p, &tg, &q)
		q.ToAffine()
		var out [32]byte
		q.X.PutBytes(&out)
		parity := q.Y.IsOdd()
		cases := []struct {
			in, out, tw [32]byte
			par         bool
			want        int
		}{
			{internal, out, tweak, parity, 1},
			{internal, out, tweak, !parity, 0},
			{internal, root, tweak, parity, 0},
			{root, out, tweak, parity, -1},
		}
		var big [32]byte
		for i := range big {
			big[i] = 0xff
		}
		cases = append(cases, struct {
			in, out, tw [32]byte
			par         bool
			want        int
		}{internal, out, big, parity, 0})
		for ci, c := range cases {
			g0 := vs[0].CheckTapTweak(c.in, c.out, c.tw, c.par)
			for _, v := range vs[1:] {
				if g := v.CheckTapTweak(c.in, c.out, c.tw, c.par); g != g0 {
					t.Fatalf("case %d: disagreement", ci)
				}
			}
			if c.want >= 0 && g0 != (c.want == 1) {
				t.Fatalf("case %d: got %v", ci, g0)
			}
		}
	}
}

func TestCheckLowS(t *testing.T) {
	lo := derEncode(bytes.Repeat([]byte{1}, 32), halfOrder[:])
	if !CheckLowS(lo) {
		t.Error("S = n/2 must be low")
	}
	hi := append([]byte(nil), halfOrder[:]...)
	hi[31]++
	if CheckLowS(derEncode(bytes.Repeat([]byte{1}, 32), hi)) {
		t.Error("S = n/2+1 must be high")
	}
	if CheckLowS([]byte{0x31}) {
		t.Error("unparsable must not be low")
	}
}
