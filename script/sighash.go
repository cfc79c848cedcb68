package script

import (
	"crypto/sha256"
	"encoding/binary"
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
// little-endian bytes. The serialization is streamed into the hash straight
// from tx's fields; nothing is copied. scriptCode is written with its
// OP_CODESEPARATORs removed, as Core's SerializeScriptCode does; the caller
// does any FindAndDelete. The SIGHASH_SINGLE bug is kept: with idx past the
// last output the result is uint256::ONE (byte 0 = 1, the rest zero).
func LegacySigHash(tx *wire.Tx, idx int, scriptCode []byte, hashType uint32) (wire.Hash, error) {
	if idx < 0 || idx >= len(tx.Inputs) {
		return wire.Hash{}, ErrSigHashIndex
	}
	base := hashType & 0x1f
	single := base == SigHashSingle
	none := base == SigHashNone
	anyone := hashType&SigHashAnyoneCanPay != 0
	if single && idx >= len(tx.Outputs) {
		return wire.Hash{0: 1}, nil
	}

	h := sha256.New()
	var buf [9]byte
	u32 := func(v uint32) {
		binary.LittleEndian.PutUint32(buf[:4], v)
		h.Write(buf[:4])
	}
	compact := func(v uint64) { h.Write(wire.AppendCompactSize(buf[:0], v)) }

	u32(uint32(tx.Version))
	nIn := len(tx.Inputs)
	if anyone {
		nIn = 1
	}
	compact(uint64(nIn))
	for k := 0; k < nIn; k++ {
		i := k
		if anyone {
			i = idx
		}
		in := &tx.Inputs[i]
		h.Write(in.PrevHash[:])
		u32(in.PrevIndex)
		if i != idx {
			h.Write([]byte{0})
		} else {
			writeScriptCode(h, scriptCode, compact)
		}
		if i != idx && (single || none) {
			u32(0)
		} else {
			u32(in.Sequence)
		}
	}
	nOut := len(tx.Outputs)
	switch {
	case none:
		nOut = 0
	case single:
		nOut = idx + 1
	}
	compact(uint64(nOut))
	for i := 0; i < nOut; i++ {
		if single && i != idx {
			// CTxOut(): value -1, empty script.
			h.Write([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0})
			continue
		}
		out := &tx.Outputs[i]
		binary.LittleEndian.PutUint64(buf[:8], uint64(out.Value))
		h.Write(buf[:8])
		compact(uint64(len(out.Script)))
		h.Write(out.Script)
	}
	u32(tx.LockTime)
	u32(hashType)
	var first [32]byte
	h.Sum(first[:0])
	return wire.Hash(sha256.Sum256(first[:])), nil
}

// writeScriptCode is Core's CTransactionSignatureSerializer::
// SerializeScriptCode: the length counts the script minus its
// OP_CODESEPARATORs, and the bytes between separators are written. As in
// Core, an unparsable tail stops the second pass where parsing failed.
func writeScriptCode(h interface{ Write([]byte) (int, error) }, s []byte, compact func(uint64)) {
	seps := 0
	for pc := 0; pc < len(s); {
		op, _, next, ok := getOp(s, pc)
		if !ok {
			break
		}
		if op == opCodeSeparator {
			seps++
		}
		pc = next
	}
	compact(uint64(len(s) - seps))
	begin, pc := 0, 0
	for pc < len(s) {
		op, _, next, ok := getOp(s, pc)
		pc = next
		if !ok {
			break
		}
		if op == opCodeSeparator {
			h.Write(s[begin : pc-1])
			begin = pc
		}
	}
	if begin != len(s) {
		h.Write(s[begin:pc])
	}
}
