//go:build !cgo || purego

package script

// Libsecp256k1Verifier returns nil: this build has no cgo (or has the
// purego tag), so only the pure-Go DecredVerifier is available.
func Libsecp256k1Verifier() SigVerifier { return nil }
