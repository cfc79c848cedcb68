package utxo

import (
	"crypto/sha256"
	"math/rand/v2"
	"strconv"
	"testing"
)

// useSHA256x16 makes sha256Many use (or not) the 16-lane kernel until the
// end of the test or benchmark.
func useSHA256x16(tb testing.TB, on bool) {
	tb.Helper()
	prev := sha256x16
	sha256x16 = on
	tb.Cleanup(func() { sha256x16 = prev })
}

// The kernel is selected exactly when the CPU can run it.
func TestSHA256x16Selected(t *testing.T) {
	if sha256x16 != hasSHA256x16() {
		t.Fatalf("selected %v, CPU support %v: the self-test failed", sha256x16, hasSHA256x16())
	}
}

// sha256Many equals crypto/sha256 message by message on both paths, for
// batch sizes 0..40 and messages of every length around the one/two-block
// boundary (55/56), the kernel's limit (119/120) and beyond.
func TestSHA256ManyEveryImpl(t *testing.T) {
	impls := []bool{false}
	if hasSHA256x16() {
		impls = append(impls, true)
	}
	r := rand.New(rand.NewPCG(31, 32))
	lengths := []int{0, 1, 31, 32, 54, 55, 56, 57, 63, 64, 65, 100, 118, 119, 120, 121, 128, 200, 1000}
	for _, on := range impls {
		t.Run(strconv.FormatBool(on), func(t *testing.T) {
			useSHA256x16(t, on)
			for n := 0; n <= 40; n++ {
				for rep := 0; rep < 4; rep++ {
					msgs := make([][]byte, n)
					for i := range msgs {
						l := lengths[r.IntN(len(lengths))]
						if rep%2 == 1 {
							l = 48 + r.IntN(72) // serialized coins
						}
						msgs[i] = make([]byte, l)
						for k := range msgs[i] {
							msgs[i][k] = byte(r.Uint32())
						}
					}
					out := make([][32]byte, n+1)
					out[n] = [32]byte{1}
					sha256Many(out[:n], msgs)
					if out[n] != [32]byte{1} {
						t.Fatalf("n=%d: wrote past the batch", n)
					}
					direct := make([][32]byte, n)
					if on {
						sha256ManyAVX512(direct, msgs) // also below sha256x16Min
					}
					for i, m := range msgs {
						want := sha256.Sum256(m)
						if out[i] != want || (on && direct[i] != want) {
							t.Fatalf("n=%d message %d (%d bytes): digest differs from crypto/sha256", n, i, len(m))
						}
					}
				}
			}
		})
	}
}

// BenchmarkSHA256Many: SHA-256 of 16 serialized-coin-sized (74-byte, two
// block) and 16 one-block (40-byte) messages per op through crypto/sha256
// (SHA-NI here) and the 16-lane kernel, in ns per message; and batches
// smaller than 16 for the cut-over (sha256x16Min).
func BenchmarkSHA256Many(b *testing.B) {
	impls := []bool{false}
	if hasSHA256x16() {
		impls = append(impls, true)
	}
	for _, size := range []int{40, 74} {
		for _, n := range []int{2, 4, 8, 16} {
			msgs := make([][]byte, n)
			for i := range msgs {
				msgs[i] = make([]byte, size)
				msgs[i][0] = byte(i)
			}
			out := make([][32]byte, n)
			for _, on := range impls {
				name := "stdlib"
				if on {
					name = "x16"
				}
				b.Run(name+"/"+strconv.Itoa(size)+"B/"+strconv.Itoa(n), func(b *testing.B) {
					for b.Loop() {
						if on {
							sha256ManyAVX512(out, msgs)
						} else {
							for i, m := range msgs {
								out[i] = sha256.Sum256(m)
							}
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/msg")
				})
			}
		}
	}
}
