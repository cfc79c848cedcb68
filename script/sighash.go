package script

import (
	"errors"

	"utxod/wire"
)

// Signature hash type bits (script/interpreter.h).
const (
	SigHashAll          = 1
	SigHashNone         = 2
	SigHashSingle       = 3
	SigHashAnyoneCanPay = 0x80
)

// ErrSigHashIndex: the input index passed to LegacySigHash is out of range.
var ErrSigHashIndex = errors.New("script: sighash input index out of range")

// LegacySigHash is Core's SignatureHash for SigVersion::BASE (pre-segwit
// scripts, script/interpreter.cpp): the double SHA-256 of
// CTransactionSignatureSerializer's output followed by hashType as 4
// little-endian bytes. The serialization is gathered in a buffer (streamed
// in 16 KiB pieces when longer) and hashed. scriptCode is written with its
// OP_CODESEPARATORs removed, as Core's SerializeScriptCode does; the caller
// does any FindAndDelete. The SIGHASH_SINGLE bug is kept: with idx past the
// last output the result is uint256::ONE (byte 0 = 1, the rest zero).
func LegacySigHash(tx *wire.Tx, idx int, scriptCode []byte, hashType uint32) (wire.Hash, error) {
	if idx < 0 || idx >= len(tx.Inputs) {
		return wire.Hash{}, ErrSigHashIndex
	}
	var w sigWriter
	return wire.Hash(w.legacy(tx, idx, scriptCode, hashType)), nil
}
