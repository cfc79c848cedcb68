//go:build amd64 && !purego

package utxo

import (
	"crypto/sha256"

	"github.com/klauspost/cpuid/v2"
)

// hasSHA256x16 reports what sha256x16AVX512 needs: AVX-512F and BW (VPSHUFB
// on ZMM) with the OS's ZMM and opmask state enabled (cpuid checks XCR0).
func hasSHA256x16() bool {
	return cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW)
}

// sha256ManyAVX512 sets out[i] to the SHA-256 of msgs[i], 16 messages per
// kernel call; messages longer than two blocks' worth (sha256x16MaxLen)
// are left to crypto/sha256.
func sha256ManyAVX512(out [][32]byte, msgs [][]byte) {
	var blocks [16][128]byte
	var digests [16][32]byte
	for i := 0; i < len(msgs); i += 16 {
		batch := msgs[i:min(i+16, len(msgs))]
		var two uint16
		for j, m := range batch {
			if len(m) <= sha256x16MaxLen && sha256Pad(&blocks[j], m) {
				two |= 1 << j
			}
		}
		sha256x16AVX512(&digests, &blocks, two)
		for j, m := range batch {
			if len(m) <= sha256x16MaxLen {
				out[i+j] = digests[j]
			} else {
				out[i+j] = sha256.Sum256(m)
			}
		}
	}
}
