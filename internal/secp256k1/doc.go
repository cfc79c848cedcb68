// Package secp256k1 is libsecp256k1 through cgo: the ECDSA, BIP340 Schnorr
// and taproot-tweak checks the script engine's default verifier makes, the
// ECDSA signer the corpus generator uses, and the point sum and scalar
// multiplication of silent payments' tweaks (PubkeyCombine, PubkeyTweakMul).
//
// Two builds of the C library are selectable, like Bitcoin Core, which
// compiles the copy of libsecp256k1 in its source tree:
//
//   - default: the bundled copy in libsecp256k1/ (upstream 0.6.1-dev, from
//     go-ethereum v1.17.10's crypto/secp256k1/libsecp256k1; MIT, see
//     libsecp256k1/COPYING), compiled by cgo with the library's default
//     configuration (ECMULT_WINDOW_SIZE 15, 86 KiB signing table, x86_64
//     scalar assembly on amd64) and the extrakeys and schnorrsig modules;
//   - tag syssecp256k1: the system library found by pkg-config (Debian's
//     libsecp256k1-dev, 0.2.0 on bookworm), the arm the bundled copy was
//     gated against (bench/decisions.md).
//
// Without cgo or with the purego tag the package holds Library ("") and
// PubkeyCombine and PubkeyTweakMul stubs that always fail; callers check
// Library and use the pure-Go decred code.
//
// All functions are safe for concurrent use: they share one context that
// is created at init and never modified. Slices and arrays passed in are
// only read during the call (or written, for the signature out-parameter)
// and not retained.
package secp256k1
