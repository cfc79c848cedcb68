//go:build amd64 && !purego

package merkle

import (
	"github.com/klauspost/cpuid/v2"

	"utxod/wire"
)

// autoOrder is the preference order of "auto", fastest first as measured on
// a Zen 5 host at parents_1024 (docs/benchmarks/merkle.md).
var autoOrder = []string{KernelAVX512, KernelSHANI, KernelAVX2, KernelGeneric}

// CPU feature checks. cpuid only reports AVX2 and AVX-512 when the OS has
// enabled the YMM/ZMM state in XCR0, so these also cover OS support.
func hasAVX2() bool   { return cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2) }
func hasAVX512() bool { return cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW) && hasAVX2() }
func hasSHANI() bool  { return cpuid.CPU.Supports(cpuid.SHA, cpuid.SSSE3, cpuid.SSE4) }

// lookupArch returns the level function of a vector kernel if the host can
// run it. Each wide kernel hashes the largest multiple of its lane count and
// hands the tail to the next narrower available kernel, down to scalar.
func lookupArch(name string) (func(dst, src []wire.Hash), bool) {
	switch name {
	case KernelAVX512:
		if hasAVX512() {
			return pairsAVX512, true
		}
	case KernelAVX2:
		if hasAVX2() {
			return pairsAVX2, true
		}
	case KernelSHANI:
		if hasSHANI() {
			return pairsSHANI, true
		}
	}
	return nil, false
}

// narrowTail hashes a level shorter than the caller's lane count with the
// fastest narrower kernel the host has.
func narrowTail(dst, src []wire.Hash) {
	switch {
	case len(dst) == 0:
	case hasSHANI():
		pairsSHANI(dst, src)
	case len(dst) >= 8 && hasAVX2():
		pairsAVX2(dst, src)
	default:
		hashPairsGeneric(dst, src)
	}
}

func pairsAVX512(dst, src []wire.Hash) {
	n := len(dst) &^ 15
	if n > 0 {
		sha256d64AVX512(&dst[0][0], &src[0][0], n)
	}
	narrowTail(dst[n:], src[2*n:])
}

func pairsAVX2(dst, src []wire.Hash) {
	n := len(dst) &^ 7
	if n > 0 {
		sha256d64AVX2(&dst[0][0], &src[0][0], n)
	}
	if len(dst) > n {
		if hasSHANI() {
			pairsSHANI(dst[n:], src[2*n:])
		} else {
			hashPairsGeneric(dst[n:], src[2*n:])
		}
	}
}

func pairsSHANI(dst, src []wire.Hash) {
	if len(dst) > 0 {
		sha256d64SHANI(&dst[0][0], &src[0][0], len(dst))
	}
}
