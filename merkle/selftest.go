package merkle

import (
	"errors"
	"fmt"

	"utxod/wire"
)

// errSelfTest reports a kernel whose output differs from the generic kernel.
var errSelfTest = errors.New("merkle: kernel self-test mismatch")

// selfTestPairs is the largest level the self-test hashes: it covers every
// tail length below the widest kernel's 16 lanes, twice over.
const selfTestPairs = 37

// selfTest runs pairs on deterministic pseudo-random input for every pair
// count 1..selfTestPairs, both out of place and in place, and compares the
// results with the generic kernel and with the known SHA-256d of 64 zero
// bytes. It allocates a few KiB once per call; it is meant for start-up.
func selfTest(pairs func(dst, src []wire.Hash)) error {
	var src, want, got, inplace [2 * selfTestPairs]wire.Hash
	x := uint64(0x9e3779b97f4a7c15)
	for i := range src {
		for j := range src[i] {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			src[i][j] = byte(x)
		}
	}
	hashPairsGeneric(want[:selfTestPairs], src[:])
	for n := 1; n <= selfTestPairs; n++ {
		pairs(got[:n], src[:2*n])
		copy(inplace[:], src[:2*n])
		pairs(inplace[:n], inplace[:2*n])
		for i := 0; i < n; i++ {
			if got[i] != want[i] || inplace[i] != want[i] {
				return fmt.Errorf("%w: %d pairs, output %d", errSelfTest, n, i)
			}
		}
	}
	var zero [2]wire.Hash
	pairs(zero[:1], zero[:])
	if zero[0] != zeroPairDigest {
		return fmt.Errorf("%w: SHA-256d of 64 zero bytes", errSelfTest)
	}
	return nil
}

// zeroPairDigest is SHA-256d of 64 zero bytes (digest byte order), hex
// e2f61c3f71d1defd3fa999dfa36953755c690689799962b48bebd836974e8cf9.
var zeroPairDigest = wire.Hash{
	0xe2, 0xf6, 0x1c, 0x3f, 0x71, 0xd1, 0xde, 0xfd, 0x3f, 0xa9, 0x99, 0xdf, 0xa3, 0x69, 0x53, 0x75,
	0x5c, 0x69, 0x06, 0x89, 0x79, 0x99, 0x62, 0xb4, 0x8b, 0xeb, 0xd8, 0x36, 0x97, 0x4e, 0x8c, 0xf9,
}
