package secp256k1

// Pubkey is a public key as libsecp256k1 holds it after parsing (its
// secp256k1_pubkey), which PubkeyCombine hands to PubkeyTweakMul so that
// the sum is not parsed again. The zero value is no key; only
// PubkeyCombine makes valid ones. Without libsecp256k1 (Library == "")
// there are none.
type Pubkey struct {
	data  [64]byte
	valid bool
}
