//go:build cgo && !purego

package chaingen

/*
#cgo pkg-config: libsecp256k1
#cgo noescape chaingen_ecdsa_sign
#cgo nocallback chaingen_ecdsa_sign
#include <stddef.h>
#include <secp256k1.h>

static secp256k1_context *chaingen_ctx;

static void chaingen_init(void) {
	chaingen_ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
}

// RFC 6979 nonce (libsecp256k1's default), low-S, DER into out (72 bytes).
static int chaingen_ecdsa_sign(const unsigned char *seckey, const unsigned char *msg32,
                               unsigned char *out, size_t *outlen) {
	secp256k1_ecdsa_signature sig;
	if (!secp256k1_ecdsa_sign(chaingen_ctx, &sig, msg32, seckey, NULL, NULL)) return 0;
	return secp256k1_ecdsa_signature_serialize_der(chaingen_ctx, out, outlen, &sig);
}
*/
import "C"

import (
	"unsafe"

	"github.com/btcsuite/btcd/btcec/v2"
)

func init() { C.chaingen_init() }

// signerName names the ECDSA signer compiled in.
const signerName = "libsecp256k1"

// ecdsaSign returns the DER signature of hash with libsecp256k1: RFC 6979
// nonces and low S, the same bytes btcec's ecdsa.Sign gives (checked by
// TestECDSASignerMatchesBtcec), about twice as fast.
func ecdsaSign(priv *btcec.PrivateKey, hash []byte) []byte {
	key := priv.Key.Bytes()
	var out [72]byte
	n := C.size_t(len(out))
	if C.chaingen_ecdsa_sign((*C.uchar)(unsafe.Pointer(&key[0])), (*C.uchar)(unsafe.Pointer(&hash[0])),
		(*C.uchar)(unsafe.Pointer(&out[0])), &n) == 0 {
		panic("chaingen: libsecp256k1 signing failed")
	}
	return append([]byte(nil), out[:n]...)
}
