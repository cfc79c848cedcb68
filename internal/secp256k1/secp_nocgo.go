//go:build !cgo || purego

package secp256k1

// Library names the compiled-in libsecp256k1: none in this build (no cgo,
// or the purego tag).
const Library = ""
