package merkle

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"utxod/wire"
)

// sha256K holds the SHA-256 round constants (FIPS 180-4 §4.2.2).
var sha256K = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

// sha256IV is the SHA-256 initial hash value.
var sha256IV = [8]uint32{
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
}

// padKW is K[t]+W[t] for the constant second block of a 64-byte message
// (0x80, zeros, bit length 512). Its schedule never changes, so it is computed
// once; the vector kernels use the same table broadcast across lanes.
var padKW = func() (kw [64]uint32) {
	var w [64]uint32
	w[0] = 0x80000000
	w[15] = 512
	expand(&w)
	for i := range kw {
		kw[i] = w[i] + sha256K[i]
	}
	return kw
}()

// expand computes the message schedule W[16..63] from W[0..15].
func expand(w *[64]uint32) {
	for i := 16; i < 64; i++ {
		v1 := w[i-2]
		t1 := bits.RotateLeft32(v1, -17) ^ bits.RotateLeft32(v1, -19) ^ (v1 >> 10)
		v2 := w[i-15]
		t2 := bits.RotateLeft32(v2, -7) ^ bits.RotateLeft32(v2, -18) ^ (v2 >> 3)
		w[i] = t1 + w[i-7] + t2 + w[i-16]
	}
}

// rounds runs the 64 SHA-256 rounds over state s with the pre-added K+W values
// and adds the result into s (the Davies-Meyer feed-forward).
func rounds(s *[8]uint32, kw *[64]uint32) {
	a, b, c, d, e, f, g, h := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
	for i := 0; i < 64; i++ {
		t1 := h + (bits.RotateLeft32(e, -6) ^ bits.RotateLeft32(e, -11) ^ bits.RotateLeft32(e, -25)) +
			((e & f) ^ (^e & g)) + kw[i]
		t2 := (bits.RotateLeft32(a, -2) ^ bits.RotateLeft32(a, -13) ^ bits.RotateLeft32(a, -22)) +
			((a & b) ^ (a & c) ^ (b & c))
		h, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
	}
	s[0] += a
	s[1] += b
	s[2] += c
	s[3] += d
	s[4] += e
	s[5] += f
	s[6] += g
	s[7] += h
}

// sha256d64Generic writes SHA-256(SHA-256(in)) to out. It reads all of in
// before writing out, so out may alias the first half of in. It is a pure-Go
// twin of the vector kernels: the padding block uses the precomputed padKW.
func sha256d64Generic(out *wire.Hash, in *[64]byte) {
	var w [64]uint32
	for i := 0; i < 16; i++ {
		w[i] = binary.BigEndian.Uint32(in[4*i:])
	}
	expand(&w)
	for i := range w {
		w[i] += sha256K[i]
	}
	s := sha256IV
	rounds(&s, &w)
	kw := padKW
	rounds(&s, &kw)

	// Second hash: the 32-byte digest plus padding (0x80, zeros, length 256).
	copy(w[:8], s[:])
	w[8] = 0x80000000
	for i := 9; i < 15; i++ {
		w[i] = 0
	}
	w[15] = 256
	expand(&w)
	for i := range w {
		w[i] += sha256K[i]
	}
	s = sha256IV
	rounds(&s, &w)
	for i, v := range s {
		binary.BigEndian.PutUint32(out[4*i:], v)
	}
}

// hashPairsGeneric sets dst[i] = SHA-256d(src[2i] || src[2i+1]) for every i
// in dst. len(src) must be 2*len(dst); dst may equal src[:len(dst)].
func hashPairsGeneric(dst, src []wire.Hash) {
	for i := range dst {
		sha256d64Generic(&dst[i], pairAt(src, i))
	}
}

// pairAt returns the 64 bytes src[2i] || src[2i+1] without copying. The
// caller guarantees 2i+1 < len(src).
func pairAt(src []wire.Hash, i int) *[64]byte {
	return (*[64]byte)(unsafe.Pointer(&src[2*i]))
}
