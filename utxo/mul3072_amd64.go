//go:build amd64 && !purego

package utxo

import "github.com/klauspost/cpuid/v2"

// hasMulIFMA reports what mul3072IFMA and reduce3072ADX need: AVX-512F, BW
// (byte masks and shifts), VBMI (VPERMB) and IFMA with the OS's ZMM and
// opmask state enabled (cpuid checks XCR0), and BMI2 (MULX) and ADX.
func hasMulIFMA() bool {
	return cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VBMI, cpuid.AVX512IFMA,
		cpuid.BMI2, cpuid.ADX)
}

// mulFullIFMA sets t = x·y with the AVX-512 IFMA kernel (mul3072_amd64.s).
func mulFullIFMA(t *[2 * num3072Limbs]uint64, x, y *num3072) {
	mul3072IFMA(t, (*[num3072Limbs]uint64)(x), (*[num3072Limbs]uint64)(y))
}

// reduceADX is reduce with its main loop in assembly (two carry chains):
// about half the time of the Go loop (bench/results/digests.md).
func (z *num3072) reduceADX(t *[2 * num3072Limbs]uint64) {
	z.foldCarry(reduce3072ADX((*[num3072Limbs]uint64)(z), t))
}
