//go:build amd64 && !purego

package utxo

import "github.com/klauspost/cpuid/v2"

// hasChachaAVX512 reports what chachaMuHashAVX512 needs: AVX-512F with the
// OS's ZMM and opmask state enabled (cpuid checks XCR0), and BMI2 (SHLX, for
// the key masks).
func hasChachaAVX512() bool {
	return cpuid.CPU.Supports(cpuid.AVX512F, cpuid.BMI2)
}

// muHashKeystreamAVX512 sets out to the first 384 keystream bytes of
// ChaCha20 with key (nonce 0, counter 0), read as 48 little-endian limbs:
// the kernel on one element (one pass of 16 lanes, 6 of them used).
func muHashKeystreamAVX512(out *num3072, key *[32]byte) {
	chachaMuHashAVX512((*[num3072Limbs]uint64)(out), key, 1)
}

// muHashKeystreamsAVX512 sets out[i] to keys[i]'s keystream for every key;
// out must be at least as long as keys. Eight elements take three passes.
func muHashKeystreamsAVX512(out []num3072, keys [][32]byte) {
	if len(keys) == 0 {
		return
	}
	_ = out[len(keys)-1]
	chachaMuHashAVX512((*[num3072Limbs]uint64)(&out[0]), &keys[0], len(keys))
}
