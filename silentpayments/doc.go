// Package silentpayments computes the per-transaction tweak data of BIP352
// (silent payments v0) that an index serves to light clients: for an eligible
// transaction, tweak = input_hash·A, where A is the sum of the public keys of
// the inputs from the BIP's "Inputs For Shared Secret Derivation" list and
// input_hash = hash_BIP0352/Inputs(outpoint_L || ser_P(A)), outpoint_L being
// the lexicographically smallest 36-byte outpoint the transaction spends.
//
// A receiver holding b_scan derives ecdh_shared_secret = b_scan·tweak and
// scans the transaction's taproot outputs, which [TaprootOutputs] lists
// (with the largest taproot value, for dust filtering and cut-through).
//
// Eligibility follows the BIP's "Scanning silent payment eligible
// transactions": at least one taproot output, at least one input whose
// public key can be taken, and no spent output of SegWit version > 1.
// Public keys are taken as bip-0352/reference.py's get_pubkey_from_input
// does: the taproot output key (as even-Y) for P2TR key- and script-path
// spends unless the control block names the NUMS point H as internal key;
// the last witness item for P2WPKH and for P2SH-P2WPKH (whose scriptSig
// must be the BIP's template 0x16 0x0014 <20 bytes>, the only form a valid
// spend can have; reference.py does not look at the first byte); for
// P2PKH the compressed key in the scriptSig, searched from the end, whose HASH160 is
// the scriptPubKey's hash (so malleated scriptSigs still yield the key).
// Only compressed and x-only keys count; uncompressed and hybrid keys are
// skipped. Inputs that match no template are ignored, not errors.
//
// Use, for each transaction of a connected block with the scriptPubKeys of
// the outputs it spends:
//
//	tweak, ok, err := silentpayments.ComputeTweak(tx, prevoutScripts)
//	if err == nil && ok {
//		outs, maxValue := silentpayments.TaprootOutputs(tx)
//		// index tweak with outs (cut-through) and maxValue (dust filter)
//	}
//
// Point arithmetic (the sum A and input_hash·A) goes through libsecp256k1
// (utxod/internal/secp256k1) when the build has it, about 3.5× faster, and
// otherwise (no cgo, or the purego tag) through
// github.com/decred/dcrd/dcrec/secp256k1/v4; both give the same results
// (TestTweakArmsAgree). Both run in variable time, which is fine here:
// every value involved is public.
package silentpayments
