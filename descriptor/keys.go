package descriptor

import (
	"crypto/sha256"
	"hash"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // Bitcoin's HASH160 needs RIPEMD-160
)

// hash160 is Core's Hash160: RIPEMD-160 of SHA-256, the key ID of a public
// key and the script ID of a script.
func hash160(b []byte) [20]byte {
	s := sha256.Sum256(b)
	r := ripemd160.New()
	r.Write(s[:])
	var out [20]byte
	copy(out[:], r.Sum(nil))
	return out
}

func newRipemd() hash.Hash { return ripemd160.New() }

// validSize is CPubKey::ValidSize: a length matching the header byte.
func validSize(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	switch k[0] {
	case 2, 3:
		return len(k) == 33
	case 4, 6, 7:
		return len(k) == 65
	}
	return false
}

// validNonHybrid is CPubKey::IsValidNonHybrid: a 02/03/04 header with the
// matching length (the point itself is not checked).
func validNonHybrid(k []byte) bool {
	return validSize(k) && (k[0] == 2 || k[0] == 3 || k[0] == 4)
}

// fullyValid is CPubKey::IsFullyValid: libsecp256k1 parses it (a point on
// the curve; hybrid 06/07 keys included, as libsecp256k1 accepts them).
func fullyValid(k []byte) bool {
	if !validSize(k) {
		return false
	}
	_, err := secp256k1.ParsePubKey(k)
	return err == nil
}

// xOnlyFullyValid is XOnlyPubKey::IsFullyValid: x is the x coordinate of a
// point on the curve.
func xOnlyFullyValid(x []byte) bool {
	if len(x) != 32 {
		return false
	}
	_, err := secp256k1.ParsePubKey(append([]byte{2}, x...))
	return err == nil
}

// tweakAdd returns P + t·G compressed, the BIP32 public child step
// (secp256k1_ec_pubkey_tweak_add). It fails when t is not below the group
// order or the sum is the point at infinity.
func tweakAdd(pub []byte, t []byte) ([]byte, bool) {
	p, err := secp256k1.ParsePubKey(pub)
	if err != nil {
		return nil, false
	}
	var k secp256k1.ModNScalar
	if overflow := k.SetByteSlice(t); overflow {
		return nil, false
	}
	var tg, pj, sum secp256k1.JacobianPoint
	secp256k1.ScalarBaseMultNonConst(&k, &tg)
	p.AsJacobian(&pj)
	secp256k1.AddNonConst(&pj, &tg, &sum)
	if (sum.X.IsZero() && sum.Y.IsZero()) || sum.Z.IsZero() {
		return nil, false
	}
	sum.ToAffine()
	return secp256k1.NewPublicKey(&sum.X, &sum.Y).SerializeCompressed(), true
}

// privTweakAdd returns k + t mod n (secp256k1_ec_seckey_tweak_add), failing
// when t is not below the order or the result is zero.
func privTweakAdd(priv, t []byte) ([]byte, bool) {
	var k, tw secp256k1.ModNScalar
	if k.SetByteSlice(priv) || tw.SetByteSlice(t) {
		return nil, false
	}
	k.Add(&tw)
	if k.IsZero() {
		return nil, false
	}
	b := k.Bytes()
	return b[:], true
}

// privValid is CKey::Check: 0 < k < n.
func privValid(priv []byte) bool {
	var k secp256k1.ModNScalar
	return len(priv) == 32 && !k.SetByteSlice(priv) && !k.IsZero()
}

// pubFromPriv is the compressed public key of priv.
func pubFromPriv(priv []byte) []byte {
	return secp256k1.PrivKeyFromBytes(priv).PubKey().SerializeCompressed()
}

// taggedHash is BIP340's tagged hash.
func taggedHash(tag string, msg ...[]byte) [32]byte {
	t := sha256.Sum256([]byte(tag))
	h := sha256.New()
	h.Write(t[:])
	h.Write(t[:])
	for _, m := range msg {
		h.Write(m)
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// taprootOutput is XOnlyPubKey::CreateTapTweak with no script tree
// (BIP341's taproot_output_script without scripts, BIP86): the x-only key
// of P + H_TapTweak(P)·G, where P is the even point with x coordinate x.
func taprootOutput(x []byte) ([32]byte, bool) {
	var out [32]byte
	t := taggedHash("TapTweak", x)
	q, ok := tweakAdd(append([]byte{2}, x...), t[:])
	if !ok {
		return out, false
	}
	copy(out[:], q[1:])
	return out, true
}
