package script

import (
	"crypto/sha256"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// SigVerifier is the elliptic-curve back end of the script engine: the
// three secp256k1 operations Core's interpreter needs. Implementations are
// stateless and safe for concurrent use.
//
// Two implementations exist: libsecp256k1 through cgo (the default when
// built with cgo and without the purego tag; see Libsecp256k1Verifier) and
// decred's pure-Go secp256k1 (DecredVerifier). Both take the same inputs and
// must give the same answers.
type SigVerifier interface {
	// Name identifies the implementation ("decred", or "libsecp256k1 …"
	// with the compiled-in build).
	Name() string
	// VerifyECDSA is Core's CPubKey::Verify (src/pubkey.cpp): pubkey is a
	// serialized public key (33 bytes 02/03, or 65 bytes 04/06/07; any
	// other size or header fails), sig the DER signature without its
	// hash-type byte. The signature is parsed with the lax DER parser
	// (ParseDERLax: every BER-ish encoding Core accepted before BIP66; an
	// out-of-range R or S becomes an invalid all-zero signature) and
	// normalized to low S before verification, exactly as Core does; the
	// strict-DER and LOW_S rules are the interpreter's business.
	VerifyECDSA(pubkey, sig []byte, msg [32]byte) bool
	// VerifySchnorr is BIP340 verification (XOnlyPubKey::VerifySchnorr):
	// false when pubkey is not an x coordinate on the curve.
	VerifySchnorr(pubkey [32]byte, sig [64]byte, msg [32]byte) bool
	// CheckTapTweak is XOnlyPubKey::CheckTapTweak after the tweak hash:
	// internal parses as an x-only key, tweak is below the group order, and
	// internal + tweak·G has x coordinate output and the given y parity
	// (secp256k1_xonly_pubkey_tweak_add_check).
	CheckTapTweak(internal, output, tweak [32]byte, parity bool) bool
}

// DefaultSigVerifier returns the verifier engines use unless told
// otherwise: libsecp256k1 when it is compiled in, else decred.
func DefaultSigVerifier() SigVerifier {
	if v := Libsecp256k1Verifier(); v != nil {
		return v
	}
	return DecredVerifier()
}

// ParseDERLax is Core's ecdsa_signature_parse_der_lax (src/pubkey.cpp, the
// libsecp256k1 contrib/lax_der_parsing.c parser): it returns R||S as 64
// big-endian bytes. ok is false when the input is not even loosely DER; an
// R or S longer than 32 significant bytes or not below the group order
// yields the all-zero (invalid but parsed) signature, as in Core.
func ParseDERLax(in []byte) (compact [64]byte, ok bool) {
	n := len(in)
	pos := 0
	if pos == n || in[pos] != 0x30 {
		return compact, false
	}
	pos++
	if pos == n {
		return compact, false
	}
	lenbyte := int(in[pos])
	pos++
	if lenbyte&0x80 != 0 {
		lenbyte -= 0x80
		if lenbyte > n-pos {
			return compact, false
		}
		pos += lenbyte
	}
	readInt := func() (start, length int, ok bool) {
		if pos == n || in[pos] != 0x02 {
			return 0, 0, false
		}
		pos++
		if pos == n {
			return 0, 0, false
		}
		lb := int(in[pos])
		pos++
		var l int
		if lb&0x80 != 0 {
			lb -= 0x80
			if lb > n-pos {
				return 0, 0, false
			}
			for lb > 0 && in[pos] == 0 {
				pos++
				lb--
			}
			if lb >= 4 {
				return 0, 0, false
			}
			for lb > 0 {
				l = l<<8 + int(in[pos])
				pos++
				lb--
			}
		} else {
			l = lb
		}
		if l > n-pos {
			return 0, 0, false
		}
		start = pos
		pos += l
		return start, l, true
	}
	rpos, rlen, ok1 := readInt()
	if !ok1 {
		return compact, false
	}
	spos, slen, ok2 := readInt()
	if !ok2 {
		return compact, false
	}
	for rlen > 0 && in[rpos] == 0 {
		rlen--
		rpos++
	}
	overflow := false
	if rlen > 32 {
		overflow = true
	} else {
		copy(compact[32-rlen:32], in[rpos:rpos+rlen])
	}
	for slen > 0 && in[spos] == 0 {
		slen--
		spos++
	}
	if slen > 32 {
		overflow = true
	} else {
		copy(compact[64-slen:], in[spos:spos+slen])
	}
	if !overflow {
		var r, s secp256k1.ModNScalar
		if r.SetBytes((*[32]byte)(compact[:32])) != 0 || s.SetBytes((*[32]byte)(compact[32:])) != 0 {
			overflow = true
		}
	}
	if overflow {
		compact = [64]byte{}
	}
	return compact, true
}

// halfOrder is (n-1)/2 big-endian, the largest low S.
var halfOrder = [32]byte{
	0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4, 0x50, 0x1d, 0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0,
}

// CheckLowS is Core's CPubKey::CheckLowS: sig (DER, without hash type)
// parses laxly and its S is at most n/2 (an overflowing, zeroed signature
// counts as low).
func CheckLowS(sig []byte) bool {
	c, ok := ParseDERLax(sig)
	if !ok {
		return false
	}
	for i := 0; i < 32; i++ {
		if c[32+i] != halfOrder[i] {
			return c[32+i] < halfOrder[i]
		}
	}
	return true
}

// pubKeyLen is CPubKey::GetLen: the serialized size a header byte implies.
func pubKeyLen(h byte) int {
	switch h {
	case 2, 3:
		return 33
	case 4, 6, 7:
		return 65
	}
	return 0
}

// validPubKeySize is CPubKey::IsValid after construction from bytes.
func validPubKeySize(pk []byte) bool {
	return len(pk) > 0 && pubKeyLen(pk[0]) == len(pk)
}

// decredVerifier is the pure-Go SigVerifier on decred's secp256k1.
type decredVerifier struct{}

// DecredVerifier returns the pure-Go verifier (decred dcrec/secp256k1/v4).
func DecredVerifier() SigVerifier { return decredVerifier{} }

func (decredVerifier) Name() string { return "decred" }

// parsePubKey is secp256k1_ec_pubkey_parse into Jacobian form.
func parsePubKey(pk []byte, out *secp256k1.JacobianPoint) bool {
	if !validPubKeySize(pk) {
		return false
	}
	var x, y secp256k1.FieldVal
	if x.SetBytes((*[32]byte)(pk[1:33])) != 0 {
		return false
	}
	if len(pk) == 33 {
		if !secp256k1.DecompressY(&x, pk[0] == 3, &y) {
			return false
		}
	} else {
		if y.SetBytes((*[32]byte)(pk[33:65])) != 0 {
			return false
		}
		if pk[0] != 4 && y.IsOdd() != (pk[0] == 7) {
			return false
		}
		// y² = x³ + 7
		var lhs, rhs secp256k1.FieldVal
		lhs.SquareVal(&y).Normalize()
		rhs.SquareVal(&x).Mul(&x).AddInt(7).Normalize()
		if !lhs.Equals(&rhs) {
			return false
		}
	}
	out.X, out.Y = x, y
	out.Z.SetInt(1)
	return true
}

func (decredVerifier) VerifyECDSA(pubkey, sig []byte, msg [32]byte) bool {
	var q secp256k1.JacobianPoint
	if !parsePubKey(pubkey, &q) {
		return false
	}
	c, ok := ParseDERLax(sig)
	if !ok {
		return false
	}
	var r, s secp256k1.ModNScalar
	r.SetBytes((*[32]byte)(c[:32]))
	s.SetBytes((*[32]byte)(c[32:]))
	if r.IsZero() || s.IsZero() {
		return false
	}
	// ECDSA verification (SEC1 4.1.4) accepts S and n-S alike, so Core's
	// normalization is implicit here. Written on decred's primitives
	// rather than ecdsa.Signature.Verify, which allocates.
	var e, w, u1, u2 secp256k1.ModNScalar
	e.SetBytes(&msg)
	w.InverseValNonConst(&s)
	u1.Mul2(&e, &w)
	u2.Mul2(&r, &w)
	var u1G, u2Q, x secp256k1.JacobianPoint
	secp256k1.ScalarBaseMultNonConst(&u1, &u1G)
	secp256k1.ScalarMultNonConst(&u2, &q, &u2Q)
	secp256k1.AddNonConst(&u1G, &u2Q, &x)
	if (x.X.IsZero() && x.Y.IsZero()) || x.Z.IsZero() {
		return false
	}
	x.ToAffine()
	var xb [32]byte
	x.X.PutBytes(&xb)
	var xn secp256k1.ModNScalar
	xn.SetBytes(&xb) // x mod n
	return xn.Equals(&r)
}

// liftX is BIP340's lift_x: the point with x coordinate x and even y.
func liftX(xb *[32]byte, out *secp256k1.JacobianPoint) bool {
	var x, y secp256k1.FieldVal
	if x.SetBytes(xb) != 0 {
		return false
	}
	if !secp256k1.DecompressY(&x, false, &y) {
		return false
	}
	out.X, out.Y = x, y
	out.Z.SetInt(1)
	return true
}

// Precomputed BIP340 tag prefixes (SHA256(tag) twice).
var (
	tagChallenge  = taggedPrefix("BIP0340/challenge")
	tagTapLeaf    = taggedPrefix("TapLeaf")
	tagTapBranch  = taggedPrefix("TapBranch")
	tagTapTweak   = taggedPrefix("TapTweak")
	tagTapSighash = taggedPrefix("TapSighash")
)

func taggedPrefix(tag string) [64]byte {
	h := sha256.Sum256([]byte(tag))
	var p [64]byte
	copy(p[:32], h[:])
	copy(p[32:], h[:])
	return p
}

func (decredVerifier) VerifySchnorr(pubkey [32]byte, sig [64]byte, msg [32]byte) bool {
	var p secp256k1.JacobianPoint
	if !liftX(&pubkey, &p) {
		return false
	}
	var rx secp256k1.FieldVal
	if rx.SetBytes((*[32]byte)(sig[:32])) != 0 {
		return false
	}
	var s secp256k1.ModNScalar
	if s.SetBytes((*[32]byte)(sig[32:])) != 0 {
		return false
	}
	var buf [64 + 96]byte
	copy(buf[:64], tagChallenge[:])
	copy(buf[64:96], sig[:32])
	copy(buf[96:128], pubkey[:])
	copy(buf[128:], msg[:])
	eh := sha256.Sum256(buf[:])
	var e secp256k1.ModNScalar
	e.SetBytes(&eh)
	// R = s·G - e·P
	e.Negate()
	var sG, eP, r secp256k1.JacobianPoint
	secp256k1.ScalarBaseMultNonConst(&s, &sG)
	secp256k1.ScalarMultNonConst(&e, &p, &eP)
	secp256k1.AddNonConst(&sG, &eP, &r)
	if (r.X.IsZero() && r.Y.IsZero()) || r.Z.IsZero() {
		return false
	}
	r.ToAffine()
	if r.Y.IsOdd() {
		return false
	}
	return r.X.Equals(&rx)
}

func (decredVerifier) CheckTapTweak(internal, output, tweak [32]byte, parity bool) bool {
	var p secp256k1.JacobianPoint
	if !liftX(&internal, &p) {
		return false
	}
	var t secp256k1.ModNScalar
	if t.SetBytes(&tweak) != 0 {
		return false
	}
	var tG, q secp256k1.JacobianPoint
	secp256k1.ScalarBaseMultNonConst(&t, &tG)
	secp256k1.AddNonConst(&p, &tG, &q)
	if (q.X.IsZero() && q.Y.IsZero()) || q.Z.IsZero() {
		return false
	}
	q.ToAffine()
	var ox secp256k1.FieldVal
	if ox.SetBytes(&output) != 0 {
		return false
	}
	return q.X.Equals(&ox) && q.Y.IsOdd() == parity
}
