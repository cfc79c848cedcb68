//go:build cgo && !purego && !syssecp256k1

package secp256k1

// The bundled copy: the three bundled_*.c files compile its sources with
// the configuration below (the library's defaults; see doc.go).

/*
#cgo CFLAGS: -I${SRCDIR}/libsecp256k1/include
#cgo CFLAGS: -DENABLE_MODULE_EXTRAKEYS=1 -DENABLE_MODULE_SCHNORRSIG=1
#cgo CFLAGS: -DECMULT_WINDOW_SIZE=15 -DCOMB_BLOCKS=43 -DCOMB_TEETH=6
#cgo amd64 CFLAGS: -DUSE_ASM_X86_64=1
*/
import "C"

// Library names the compiled-in libsecp256k1.
const Library = "libsecp256k1 0.6.1-dev (bundled)"
