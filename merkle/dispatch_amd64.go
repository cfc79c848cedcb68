//go:build amd64 && !purego

package merkle

import (
	"github.com/klauspost/cpuid/v2"

	"utxod/wire"
)

// autoOrder is the preference order of "auto", fastest first as measured on
// the Zen 5 (Turin) host at parents_1024; see bench/results/merkle.md.
var autoOrder = []string{KernelAVX512, KernelSHANI, KernelAVX2, KernelGeneric}

// features is the subset of CPU features the kernels use.
type features struct {
	avx2   bool // AVX2 with OS-enabled YMM state
	avx512 bool // AVX-512F+BW with OS-enabled ZMM/opmask state
	shani  bool // SHA extensions plus the SSSE3/SSE4.1 shuffles around them
}

// hostFeatures reads the CPU. cpuid reports AVX2 and AVX-512 only when the
// OS has enabled the matching register state in XCR0, so this also covers
// OS support.
func hostFeatures() features {
	c := cpuid.CPU
	avx2 := c.Supports(cpuid.AVX, cpuid.AVX2)
	return features{
		avx2:   avx2,
		avx512: avx2 && c.Supports(cpuid.AVX512F, cpuid.AVX512BW),
		shani:  c.Supports(cpuid.SHA, cpuid.SSSE3, cpuid.SSE4),
	}
}

// lookupArch returns the level function of a vector kernel if the host can
// run it.
func lookupArch(name string) (func(dst, src []wire.Hash), bool) {
	return levelFunc(name, hostFeatures())
}

// levelFunc builds the level function of kernel name for CPU features f.
// A wide kernel hashes the largest multiple of its lane count and hands the
// tail down: to SHA-NI when present (faster per message than AVX2 on every
// SHA-NI host measured), else to AVX2 for 8 or more, else to scalar Go.
func levelFunc(name string, f features) (func(dst, src []wire.Hash), bool) {
	var tail func(dst, src []wire.Hash)
	switch {
	case f.shani:
		tail = pairsSHANI
	case f.avx2:
		tail = func(dst, src []wire.Hash) { pairsAVX2(dst, src, hashPairsGeneric) }
	default:
		tail = hashPairsGeneric
	}
	switch name {
	case KernelAVX512:
		if f.avx512 {
			return func(dst, src []wire.Hash) { pairsAVX512(dst, src, tail) }, true
		}
	case KernelAVX2:
		if f.avx2 {
			if !f.shani {
				tail = hashPairsGeneric
			}
			return func(dst, src []wire.Hash) { pairsAVX2(dst, src, tail) }, true
		}
	case KernelSHANI:
		if f.shani {
			return pairsSHANI, true
		}
	}
	return nil, false
}

func pairsAVX512(dst, src []wire.Hash, tail func(dst, src []wire.Hash)) {
	n := len(dst) &^ 15
	if n > 0 {
		sha256d64AVX512(&dst[0][0], &src[0][0], n)
	}
	if len(dst) > n {
		tail(dst[n:], src[2*n:])
	}
}

// pairsAVX2 hashes 16 pairs per step with two interleaved 8-lane groups,
// then a remaining 8 with one group, and hands the rest to tail. Each step
// reads all its input before it writes, and writes only below the input of
// later steps, so dst may equal src[:len(dst)].
func pairsAVX2(dst, src []wire.Hash, tail func(dst, src []wire.Hash)) {
	n := len(dst) &^ 7
	if n16 := n &^ 15; n16 > 0 {
		sha256d64AVX2x2(&dst[0][0], &src[0][0], n16)
	}
	if n&8 != 0 {
		sha256d64AVX2(&dst[n-8][0], &src[2*(n-8)][0], 8)
	}
	if len(dst) > n {
		tail(dst[n:], src[2*n:])
	}
}

func pairsSHANI(dst, src []wire.Hash) {
	if len(dst) > 0 {
		sha256d64SHANI(&dst[0][0], &src[0][0], len(dst))
	}
}
