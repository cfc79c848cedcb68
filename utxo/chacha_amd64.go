//go:build amd64 && !purego

package utxo

import (
	"encoding/binary"

	"github.com/klauspost/cpuid/v2"
)

// hasChachaAVX512 reports AVX-512F and VL with the OS's ZMM state enabled
// (cpuid checks XCR0).
func hasChachaAVX512() bool {
	return cpuid.CPU.Supports(cpuid.AVX2, cpuid.AVX512F, cpuid.AVX512VL)
}

// muHashKeystreamAVX512 sets out to the first 384 keystream bytes of
// ChaCha20 with key (nonce 0, counter 0), read as 48 little-endian limbs.
func muHashKeystreamAVX512(out *num3072, key *[32]byte) {
	var k [8]uint32
	for i := range k {
		k[i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	var st [16][8]uint32
	chacha8AVX512(&st, &k)
	// Limb l is bytes 8l..8l+7: block l/8, words 2(l%8) and 2(l%8)+1.
	for l := range out {
		b, w := l/8, 2*(l%8)
		out[l] = uint64(st[w][b]) | uint64(st[w+1][b])<<32
	}
}
