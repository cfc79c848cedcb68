//go:build !cgo || purego

package secp256k1

// Available reports whether libsecp256k1 is compiled in: not in this build
// (no cgo, or the purego tag).
const Available = false

// Library names the compiled-in libsecp256k1 ("" in this build).
const Library = ""
