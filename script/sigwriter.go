package script

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"

	"utxod/wire"
)

// sigWriter gathers a signature hash's serialization in buf, so that a
// short one (nearly all of them) is hashed by one SHA-256 call instead of a
// Write per field. Past spillAt bytes buf goes into h and is reused, which
// bounds the memory of a legacy serialization (quadratic in the inputs).
type sigWriter struct {
	buf     []byte
	h       hash.Hash // allocated at the first spill
	spilled bool
	first   [32]byte // h's sum (a local would escape through the interface)
}

// spillAt is the buffered size past which a serialization is streamed.
const spillAt = 16 << 10

func (w *sigWriter) start() []byte {
	w.spilled = false
	return w.buf[:0]
}

// spill streams b into h once it is long, returning the slice to go on with.
func (w *sigWriter) spill(b []byte) []byte {
	if len(b) < spillAt {
		return b
	}
	if w.h == nil {
		w.h = sha256.New()
	}
	if !w.spilled {
		w.h.Reset()
		w.spilled = true
	}
	w.h.Write(b)
	return b[:0]
}

// double returns SHA256(SHA256(everything since start)), b being the rest.
func (w *sigWriter) double(b []byte) [32]byte {
	if w.spilled {
		w.h.Write(b)
		w.h.Sum(w.first[:0])
	} else {
		w.first = sha256.Sum256(b)
	}
	if cap(b) <= 4*spillAt { // one huge output script must not stay pooled
		w.buf = b[:0]
	} else {
		w.buf = nil
	}
	return sha256.Sum256(w.first[:])
}

// legacy is Core's SignatureHash for SigVersion::BASE (see LegacySigHash);
// idx must be a valid input index.
func (w *sigWriter) legacy(tx *wire.Tx, idx int, scriptCode []byte, hashType uint32) [32]byte {
	base := hashType & 0x1f
	single := base == SigHashSingle
	none := base == SigHashNone
	anyone := hashType&SigHashAnyoneCanPay != 0
	if single && idx >= len(tx.Outputs) {
		return [32]byte{0: 1} // the SIGHASH_SINGLE bug: uint256::ONE
	}
	b := binary.LittleEndian.AppendUint32(w.start(), uint32(tx.Version))
	nIn := len(tx.Inputs)
	if anyone {
		nIn = 1
	}
	b = wire.AppendCompactSize(b, uint64(nIn))
	for k := 0; k < nIn; k++ {
		i := k
		if anyone {
			i = idx
		}
		in := &tx.Inputs[i]
		b = append(b, in.PrevHash[:]...)
		b = binary.LittleEndian.AppendUint32(b, in.PrevIndex)
		if i != idx {
			b = append(b, 0)
		} else {
			b = appendScriptCode(b, scriptCode)
		}
		if i != idx && (single || none) {
			b = binary.LittleEndian.AppendUint32(b, 0)
		} else {
			b = binary.LittleEndian.AppendUint32(b, in.Sequence)
		}
		b = w.spill(b)
	}
	nOut := len(tx.Outputs)
	switch {
	case none:
		nOut = 0
	case single:
		nOut = idx + 1
	}
	b = wire.AppendCompactSize(b, uint64(nOut))
	for i := 0; i < nOut; i++ {
		if single && i != idx {
			b = append(b, ff8zero...) // CTxOut(): value -1, empty script
			continue
		}
		b = appendTxOut(b, &tx.Outputs[i])
		b = w.spill(b)
	}
	b = binary.LittleEndian.AppendUint32(b, tx.LockTime)
	b = binary.LittleEndian.AppendUint32(b, hashType)
	return w.double(b)
}

// appendTxOut appends a CTxOut's serialization.
func appendTxOut(b []byte, o *wire.TxOut) []byte {
	return append(appendTxOutHead(b, o), o.Script...)
}

// appendTxOutHead appends a CTxOut's serialization up to its script: the
// value and the script's length (at most 17 bytes).
func appendTxOutHead(b []byte, o *wire.TxOut) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(o.Value))
	return wire.AppendCompactSize(b, uint64(len(o.Script)))
}

// appendScriptCode is Core's CTransactionSignatureSerializer::
// SerializeScriptCode: the length counts the script minus its
// OP_CODESEPARATORs, and the bytes between separators are written. As in
// Core, an unparsable tail stops the output where parsing failed (GetOp has
// already stepped over the opcode and any length bytes there).
func appendScriptCode(b, s []byte) []byte {
	seps, stop := 0, len(s)
	for pc := 0; pc < len(s); {
		op, _, next, ok := getOp(s, pc)
		if !ok {
			stop = next
			break
		}
		if op == opCodeSeparator {
			seps++
		}
		pc = next
	}
	b = wire.AppendCompactSize(b, uint64(len(s)-seps))
	if seps == 0 {
		return append(b, s[:stop]...)
	}
	begin := 0
	for pc := 0; pc < stop; {
		op, _, next, _ := getOp(s, pc)
		pc = next
		if op == opCodeSeparator {
			b = append(b, s[begin:pc-1]...)
			begin = pc
		}
	}
	return append(b, s[begin:stop]...)
}
