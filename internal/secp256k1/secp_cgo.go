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
#cgo noescape utxod_pubkey_combine
#cgo nocallback utxod_pubkey_combine
#cgo noescape utxod_pubkey_tweak_mul
#cgo nocallback utxod_pubkey_tweak_mul
#include <stddef.h>
#include <stdlib.h>
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

// Parses the n 33-byte compressed keys at keys33, skipping those that do
// not parse, and adds the others: sum (secp256k1_pubkey) and its compressed
// serialization out33. 0 when no key parses or the sum is infinity (the
// library then zeroes sum). Up to 32 keys live on the stack, more in
// malloc'd arrays.
static int utxod_pubkey_combine(const unsigned char *keys33, size_t n,
                                secp256k1_pubkey *sum, unsigned char *out33) {
	secp256k1_pubkey stack_pk[32];
	const secp256k1_pubkey *stack_ptr[32];
	secp256k1_pubkey *pk = stack_pk;
	const secp256k1_pubkey **ptr = stack_ptr;
	size_t i, m = 0, len = 33;
	int ok = 0;
	if (n > 32) {
		pk = malloc(n * sizeof *pk);
		ptr = malloc(n * sizeof *ptr);
		if (pk == NULL || ptr == NULL) goto out;
	}
	for (i = 0; i < n; i++) {
		if (secp256k1_ec_pubkey_parse(utxod_ctx, &pk[m], keys33 + 33 * i, 33)) {
			ptr[m] = &pk[m];
			m++;
		}
	}
	if (m > 0 && secp256k1_ec_pubkey_combine(utxod_ctx, sum, ptr, m)) {
		ok = secp256k1_ec_pubkey_serialize(utxod_ctx, out33, &len, sum, SECP256K1_EC_COMPRESSED);
	}
out:
	if (pk != stack_pk) free(pk);
	if (ptr != stack_ptr) free(ptr);
	return ok;
}

// pub (a valid secp256k1_pubkey, not modified) times tweak32, compressed
// into out33. 0 when tweak32 is zero or not below the group order.
static int utxod_pubkey_tweak_mul(const secp256k1_pubkey *pub, const unsigned char *tweak32,
                                  unsigned char *out33) {
	secp256k1_pubkey t = *pub;
	size_t len = 33;
	if (!secp256k1_ec_pubkey_tweak_mul(utxod_ctx, &t, tweak32)) return 0;
	return secp256k1_ec_pubkey_serialize(utxod_ctx, out33, &len, &t, SECP256K1_EC_COMPRESSED);
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

// PubkeyCombine parses each of pubs as a SEC1 compressed point (0x02 or
// 0x03 || x; an x-only BIP340 key is 0x02 || x), skips those that do not
// parse (other first bytes, x not on the curve or not below the field
// prime), and returns the sum of the others, compressed, with sum set to it
// for PubkeyTweakMul. ok is false, and sum the zero Pubkey, when no key
// parses or the sum is the point at infinity.
func PubkeyCombine(pubs [][33]byte, sum *Pubkey) (ser [33]byte, ok bool) {
	*sum = Pubkey{}
	if len(pubs) == 0 {
		return ser, false
	}
	if C.utxod_pubkey_combine(uc(&pubs[0][0]), C.size_t(len(pubs)),
		(*C.secp256k1_pubkey)(unsafe.Pointer(&sum.data[0])), uc(&ser[0])) != 1 {
		*sum = Pubkey{}
		return ser, false
	}
	sum.valid = true
	return ser, true
}

// PubkeyTweakMul returns tweak·pub compressed, tweak a big-endian scalar;
// ok is false when pub is the zero Pubkey or tweak is zero or not below the
// group order. pub is not modified.
func PubkeyTweakMul(pub *Pubkey, tweak *[32]byte) (out [33]byte, ok bool) {
	if !pub.valid {
		return out, false
	}
	ok = C.utxod_pubkey_tweak_mul((*C.secp256k1_pubkey)(unsafe.Pointer(&pub.data[0])),
		uc(&tweak[0]), uc(&out[0])) == 1
	return out, ok
}
