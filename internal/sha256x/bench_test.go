package sha256x

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkDoubleSums hashes a block's worth of transactions (100 messages
// of 150–500 bytes, the early chain profile's spread) per iteration; MB/s
// counts message bytes.
func BenchmarkDoubleSums(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	msgs := make([][]byte, 100)
	total := 0
	for i := range msgs {
		msgs[i] = make([]byte, 150+rng.IntN(350))
		total += len(msgs[i])
	}
	out := make([][32]byte, len(msgs))
	for _, h := range hashers() {
		b.Run(h.Kernel(), func(b *testing.B) {
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				h.DoubleSums(out, msgs)
			}
		})
	}
}
