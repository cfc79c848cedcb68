//go:build cgo && !purego && syssecp256k1

package secp256k1

/*
#cgo pkg-config: libsecp256k1
*/
import "C"

// Library names the compiled-in libsecp256k1.
const Library = "libsecp256k1 (system, pkg-config)"
