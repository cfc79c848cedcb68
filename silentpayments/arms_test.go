package silentpayments

import (
	"fmt"
	"math/rand/v2"
	"testing"

	libsecp "utxod/internal/secp256k1"
	"utxod/wire"
)

// armsAgree runs the tweak arithmetic on keys through both arms and fails
// on any difference; it returns decred's result. Without libsecp256k1
// (purego or no cgo) only decred's arm runs, and libsecp's must refuse.
func armsAgree(t testing.TB, what string, keys [][33]byte, smallest *[outpointSize]byte) ([33]byte, bool) {
	t.Helper()
	want, wantOK := tweakDecred(keys, smallest)
	got, ok := tweakLibsecp(keys, smallest)
	if libsecp.Library == "" {
		if ok {
			t.Fatalf("%s: libsecp arm answered in a build without it", what)
		}
		return want, wantOK
	}
	if ok != wantOK || got != want {
		t.Fatalf("%s: libsecp256k1 %x %v, decred %x %v (keys %x)", what, got, ok, want, wantOK, keys)
	}
	return want, wantOK
}

// TestTweakArmsAgree: libsecp256k1's arm and decred's give the same tweak
// (and the same ok) on every BIP352 receiving vector and on random key
// sets: compressed keys of either parity, x-only taproot keys whose point
// has odd Y (taken as even), sums to infinity (also midway), keys that do
// not parse (not on the curve, x not below p), many keys (beyond the C
// side's stack arrays), and none.
func TestTweakArmsAgree(t *testing.T) {
	t.Logf("libsecp256k1: %q", libsecp.Library)
	n := 0
	for ci, c := range loadVectors(t) {
		for ri, v := range c.Receiving {
			raw, prevouts := buildVectorTx(t, v.Given.Vin, v.Given.Outputs)
			tx, err := wire.ParseTx(raw)
			if err != nil {
				t.Fatal(err)
			}
			keys, smallest, ok := inputKeys(tx, prevouts, nil)
			if !ok {
				continue
			}
			tweak, ok := armsAgree(t, fmt.Sprintf("vector %d/%d %q", ci, ri, c.Comment), keys, &smallest)
			if got, gotOK, _ := ComputeTweak(tx, prevouts); got != tweak || gotOK != ok {
				t.Fatalf("vector %d/%d: ComputeTweak %x %v, arms %x %v", ci, ri, got, gotOK, tweak, ok)
			}
			n++
		}
	}

	rng := rand.New(rand.NewPCG(352, 1))
	key := func() [33]byte {
		k := newKey(rng.Uint32())
		return serP(&k.pub)
	}
	var notOnCurve, overP [33]byte
	notOnCurve[0], notOnCurve[32] = 0x02, 5 // 5^3 + 7 is not a square mod p
	overP[0] = 0x03
	for i := 1; i < 33; i++ {
		overP[i] = 0xff
	}
	odds := 0
	for i := range 2000 {
		var smallest [outpointSize]byte
		for j := range smallest {
			smallest[j] = byte(rng.Uint32())
		}
		var keys [][33]byte
		m := 1 + rng.IntN(6)
		if i%50 == 0 {
			m = 40 + rng.IntN(60)
		}
		for range m {
			b := key()
			if rng.IntN(3) == 0 { // x-only: the taproot output key, even Y
				if b[0] == 0x03 {
					odds++
				}
				b[0] = 0x02
			}
			keys = append(keys, b)
		}
		switch i % 10 {
		case 0: // sum to infinity: append the negation of the sum so far
			if A, ok := sumKeys(keys); ok {
				neg := serP(&A)
				neg[0] ^= 1
				keys = append(keys, neg)
			}
		case 1: // infinity midway, then one more key
			neg := keys[0]
			neg[0] ^= 1
			keys = append(keys, neg, key())
		case 2:
			keys = append(keys, notOnCurve)
			keys[0] = overP
		case 3:
			keys = [][33]byte{notOnCurve, overP}
		case 4:
			keys = nil
		}
		_, ok := armsAgree(t, fmt.Sprintf("random set %d", i), keys, &smallest)
		if i%10 == 0 && ok {
			t.Fatalf("random set %d: a sum to infinity gave a tweak", i)
		}
		n++
	}
	t.Logf("%d key sets agree (%d odd-Y x-only keys)", n, odds)
}
