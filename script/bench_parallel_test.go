package script

import (
	"runtime"
	"testing"
)

// BenchmarkSigVerifyParallel runs ECDSA verification on every P at once
// (b.RunParallel; -cpu 1,2 compares one busy core with two): the cost per
// verification when all cores verify, as an import's workers do. The
// "yield" arms reschedule every 16 verifications, as the workers do
// (validate.yieldEvery): without it sysmon retakes each P every 10 ms and
// then polls every 20 µs, preempting the verifiers (bench/decisions.md).
func BenchmarkSigVerifyParallel(b *testing.B) {
	_, msg, pub, der := benchSig()
	for _, v := range verifiers() {
		for _, yield := range []bool{false, true} {
			name := "ECDSA/" + v.Name()
			if yield {
				name += "/yield"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for n := 1; pb.Next(); n++ {
						if !v.VerifyECDSA(pub, der, msg) {
							b.Error("verify")
							return
						}
						if yield && n%16 == 0 {
							runtime.Gosched()
						}
					}
				})
			})
		}
	}
}
