package merkle

import (
	"crypto/sha256"
	"os"
	"slices"
	"testing"
	"time"

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

// TestMeasureOrder is a noise-robust companion to the benchmarks for shared
// or loaded hosts: it interleaves the kernels trial by trial and reports the
// minimum and median ns/pair of each for a 1024-parent level and for a
// 16-leaf root. Run with UTXOD_MERKLE_MEASURE=1 (-v).
func TestMeasureOrder(t *testing.T) {
	if os.Getenv("UTXOD_MERKLE_MEASURE") == "" {
		t.Skip("set UTXOD_MERKLE_MEASURE=1 to measure")
	}
	src := pseudo(2048, 11)
	dst := make([]wire.Hash, 1024)
	var hs []*Hasher
	for _, name := range kernelNames {
		if h, err := New(name, quietLog()); err == nil {
			hs = append(hs, h)
		}
	}
	const trials = 300
	cases := []struct {
		name  string
		pairs int
		run   func(h *Hasher)
	}{
		{"parents_1024", 1024, func(h *Hasher) { _, _ = h.HashLevel(dst, src) }},
		{"parents_64", 64, func(h *Hasher) { _, _ = h.HashLevel(dst[:64], src[:128]) }},
		{"leaves_16", 15, func(h *Hasher) { h.Root(src[:16]) }},
	}
	// The streaming floor: crypto/sha256 over 1 MiB, per byte x 192.
	big := make([]byte, 1<<20)
	floor := make([]float64, 0, 60)
	for trial := 0; trial < 60; trial++ {
		start := time.Now()
		sha256.Sum256(big)
		floor = append(floor, float64(time.Since(start).Nanoseconds())/float64(len(big)))
	}
	slices.Sort(floor)
	t.Logf("streaming floor: min %.4f ns/byte (%.1f ns/pair), median %.4f ns/byte (%.1f ns/pair)",
		floor[0], 192*floor[0], floor[len(floor)/2], 192*floor[len(floor)/2])
	for _, c := range cases {
		samples := make([][]float64, len(hs))
		reps := 1 + 4096/c.pairs
		for trial := 0; trial < trials; trial++ {
			for i, h := range hs {
				start := time.Now()
				for r := 0; r < reps; r++ {
					c.run(h)
				}
				samples[i] = append(samples[i], float64(time.Since(start).Nanoseconds())/float64(reps*c.pairs))
			}
		}
		base := map[string]float64{}
		for i, h := range hs {
			slices.Sort(samples[i])
			base[h.Name()] = samples[i][0]
		}
		for i, h := range hs {
			s := samples[i]
			t.Logf("%-13s %-8s min %7.1f ns/pair  median %7.1f  x generic %5.2f  x stdlib %5.2f",
				c.name, h.Name(), s[0], s[len(s)/2], base[KernelGeneric]/s[0], base[KernelStdlib]/s[0])
		}
	}
}
