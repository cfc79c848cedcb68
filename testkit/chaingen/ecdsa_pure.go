//go:build !cgo || purego

package chaingen

import (
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
)

const signerName = "btcec"

// ecdsaSign returns btcec's RFC 6979, low-S DER signature of hash.
func ecdsaSign(priv *btcec.PrivateKey, hash []byte) []byte {
	return ecdsa.Sign(priv, hash).Serialize()
}
