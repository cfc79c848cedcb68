//go:build !cgo || purego

package secp256k1

// Library names the compiled-in libsecp256k1: none in this build (no cgo,
// or the purego tag).
const Library = ""

// PubkeyCombine is unavailable in this build: always false (callers check
// Library and use decred's code).
func PubkeyCombine(pubs [][33]byte, sum *Pubkey) (ser [33]byte, ok bool) {
	*sum = Pubkey{}
	return ser, false
}

// PubkeyTweakMul is unavailable in this build: always false.
func PubkeyTweakMul(pub *Pubkey, tweak *[32]byte) (out [33]byte, ok bool) {
	return out, false
}
