package script

import (
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// BenchmarkSigVerifyParallel runs ECDSA verification on every P at once
// (b.RunParallel; -cpu 1,2 compares one busy core with two): the cost per
// verification when all cores verify, as an import's workers do.
func BenchmarkSigVerifyParallel(b *testing.B) {
	var kb, msg [32]byte
	for i := range kb {
		kb[i] = byte(i + 1)
		msg[i] = byte(3 * i)
	}
	priv := secp256k1.PrivKeyFromBytes(kb[:])
	der := ecdsa.Sign(priv, msg[:]).Serialize()
	pub := priv.PubKey().SerializeCompressed()
	for _, v := range verifiers() {
		b.Run("ECDSA/"+v.Name(), func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if !v.VerifyECDSA(pub, der, msg) {
						b.Error("verify")
						return
					}
				}
			})
		})
	}
}
