//go:build cgo && !purego

package secp256k1

/*
#cgo noescape utxod_ecdsa_verify
#cgo nocallback utxod_ecdsa_verify
#cgo noescape utxod_schnorr_verify
#cgo nocallback utxod_schnorr_verify
#cgo noescape utxod_taptweak_check
#cgo nocallback utxod_taptweak_check
#cgo noescape utxod_ecdsa_sign
#cgo nocallback utxod_ecdsa_sign
#include <stddef.h>
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

// One context for the whole process, created at init and never randomized
// or destroyed: verification needs no blinding, and the signer only signs
// the generator's throwaway test keys.
static secp256k1_context *utxod_ctx;

static void utxod_init(void) {
	utxod_ctx = secp256k1_context_create(SECP256K1_CONTEXT_VERIFY);
}

// sig64 is R||S from the lax DER parser (zeroed when it overflowed). The
// signature is normalized to low S first, as Core's CPubKey::Verify does.
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

// RFC 6979 nonce (libsecp256k1's default), low S, DER into out (72 bytes).
static int utxod_ecdsa_sign(const unsigned char *seckey, const unsigned char *msg32,
                            unsigned char *out, size_t *outlen) {
	secp256k1_ecdsa_signature sig;
	if (!secp256k1_ecdsa_sign(utxod_ctx, &sig, msg32, seckey, NULL, NULL)) return 0;
	return secp256k1_ecdsa_signature_serialize_der(utxod_ctx, out, outlen, &sig);
}
*/
import "C"

import "unsafe"

func init() { C.utxod_init() }

func uc(p *byte) *C.uchar { return (*C.uchar)(unsafe.Pointer(p)) }

// VerifyECDSA verifies the compact signature sig (R||S, big-endian; S is
// normalized to low S first) of msg under the serialized public key pub
// (33 or 65 bytes; anything else fails to parse).
func VerifyECDSA(pub []byte, sig *[64]byte, msg *[32]byte) bool {
	if len(pub) == 0 {
		return false
	}
	return C.utxod_ecdsa_verify(uc(&pub[0]), C.size_t(len(pub)), uc(&sig[0]), uc(&msg[0])) == 1
}

// VerifySchnorr is BIP340 verification of sig on the 32-byte msg under the
// x-only key pub.
func VerifySchnorr(pub *[32]byte, sig *[64]byte, msg *[32]byte) bool {
	return C.utxod_schnorr_verify(uc(&pub[0]), uc(&sig[0]), uc(&msg[0])) == 1
}

// CheckTapTweak reports whether output (with the given parity) is the
// x-only key internal tweaked by tweak (BIP341's taproot commitment).
func CheckTapTweak(internal, output, tweak *[32]byte, parity bool) bool {
	p := C.int(0)
	if parity {
		p = 1
	}
	return C.utxod_taptweak_check(uc(&internal[0]), uc(&output[0]), uc(&tweak[0]), p) == 1
}

// SignECDSA signs msg with the 32-byte secret key (RFC 6979 nonce, low S)
// and writes the DER signature into out, returning its length; false when
// the key is invalid (zero or not below the group order).
func SignECDSA(seckey *[32]byte, msg *[32]byte, out *[72]byte) (int, bool) {
	n := C.size_t(len(out))
	if C.utxod_ecdsa_sign(uc(&seckey[0]), uc(&msg[0]), uc(&out[0]), &n) == 0 {
		return 0, false
	}
	return int(n), true
}
