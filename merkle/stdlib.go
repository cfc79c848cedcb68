package merkle

import (
	"crypto/sha256"

	"utxod/wire"
)

// hashPairsStdlib is the comparison arm: crypto/sha256 applied twice.
func hashPairsStdlib(dst, src []wire.Hash) {
	for i := range dst {
		first := sha256.Sum256(pairAt(src, i)[:])
		dst[i] = sha256.Sum256(first[:])
	}
}
