package script

import (
	"encoding/binary"
	"hash"

	"utxod/wire"
)

var (
	ff8zero = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0}
)

// checkECDSA is Core's CheckECDSASignature for BASE and WITNESS_V0.
func (m *vm) checkECDSA(sig, pub, scriptCode []byte, sv sigVersion) bool {
	if !validPubKeySize(pub) || len(sig) == 0 {
		return false
	}
	ht := uint32(sig[len(sig)-1])
	der := sig[:len(sig)-1]
	if sv == svBase {
		m.legacySigHash(scriptCode, ht)
	} else {
		m.bip143SigHash(scriptCode, ht)
	}
	e := m.p.eng
	if !e.lookups() {
		return e.verifier.VerifyECDSA(pub, der, m.sum)
	}
	k := e.cache.ecdsaKey(m.scratch, &m.sum, pub, der)
	if e.cache.contains(&k) {
		return true
	}
	if !e.verifier.VerifyECDSA(pub, der, m.sum) {
		return false
	}
	if !e.noStore {
		e.cache.insert(&k)
	}
	return true
}

// lookups reports whether a signature is looked up in the cache: there is
// one, and it may hold an entry (an engine that inserts always looks, so
// that its first insertion is not lost).
func (e *NativeEngine) lookups() bool {
	return e.cache != nil && (!e.noStore || !e.cache.empty())
}

// checkSchnorr is Core's CheckSchnorrSignature; pub is 32 bytes.
func (m *vm) checkSchnorr(sig, pub []byte, sv sigVersion) ErrorCode {
	if len(sig) != 64 && len(sig) != 65 {
		return ErrSchnorrSigSize
	}
	ht := byte(0)
	if len(sig) == 65 {
		ht = sig[64]
		if ht == 0 {
			return ErrSchnorrSigHashType
		}
		sig = sig[:64]
	}
	if !m.taprootSigHash(ht, sv) {
		return ErrSchnorrSigHashType
	}
	e := m.p.eng
	var k [32]byte
	look := e.lookups()
	if look {
		k = e.cache.schnorrKey(m.scratch, &m.sum, pub, sig)
		if e.cache.contains(&k) {
			return ErrOK
		}
	}
	if !e.verifier.VerifySchnorr([32]byte(pub), [64]byte(sig), m.sum) {
		return ErrSchnorrSig
	}
	if look && !e.noStore {
		e.cache.insert(&k)
	}
	return ErrOK
}

// w32 writes a little-endian integer through m's scratch.
func (m *vm) w32(h hash.Hash, v uint32) {
	b := m.scratch[:4]
	binary.LittleEndian.PutUint32(b, v)
	h.Write(b)
}

// legacySigHash is LegacySigHash through the vm's writer; the result is
// in m.sum.
func (m *vm) legacySigHash(scriptCode []byte, hashType uint32) {
	m.sum = m.sw.legacy(m.p.tx, m.idx, scriptCode, hashType)
}

// bip143SigHash is Core's SignatureHash for WITNESS_V0 (BIP143); the
// result is in m.sum.
func (m *vm) bip143SigHash(scriptCode []byte, hashType uint32) {
	p, tx, idx := m.p, m.p.tx, m.idx
	p.initShared()
	base := hashType & 0x1f
	anyone := hashType&SigHashAnyoneCanPay != 0
	var outHash [32]byte
	switch {
	case base != SigHashSingle && base != SigHashNone:
		outHash = p.hashOutputs
	case base == SigHashSingle && idx < len(tx.Outputs):
		outHash = m.sw.double(appendTxOut(m.sw.start(), &tx.Outputs[idx]))
	}
	b := binary.LittleEndian.AppendUint32(m.sw.start(), uint32(tx.Version))
	if !anyone {
		b = append(b, p.hashPrevouts[:]...)
	} else {
		b = append(b, zero32[:]...)
	}
	if !anyone && base != SigHashSingle && base != SigHashNone {
		b = append(b, p.hashSequence[:]...)
	} else {
		b = append(b, zero32[:]...)
	}
	in := &tx.Inputs[idx]
	b = append(b, in.PrevHash[:]...)
	b = binary.LittleEndian.AppendUint32(b, in.PrevIndex)
	b = wire.AppendCompactSize(b, uint64(len(scriptCode)))
	b = append(b, scriptCode...)
	b = binary.LittleEndian.AppendUint64(b, uint64(p.prevouts[idx].Value))
	b = binary.LittleEndian.AppendUint32(b, in.Sequence)
	b = append(b, outHash[:]...)
	b = binary.LittleEndian.AppendUint32(b, tx.LockTime)
	b = binary.LittleEndian.AppendUint32(b, hashType)
	m.sum = m.sw.double(b)
}

// taprootSigHash is Core's SignatureHashSchnorr; the result is in m.sum.
// It returns false for an undefined hash type or SIGHASH_SINGLE without a
// matching output.
func (m *vm) taprootSigHash(ht byte, sv sigVersion) bool {
	p, tx, idx := m.p, m.p.tx, m.idx
	if !(ht <= 3 || (ht >= 0x81 && ht <= 0x83)) {
		return false
	}
	outputType := ht & 3
	if ht == 0 {
		outputType = SigHashAll
	}
	anyone := ht&SigHashAnyoneCanPay != 0
	if outputType == SigHashSingle {
		if idx >= len(tx.Outputs) {
			return false
		}
		if !m.ed.outputHashSet {
			h := m.h2
			h.Reset()
			writeTxOut(h, m.scratch, &tx.Outputs[idx])
			h.Sum(m.ed.outputHash[:0])
			m.ed.outputHashSet = true
		}
	}
	p.initShared()
	p.initTaproot()
	h := m.h
	h.Reset()
	h.Write(tagTapSighash[:])
	b := m.scratch[:2]
	b[0], b[1] = 0, ht // epoch, hash type
	h.Write(b)
	m.w32(h, uint32(tx.Version))
	m.w32(h, tx.LockTime)
	if !anyone {
		h.Write(p.shaPrevouts[:])
		h.Write(p.shaAmounts[:])
		h.Write(p.shaScriptPubKeys[:])
		h.Write(p.shaSequences[:])
	}
	if outputType == SigHashAll {
		h.Write(p.shaOutputs[:])
	}
	spendType := byte(0)
	if sv == svTapscript {
		spendType = 2
	}
	if m.ed.annexPresent {
		spendType |= 1
	}
	b = m.scratch[:1]
	b[0] = spendType
	h.Write(b)
	if anyone {
		in := &tx.Inputs[idx]
		h.Write(in.PrevHash[:])
		m.w32(h, in.PrevIndex)
		writeTxOut(h, m.scratch, &p.prevouts[idx])
		m.w32(h, in.Sequence)
	} else {
		m.w32(h, uint32(idx))
	}
	if m.ed.annexPresent {
		h.Write(m.ed.annexHash[:])
	}
	if outputType == SigHashSingle {
		h.Write(m.ed.outputHash[:])
	}
	if sv == svTapscript {
		h.Write(m.ed.tapleafHash[:])
		b = m.scratch[:1]
		b[0] = 0 // key_version
		h.Write(b)
		m.w32(h, m.ed.codesepPos)
	}
	h.Sum(m.sum[:0])
	return true
}
