//go:build cgo && !purego

package chaingen

import (
	"github.com/btcsuite/btcd/btcec/v2"

	"utxod/internal/secp256k1"
)

// signerName names the ECDSA signer compiled in.
const signerName = secp256k1.Library

// ecdsaSign returns the DER signature of hash with libsecp256k1: RFC 6979
// nonces and low S, the same bytes btcec's ecdsa.Sign gives (checked by
// TestECDSASignerMatchesBtcec), about twice as fast.
func ecdsaSign(priv *btcec.PrivateKey, hash []byte) []byte {
	key := priv.Key.Bytes()
	var msg [32]byte
	copy(msg[:], hash)
	var out [72]byte
	n, ok := secp256k1.SignECDSA(&key, &msg, &out)
	if !ok {
		panic("chaingen: libsecp256k1 signing failed")
	}
	return append([]byte(nil), out[:n]...)
}
