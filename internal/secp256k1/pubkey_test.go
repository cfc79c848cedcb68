//go:build cgo && !purego

package secp256k1

import (
	"crypto/sha256"
	"fmt"
	"testing"

	dsecp "github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// decredSum is the reference for PubkeyCombine: keys that do not parse as
// compressed points are skipped; false at infinity or with no key.
func decredSum(pubs [][33]byte) ([33]byte, *dsecp.JacobianPoint, bool) {
	var sum, p dsecp.JacobianPoint
	n := 0
	for _, b := range pubs {
		k, err := dsecp.ParsePubKey(b[:])
		if err != nil {
			continue
		}
		k.AsJacobian(&p)
		dsecp.AddNonConst(&sum, &p, &sum)
		n++
	}
	var out [33]byte
	if n == 0 || (sum.X.IsZero() && sum.Y.IsZero()) || sum.Z.IsZero() {
		return out, nil, false
	}
	sum.ToAffine()
	copy(out[:], dsecp.NewPublicKey(&sum.X, &sum.Y).SerializeCompressed())
	return out, &sum, true
}

func decredMul(a *dsecp.JacobianPoint, tweak *[32]byte) ([33]byte, bool) {
	var s dsecp.ModNScalar
	var out [33]byte
	if s.SetBytes(tweak) != 0 || s.IsZero() {
		return out, false
	}
	var t dsecp.JacobianPoint
	dsecp.ScalarMultNonConst(&s, a, &t)
	t.ToAffine()
	copy(out[:], dsecp.NewPublicKey(&t.X, &t.Y).SerializeCompressed())
	return out, true
}

func TestPubkeyCombineTweakMulAgainstDecred(t *testing.T) {
	key := func(i int) [33]byte {
		seed := sha256.Sum256([]byte(fmt.Sprintf("combine %d", i)))
		var k [33]byte
		copy(k[:], dsecp.PrivKeyFromBytes(seed[:]).PubKey().SerializeCompressed())
		return k
	}
	neg := func(k [33]byte) [33]byte { k[0] ^= 1; return k }
	xonly := func(k [33]byte) [33]byte { k[0] = 0x02; return k }
	var notOnCurve, overP [33]byte
	notOnCurve[0] = 0x02
	notOnCurve[32] = 5 // x = 5: 5^3+7 = 132 is not a square mod p
	overP[0] = 0x03
	for i := 1; i < 33; i++ {
		overP[i] = 0xff
	}
	hybrid := key(9)
	hybrid[0] = 0x06

	cases := [][][33]byte{
		nil,
		{key(1)},
		{key(1), key(2)},
		{key(1), neg(key(1))},         // infinity
		{key(1), neg(key(1)), key(3)}, // infinity midway
		{key(1), key(2), neg(key(2)), neg(key(1))},
		{xonly(key(4)), xonly(key(5)), key(6)}, // odd-Y keys taken as even
		{notOnCurve, overP, hybrid},            // none parses
		{notOnCurve, key(7), overP, hybrid, key(8)},
	}
	var many [][33]byte
	for i := range 100 { // above the C side's stack arrays
		many = append(many, key(100+i))
		if i%7 == 0 {
			many = append(many, notOnCurve)
		}
	}
	cases = append(cases, many, append(many, neg(key(150))))
	for i := range 200 {
		var c [][33]byte
		for j := range 1 + i%5 {
			k := key(1000 + 10*i + j)
			if (i+j)%3 == 0 {
				k = xonly(k)
			}
			c = append(c, k)
		}
		if i%10 == 0 { // a sum to infinity
			c = append(c, neg(key(1000+10*i)))
			c[0] = key(1000 + 10*i)
		}
		cases = append(cases, c)
	}

	for i, c := range cases {
		var sum Pubkey
		got, ok := PubkeyCombine(c, &sum)
		want, a, wantOK := decredSum(c)
		if ok != wantOK || got != want {
			t.Fatalf("case %d: combine %x %v, decred %x %v", i, got, ok, want, wantOK)
		}
		if !ok {
			if sum != (Pubkey{}) {
				t.Fatalf("case %d: sum not zeroed", i)
			}
			if _, ok := PubkeyTweakMul(&sum, &[32]byte{1}); ok {
				t.Fatalf("case %d: tweak of the zero Pubkey", i)
			}
			continue
		}
		before := sum
		for j := range 3 {
			tweak := sha256.Sum256([]byte(fmt.Sprintf("tweak %d %d", i, j)))
			got, ok := PubkeyTweakMul(&sum, &tweak)
			want, wantOK := decredMul(a, &tweak)
			if ok != wantOK || got != want {
				t.Fatalf("case %d: tweak %x %v, decred %x %v", i, got, ok, want, wantOK)
			}
		}
		if sum != before {
			t.Fatalf("case %d: PubkeyTweakMul modified its key", i)
		}
		// Scalars the library refuses: zero, the group order, 2^256-1.
		n := [32]byte{
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
			0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41,
		}
		var ones [32]byte
		for k := range ones {
			ones[k] = 0xff
		}
		for _, bad := range []*[32]byte{{}, &n, &ones} {
			if _, ok := PubkeyTweakMul(&sum, bad); ok {
				t.Fatalf("case %d: tweak %x accepted", i, *bad)
			}
		}
		one := [32]byte{31: 1}
		if got, ok := PubkeyTweakMul(&sum, &one); !ok || got != want {
			t.Fatalf("case %d: 1·A = %x, A = %x", i, got, want)
		}
	}
}
