// Package address converts Bitcoin addresses to output scripts and back for
// one network: base58check P2PKH and P2SH, BIP173 bech32 for witness v0
// (P2WPKH, P2WSH), BIP350 bech32m for witness v1 (P2TR) and the future
// versions 2 to 16. The encodings (version bytes, human-readable part) come
// from params.Params, so an address of another network is reported as such
// (ErrWrongNetwork) rather than as garbage.
//
// Decode is strict: no whitespace, one case, the exact checksum variant each
// witness version requires, BIP141/BIP350 program lengths, zero padding.
// Every failure is an *Error whose Kind is one of the sentinel errors, so
// callers match with errors.Is and show Error() to people.
package address
