// Package descriptor reads Bitcoin Core's output script descriptors
// (doc/descriptors.md, src/script/descriptor.cpp) for scantxoutset: Parse
// with Core's checksum, key and context checks and messages, BIP32 key
// derivation over a Range, Expand of scan objects into the output scripts
// to look for, and Infer, the descriptor Core reports for a found script.
package descriptor
