//go:build cgo && !purego

package script

/*
#cgo pkg-config: libsecp256k1
#cgo noescape utxod_ecdsa_verify
#cgo nocallback utxod_ecdsa_verify
#cgo noescape utxod_schnorr_verify
#cgo nocallback utxod_schnorr_verify
#cgo noescape utxod_taptweak_check
#cgo nocallback utxod_taptweak_check
#include <stddef.h>
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

// One verify-capable context for the whole process, created at init and
// never randomized or destroyed (verification needs no blinding).
static secp256k1_context *utxod_ctx;

static void utxod_init(void) {
	utxod_ctx = secp256k1_context_create(SECP256K1_CONTEXT_VERIFY);
}

// sig64 is R||S from the lax DER parser (zeroed when it overflowed).
static int utxod_ecdsa_verify(const unsigned char *pub, size_t publen,
                              const unsigned char *sig64, const unsigned char *msg32) {
	secp256k1_pubkey pk;
	secp256k1_ecdsa_signature sig;
	if (!secp256k1_ec_pubkey_parse(utxod_ctx, &pk, pub, publen)) return 0;
	if (!secp256k1_ecdsa_signature_parse_compact(utxod_ctx, &sig, sig64)) return 0;
	secp256k1_ecdsa_signature_normalize(utxod_ctx, &sig, &sig);
	return secp256k1_ecdsa_verify(utxod_ctx, &sig, msg32, &pk);
}

static int utxod_schnorr_verify(const unsigned char *pub32, const unsigned char *sig64,
                                const unsigned char *msg32) {
	secp256k1_xonly_pubkey pk;
	if (!secp256k1_xonly_pubkey_parse(utxod_ctx, &pk, pub32)) return 0;
	return secp256k1_schnorrsig_verify(utxod_ctx, sig64, msg32, 32, &pk);
}

static int utxod_taptweak_check(const unsigned char *internal32, const unsigned char *output32,
                                const unsigned char *tweak32, int parity) {
	secp256k1_xonly_pubkey pk;
	if (!secp256k1_xonly_pubkey_parse(utxod_ctx, &pk, internal32)) return 0;
	return secp256k1_xonly_pubkey_tweak_add_check(utxod_ctx, output32, parity, &pk, tweak32);
}
*/
import "C"

import "unsafe"

func init() { C.utxod_init() }

// libsecpVerifier is the SigVerifier on libsecp256k1 (cgo).
type libsecpVerifier struct{}

// Libsecp256k1Verifier returns the libsecp256k1 verifier, or nil when the
// package was built without cgo or with the purego tag.
func Libsecp256k1Verifier() SigVerifier { return libsecpVerifier{} }

func (libsecpVerifier) Name() string { return "libsecp256k1" }

func (libsecpVerifier) VerifyECDSA(pubkey, sig []byte, msg [32]byte) bool {
	if !validPubKeySize(pubkey) {
		return false
	}
	c, ok := ParseDERLax(sig)
	if !ok {
		return false
	}
	return C.utxod_ecdsa_verify((*C.uchar)(unsafe.Pointer(&pubkey[0])), C.size_t(len(pubkey)),
		(*C.uchar)(unsafe.Pointer(&c[0])), (*C.uchar)(unsafe.Pointer(&msg[0]))) == 1
}

func (libsecpVerifier) VerifySchnorr(pubkey [32]byte, sig [64]byte, msg [32]byte) bool {
	return C.utxod_schnorr_verify((*C.uchar)(unsafe.Pointer(&pubkey[0])),
		(*C.uchar)(unsafe.Pointer(&sig[0])), (*C.uchar)(unsafe.Pointer(&msg[0]))) == 1
}

func (libsecpVerifier) CheckTapTweak(internal, output, tweak [32]byte, parity bool) bool {
	p := C.int(0)
	if parity {
		p = 1
	}
	return C.utxod_taptweak_check((*C.uchar)(unsafe.Pointer(&internal[0])),
		(*C.uchar)(unsafe.Pointer(&output[0])), (*C.uchar)(unsafe.Pointer(&tweak[0])), p) == 1
}
