//go:build cgo && !purego

package script

import "utxod/internal/secp256k1"

// libsecpVerifier is the SigVerifier on libsecp256k1 (cgo; the bundled
// copy unless built with the syssecp256k1 tag, see internal/secp256k1).
type libsecpVerifier struct{}

// Libsecp256k1Verifier returns the libsecp256k1 verifier, or nil when the
// package was built without cgo or with the purego tag.
func Libsecp256k1Verifier() SigVerifier { return libsecpVerifier{} }

// Name is "libsecp256k1" with the compiled-in build, e.g.
// "libsecp256k1 0.6.1-dev (bundled)".
func (libsecpVerifier) Name() string { return secp256k1.Library }

func (libsecpVerifier) VerifyECDSA(pubkey, sig []byte, msg [32]byte) bool {
	if !validPubKeySize(pubkey) {
		return false
	}
	c, ok := ParseDERLax(sig)
	if !ok {
		return false
	}
	return secp256k1.VerifyECDSA(pubkey, &c, &msg)
}

func (libsecpVerifier) VerifySchnorr(pubkey [32]byte, sig [64]byte, msg [32]byte) bool {
	return secp256k1.VerifySchnorr(&pubkey, &sig, &msg)
}

func (libsecpVerifier) CheckTapTweak(internal, output, tweak [32]byte, parity bool) bool {
	return secp256k1.CheckTapTweak(&internal, &output, &tweak, parity)
}
