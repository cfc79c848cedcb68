package merkle

import (
	"crypto/sha256"
	"testing"

	"utxod/wire"
)

// BenchmarkKernels measures each kernel on a 16-leaf root (15 pair hashes
// plus mutation checks), and on one level of 64 and of 1024 parents. The
// ns/pair metric is the time per SHA-256d of 64 bytes.
func BenchmarkKernels(b *testing.B) {
	src := pseudo(2048, 11)
	dst := make([]wire.Hash, 1024)
	for _, name := range kernelNames {
		b.Run(name, func(b *testing.B) {
			h := newKernel(b, name)
			b.Run("leaves_16", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					h.Root(src[:16])
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/15, "ns/pair")
			})
			for _, n := range []int{64, 1024} {
				b.Run(map[int]string{64: "parents_64", 1024: "parents_1024"}[n], func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(64 * n))
					for b.Loop() {
						_, _ = h.HashLevel(dst[:n], src[:2*n])
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pair")
				})
			}
		})
	}
}

// BenchmarkStreamingFloor hashes 1 MiB with crypto/sha256. SHA-256d of 64
// bytes compresses three blocks (192 bytes), so ns/byte x 192 is the floor a
// pair costs at the library's raw streaming speed.
func BenchmarkStreamingFloor(b *testing.B) {
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		sha256.Sum256(buf)
	}
	nsPerByte := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(len(buf))
	b.ReportMetric(nsPerByte, "ns/byte")
	b.ReportMetric(nsPerByte*192, "ns/pair")
}
