package utxo

import (
	"crypto/sha256"
	"encoding/binary"
)

// sha256x16MaxLen is the longest message sha256x16AVX512 takes: two blocks
// hold 119 bytes, the 0x80 byte and the 8-byte length.
const sha256x16MaxLen = 2*sha256.BlockSize - 9

// sha256x16Min is the fewest messages for which sha256Many uses the
// 16-lane kernel: below it, one SHA-NI call per message is faster
// (bench/results/digests.md).
const sha256x16Min = 8

// sha256x16 selects the 16-lane AVX-512 SHA-256 (sha256x16_amd64.s) for
// sha256Many: set once, when the CPU has it and it agrees with crypto/sha256
// on a self-test. Only tests change it.
var sha256x16 = hasSHA256x16() && sha256x16SelfTest()

// sha256Many sets out[i] to the SHA-256 of msgs[i] for every message; out
// must be at least as long as msgs.
func sha256Many(out [][32]byte, msgs [][]byte) {
	if sha256x16 && len(msgs) >= sha256x16Min {
		sha256ManyAVX512(out, msgs)
		return
	}
	for i, m := range msgs {
		out[i] = sha256.Sum256(m)
	}
}

// sha256Pad writes m with SHA-256's padding into b and reports whether it
// takes both blocks (len(m) > 55); len(m) ≤ sha256x16MaxLen.
func sha256Pad(b *[2 * sha256.BlockSize]byte, m []byte) (two bool) {
	n := copy(b[:], m)
	b[n] = 0x80
	end := sha256.BlockSize
	if n > sha256.BlockSize-9 {
		end = 2 * sha256.BlockSize
	}
	clear(b[n+1 : end-8])
	binary.BigEndian.PutUint64(b[end-8:end], uint64(n)*8)
	return end == 2*sha256.BlockSize
}

// sha256x16SelfTest compares the kernel with crypto/sha256 on every length
// the kernel takes (0..119 bytes, mixed one- and two-block lanes in each
// call), one longer message and a short final batch.
func sha256x16SelfTest() bool {
	var buf [sha256x16MaxLen + 2]byte
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	msgs := make([][]byte, 0, len(buf)+1)
	for n := 0; n <= len(buf); n++ {
		msgs = append(msgs, buf[:n])
	}
	msgs = append(msgs, buf[3:40])
	got := make([][32]byte, len(msgs))
	sha256ManyAVX512(got, msgs)
	for i, m := range msgs {
		if got[i] != sha256.Sum256(m) {
			return false
		}
	}
	return true
}
