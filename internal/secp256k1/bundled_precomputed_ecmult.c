//go:build cgo && !purego && !syssecp256k1

// Compiles the bundled libsecp256k1/src/precomputed_ecmult.c (see bundled.go).
#include "libsecp256k1/src/precomputed_ecmult.c"
