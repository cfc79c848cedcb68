//go:build amd64 && !purego

package merkle

import (
	"fmt"
	"testing"

	"utxod/wire"
)

// TestTailChains runs every kernel under every subset of the host's
// features, so tail paths a richer host never takes (AVX-512 without SHA-NI,
// AVX2 down to scalar) are still checked, for every pair count 1..70.
func TestTailChains(t *testing.T) {
	host := hostFeatures()
	src := pseudo(140, 77)
	want := make([]wire.Hash, 70)
	hashPairsGeneric(want, src)
	for mask := 0; mask < 8; mask++ {
		f := features{avx2: mask&1 != 0, avx512: mask&2 != 0, shani: mask&4 != 0}
		if (f.avx2 && !host.avx2) || (f.avx512 && !host.avx512) || (f.shani && !host.shani) || (f.avx512 && !f.avx2) {
			continue
		}
		for _, name := range []string{KernelAVX2, KernelAVX512, KernelSHANI} {
			fn, ok := levelFunc(name, f)
			if !ok {
				continue
			}
			t.Run(fmt.Sprintf("%s/%+v", name, f), func(t *testing.T) {
				dst := make([]wire.Hash, 70)
				for n := 1; n <= 70; n++ {
					fn(dst[:n], src[:2*n])
					for i := 0; i < n; i++ {
						if dst[i] != want[i] {
							t.Fatalf("n=%d output %d differs", n, i)
						}
					}
				}
			})
		}
	}
}
