package chaingen

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
)

// The compiled-in signer (libsecp256k1 under cgo) must give btcec's bytes,
// so files do not depend on how the generator was built.
func TestECDSASignerMatchesBtcec(t *testing.T) {
	keys := newKeyTable(99, 64)
	for i := range 2000 {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		h := sha256.Sum256(b[:])
		k := keys.at(i)
		got := ecdsaSign(k.priv, h[:])
		want := ecdsa.Sign(k.priv, h[:]).Serialize()
		if !bytes.Equal(got, want) {
			t.Fatalf("%s signature %d: %x, btcec %x", signerName, i, got, want)
		}
	}
}

func BenchmarkECDSASign(b *testing.B) {
	k := newKeyTable(1, 1).at(0)
	h := sha256.Sum256([]byte("x"))
	b.Run(signerName, func(b *testing.B) {
		for b.Loop() {
			ecdsaSign(k.priv, h[:])
		}
	})
	b.Run("btcec", func(b *testing.B) {
		for b.Loop() {
			ecdsa.Sign(k.priv, h[:])
		}
	})
}
