package script

import "testing"

// BenchmarkSigVerifyParallel runs ECDSA verification on every P at once
// (b.RunParallel; -cpu 1,2 compares one busy core with two): the cost per
// verification when all cores verify, as an import's workers do.
func BenchmarkSigVerifyParallel(b *testing.B) {
	_, msg, pub, der := benchSig()
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
