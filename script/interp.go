package script

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"sync"

	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // consensus needs RIPEMD-160

	"utxod/wire"
)

// Core's limits (script/script.h, script/interpreter.h).
const (
	maxScriptElementSize   = 520
	maxOpsPerScript        = 201
	maxStackSize           = 1000
	validationWeightPerSig = 50
	validationWeightOffset = 50
	taprootLeafMask        = 0xfe
	taprootLeafTapscript   = 0xc0
	taprootControlBase     = 33
	taprootControlNode     = 32
	taprootControlMax      = taprootControlBase + taprootControlNode*128
	annexTag               = 0x50
	locktimeThreshold      = 500_000_000
	seqFinal               = 0xffffffff
	seqDisableFlag         = 1 << 31
	seqTypeFlag            = 1 << 22
	seqMask                = 0x0000ffff
)

type sigVersion uint8

const (
	svBase sigVersion = iota
	svWitnessV0
	svTaproot
	svTapscript
)

var (
	vchTrue  = []byte{1}
	vchFalse = []byte{}
)

// execData is Core's ScriptExecutionData.
type execData struct {
	annexPresent  bool
	annexHash     [32]byte
	tapleafHash   [32]byte
	codesepPos    uint32
	weightLeft    int64
	outputHashSet bool
	outputHash    [32]byte
}

// condStack is Core's ConditionStack: only the size and the position of
// the first false entry matter.
type condStack struct {
	size       uint32
	firstFalse uint32
}

const noFalse = ^uint32(0)

func (c *condStack) reset()        { c.size, c.firstFalse = 0, noFalse }
func (c *condStack) empty() bool   { return c.size == 0 }
func (c *condStack) allTrue() bool { return c.firstFalse == noFalse }
func (c *condStack) push(v bool) {
	if c.firstFalse == noFalse && !v {
		c.firstFalse = c.size
	}
	c.size++
}
func (c *condStack) pop() {
	c.size--
	if c.firstFalse == c.size {
		c.firstFalse = noFalse
	}
}
func (c *condStack) toggle() {
	if c.firstFalse == noFalse {
		c.firstFalse = c.size - 1
	} else if c.firstFalse == c.size-1 {
		c.firstFalse = noFalse
	}
}

// vm is the per-goroutine execution state, pooled.
type vm struct {
	p     *nativeTx
	idx   int
	flags Flags

	stack, alt, stackCopy [][]byte
	arena                 []byte
	cond                  condStack
	ed                    execData

	h, h2   hash.Hash // SHA-256
	rmd     hash.Hash
	scratch []byte // cache keys, serialization
	sw      sigWriter
	code    [2][]byte
	p2wpkh  [25]byte
	sum     [32]byte
}

var vmPool = sync.Pool{New: func() any {
	return &vm{
		stack:     make([][]byte, 0, 64),
		alt:       make([][]byte, 0, 16),
		stackCopy: make([][]byte, 0, 64),
		arena:     make([]byte, 0, 4096),
		h:         sha256.New(),
		h2:        sha256.New(),
		rmd:       ripemd160.New(),
		scratch:   make([]byte, 0, 512),
		sw:        sigWriter{buf: make([]byte, 0, 512)},
	}
}}

// release drops references into the transaction before pooling.
func (m *vm) release() {
	clear(m.stack[:cap(m.stack)])
	clear(m.alt[:cap(m.alt)])
	clear(m.stackCopy[:cap(m.stackCopy)])
	m.stack, m.alt, m.stackCopy = m.stack[:0], m.alt[:0], m.stackCopy[:0]
	m.p = nil
	if cap(m.arena) > 1<<20 {
		m.arena = make([]byte, 0, 4096)
	}
	m.arena = m.arena[:0]
}

// alloc returns n fresh bytes from the arena. Earlier slices stay valid
// when the arena grows (a new chunk is started).
func (m *vm) alloc(n int) []byte {
	if len(m.arena)+n > cap(m.arena) {
		c := 4096
		if n > c {
			c = n
		}
		m.arena = make([]byte, 0, c)
	}
	l := len(m.arena)
	m.arena = m.arena[:l+n]
	return m.arena[l : l+n : l+n]
}

func (m *vm) push(b []byte)    { m.stack = append(m.stack, b) }
func (m *vm) top(i int) []byte { return m.stack[len(m.stack)+i] }
func (m *vm) pop()             { m.stack = m.stack[:len(m.stack)-1] }
func (m *vm) pushBool(b bool) {
	if b {
		m.push(vchTrue)
	} else {
		m.push(vchFalse)
	}
}

// pushNum pushes CScriptNum::serialize(n).
func (m *vm) pushNum(n int64) {
	if n == 0 {
		m.push(vchFalse)
		return
	}
	neg := n < 0
	abs := uint64(n)
	if neg {
		abs = uint64(-n)
	}
	var tmp [9]byte
	k := 0
	for abs > 0 {
		tmp[k] = byte(abs)
		abs >>= 8
		k++
	}
	if tmp[k-1]&0x80 != 0 {
		if neg {
			tmp[k] = 0x80
		} else {
			tmp[k] = 0
		}
		k++
	} else if neg {
		tmp[k-1] |= 0x80
	}
	b := m.alloc(k)
	copy(b, tmp[:k])
	m.push(b)
}

// decodeNum is CScriptNum's constructor: ErrOK or ErrScriptNum.
func decodeNum(b []byte, minimal bool, maxLen int) (int64, ErrorCode) {
	if len(b) > maxLen {
		return 0, ErrScriptNum
	}
	if len(b) == 0 {
		return 0, ErrOK
	}
	if minimal && b[len(b)-1]&0x7f == 0 && (len(b) <= 1 || b[len(b)-2]&0x80 == 0) {
		return 0, ErrScriptNum
	}
	var v int64
	for i, c := range b {
		v |= int64(c) << (8 * i)
	}
	if b[len(b)-1]&0x80 != 0 {
		return -(v &^ (int64(0x80) << (8 * (len(b) - 1)))), ErrOK
	}
	return v, ErrOK
}

// clampInt is CScriptNum::getint.
func clampInt(v int64) int {
	if v > 1<<31-1 {
		return 1<<31 - 1
	}
	if v < -1<<31 {
		return -1 << 31
	}
	return int(v)
}

// castToBool is Core's CastToBool.
func castToBool(b []byte) bool {
	for i, c := range b {
		if c != 0 {
			return !(i == len(b)-1 && c == 0x80)
		}
	}
	return false
}

// checkMinimalPush is Core's CheckMinimalPush.
func checkMinimalPush(data []byte, op byte) bool {
	n := len(data)
	switch {
	case n == 0:
		return op == op0
	case n == 1 && data[0] >= 1 && data[0] <= 16:
		return op == op1+data[0]-1
	case n == 1 && data[0] == 0x81:
		return op == op1Negate
	case n <= 75:
		return int(op) == n
	case n <= 255:
		return op == opPushData1
	case n <= 65535:
		return op == opPushData2
	}
	return true
}

// isValidSignatureEncoding is Core's IsValidSignatureEncoding (BIP66),
// over the signature including its hash-type byte.
func isValidSignatureEncoding(sig []byte) bool {
	n := len(sig)
	if n < 9 || n > 73 {
		return false
	}
	if sig[0] != 0x30 || int(sig[1]) != n-3 {
		return false
	}
	lenR := int(sig[3])
	if 5+lenR >= n {
		return false
	}
	lenS := int(sig[5+lenR])
	if lenR+lenS+7 != n {
		return false
	}
	if sig[2] != 0x02 || lenR == 0 || sig[4]&0x80 != 0 {
		return false
	}
	if lenR > 1 && sig[4] == 0 && sig[5]&0x80 == 0 {
		return false
	}
	if sig[lenR+4] != 0x02 || lenS == 0 || sig[lenR+6]&0x80 != 0 {
		return false
	}
	if lenS > 1 && sig[lenR+6] == 0 && sig[lenR+7]&0x80 == 0 {
		return false
	}
	return true
}

// checkSignatureEncoding is Core's CheckSignatureEncoding.
func checkSignatureEncoding(sig []byte, flags Flags) ErrorCode {
	if len(sig) == 0 {
		return ErrOK
	}
	if flags&(DERSig|LowS|StrictEnc) != 0 && !isValidSignatureEncoding(sig) {
		return ErrSigDER
	}
	if flags&LowS != 0 && !CheckLowS(sig[:len(sig)-1]) {
		return ErrSigHighS
	}
	if flags&StrictEnc != 0 {
		ht := sig[len(sig)-1] &^ SigHashAnyoneCanPay
		if ht < SigHashAll || ht > SigHashSingle {
			return ErrSigHashType
		}
	}
	return ErrOK
}

// checkPubKeyEncoding is Core's CheckPubKeyEncoding.
func checkPubKeyEncoding(pk []byte, flags Flags, sv sigVersion) ErrorCode {
	if flags&StrictEnc != 0 {
		ok := false
		if len(pk) >= 33 {
			switch pk[0] {
			case 4:
				ok = len(pk) == 65
			case 2, 3:
				ok = len(pk) == 33
			}
		}
		if !ok {
			return ErrPubKeyType
		}
	}
	if flags&WitnessPubkeyType != 0 && sv == svWitnessV0 && !(len(pk) == 33 && (pk[0] == 2 || pk[0] == 3)) {
		return ErrWitnessPubKeyType
	}
	return ErrOK
}

// pushEncoding appends CScript() << data (the minimal-length push opcode
// Core's operator<< picks) to dst.
func pushEncoding(dst, data []byte) []byte {
	n := len(data)
	switch {
	case n < opPushData1:
		dst = append(dst, byte(n))
	case n <= 0xff:
		dst = append(dst, opPushData1, byte(n))
	case n <= 0xffff:
		dst = append(dst, opPushData2, byte(n), byte(n>>8))
	default:
		dst = append(dst, opPushData4, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	}
	return append(dst, data...)
}

// findAndDelete is Core's FindAndDelete: it removes every occurrence of
// pattern that starts at an opcode boundary of script. The result is
// written to dst (reused) when something was found; otherwise script
// itself is returned.
func findAndDelete(dst, script, pattern []byte) ([]byte, int) {
	if len(pattern) == 0 {
		return script, 0
	}
	// Fast path: most scripts contain no match; find that out without
	// writing anything.
	any := false
	for pc := 0; ; {
		if len(script)-pc >= len(pattern) && bytes.Equal(script[pc:pc+len(pattern)], pattern) {
			any = true
			break
		}
		_, _, next, ok := getOp(script, pc)
		if !ok {
			break
		}
		pc = next
	}
	if !any {
		return script, 0
	}
	found := 0
	dst = dst[:0]
	pc, pc2 := 0, 0
	for {
		dst = append(dst, script[pc2:pc]...)
		for len(script)-pc >= len(pattern) && bytes.Equal(script[pc:pc+len(pattern)], pattern) {
			pc += len(pattern)
			found++
		}
		pc2 = pc
		_, _, next, ok := getOp(script, pc)
		if !ok {
			break
		}
		pc = next
	}
	if found == 0 {
		return script, 0
	}
	dst = append(dst, script[pc2:]...)
	return dst, found
}

// verifyScript is Core's VerifyScript; it returns ErrOK or the ScriptError
// code.
func (m *vm) verifyScript(scriptSig, pk []byte, witness [][]byte) ErrorCode {
	flags := m.flags
	if flags&SigPushOnly != 0 && !IsPushOnly(scriptSig) {
		return ErrSigPushOnly
	}
	m.stack = m.stack[:0]
	if e := m.eval(scriptSig, svBase); e != ErrOK {
		return e
	}
	if flags&P2SH != 0 {
		m.stackCopy = append(m.stackCopy[:0], m.stack...)
	}
	if e := m.eval(pk, svBase); e != ErrOK {
		return e
	}
	if len(m.stack) == 0 || !castToBool(m.top(-1)) {
		return ErrEvalFalse
	}
	hadWitness := false
	if flags&Witness != 0 {
		if v, prog, ok := IsWitnessProgram(pk); ok {
			hadWitness = true
			if len(scriptSig) != 0 {
				return ErrWitnessMalleated
			}
			if e := m.verifyWitnessProgram(witness, v, prog, false); e != ErrOK {
				return e
			}
			m.stack = m.stack[:1]
		}
	}
	if flags&P2SH != 0 && IsPayToScriptHash(pk) {
		if !IsPushOnly(scriptSig) {
			return ErrSigPushOnly
		}
		m.stack, m.stackCopy = m.stackCopy, m.stack
		redeem := m.top(-1)
		m.pop()
		if e := m.eval(redeem, svBase); e != ErrOK {
			return e
		}
		if len(m.stack) == 0 || !castToBool(m.top(-1)) {
			return ErrEvalFalse
		}
		if flags&Witness != 0 {
			if v, prog, ok := IsWitnessProgram(redeem); ok {
				hadWitness = true
				if !isSinglePushOf(scriptSig, redeem) {
					return ErrWitnessMalleatedP2SH
				}
				if e := m.verifyWitnessProgram(witness, v, prog, true); e != ErrOK {
					return e
				}
				m.stack = m.stack[:1]
			}
		}
	}
	if flags&CleanStack != 0 && len(m.stack) != 1 {
		return ErrCleanStack
	}
	if flags&Witness != 0 && !hadWitness && len(witness) != 0 {
		return ErrWitnessUnexpected
	}
	return ErrOK
}

// isSinglePushOf reports scriptSig == CScript() << redeem.
func isSinglePushOf(scriptSig, redeem []byte) bool {
	n := len(redeem)
	var hdr int
	switch {
	case n < opPushData1:
		hdr = 1
	case n <= 0xff:
		hdr = 2
	case n <= 0xffff:
		hdr = 3
	default:
		hdr = 5
	}
	if len(scriptSig) != hdr+n {
		return false
	}
	switch hdr {
	case 1:
		if scriptSig[0] != byte(n) {
			return false
		}
	case 2:
		if scriptSig[0] != opPushData1 || scriptSig[1] != byte(n) {
			return false
		}
	case 3:
		if scriptSig[0] != opPushData2 || binary.LittleEndian.Uint16(scriptSig[1:]) != uint16(n) {
			return false
		}
	default:
		if scriptSig[0] != opPushData4 || binary.LittleEndian.Uint32(scriptSig[1:]) != uint32(n) {
			return false
		}
	}
	return bytes.Equal(scriptSig[hdr:], redeem)
}

// verifyWitnessProgram is Core's VerifyWitnessProgram.
func (m *vm) verifyWitnessProgram(wit [][]byte, version int, prog []byte, isP2SH bool) ErrorCode {
	m.ed = execData{}
	flags := m.flags
	switch {
	case version == 0:
		switch len(prog) {
		case 32:
			if len(wit) == 0 {
				return ErrWitnessProgramWitnessEmpty
			}
			script := wit[len(wit)-1]
			if sha256.Sum256(script) != [32]byte(prog) {
				return ErrWitnessProgramMismatch
			}
			return m.execWitness(wit[:len(wit)-1], script, svWitnessV0)
		case 20:
			if len(wit) != 2 {
				return ErrWitnessProgramMismatch
			}
			s := m.p2wpkh[:]
			s[0], s[1], s[2] = opDup, opHash160, 20
			copy(s[3:23], prog)
			s[23], s[24] = opEqualVerify, opCheckSig
			return m.execWitness(wit, s, svWitnessV0)
		}
		return ErrWitnessProgramWrongLength
	case version == 1 && len(prog) == 32 && !isP2SH:
		if flags&Taproot == 0 {
			return ErrOK
		}
		if len(wit) == 0 {
			return ErrWitnessProgramWitnessEmpty
		}
		stack := wit
		if len(stack) >= 2 {
			if a := stack[len(stack)-1]; len(a) > 0 && a[0] == annexTag {
				h := m.h2
				h.Reset()
				var b [9]byte
				h.Write(wire.AppendCompactSize(b[:0], uint64(len(a))))
				h.Write(a)
				h.Sum(m.ed.annexHash[:0])
				m.ed.annexPresent = true
				stack = stack[:len(stack)-1]
			}
		}
		if len(stack) == 1 {
			return m.checkSchnorr(stack[0], prog, svTaproot)
		}
		control := stack[len(stack)-1]
		script := stack[len(stack)-2]
		stack = stack[:len(stack)-2]
		if len(control) < taprootControlBase || len(control) > taprootControlMax ||
			(len(control)-taprootControlBase)%taprootControlNode != 0 {
			return ErrTaprootWrongControlSize
		}
		leafVer := control[0] & taprootLeafMask
		m.tapleafHash(leafVer, script)
		if !m.verifyTaprootCommitment(control, prog) {
			return ErrWitnessProgramMismatch
		}
		if leafVer == taprootLeafTapscript {
			m.ed.weightLeft = int64(witnessSerializeSize(wit)) + validationWeightOffset
			return m.execWitness(stack, script, svTapscript)
		}
		if flags&DiscourageUpgradableTaprootVersion != 0 {
			return ErrDiscourageUpgradableTaprootVersion
		}
		return ErrOK
	case !isP2SH && version == 1 && len(prog) == 2 && prog[0] == 0x4e && prog[1] == 0x73:
		// Pay-to-anchor (Core 28+): spendable, never discouraged.
		return ErrOK
	}
	if flags&DiscourageUpgradableWitnessProgram != 0 {
		return ErrDiscourageUpgradableWitnessProgram
	}
	return ErrOK
}

// witnessSerializeSize is GetSerializeSize(witness.stack).
func witnessSerializeSize(wit [][]byte) int {
	n := wire.CompactSizeLen(uint64(len(wit)))
	for _, w := range wit {
		n += wire.CompactSizeLen(uint64(len(w))) + len(w)
	}
	return n
}

// tapleafHash sets ed.tapleafHash = TapLeaf(leafVer || ser(script)).
func (m *vm) tapleafHash(leafVer byte, script []byte) {
	h := m.h2
	h.Reset()
	h.Write(tagTapLeaf[:])
	var b [10]byte
	b[0] = leafVer
	h.Write(wire.AppendCompactSize(b[:1], uint64(len(script))))
	h.Write(script)
	h.Sum(m.ed.tapleafHash[:0])
}

// verifyTaprootCommitment is Core's VerifyTaprootCommitment.
func (m *vm) verifyTaprootCommitment(control, prog []byte) bool {
	k := m.ed.tapleafHash
	h := m.h2
	for pos := taprootControlBase; pos < len(control); pos += taprootControlNode {
		node := control[pos : pos+taprootControlNode]
		h.Reset()
		h.Write(tagTapBranch[:])
		if bytes.Compare(k[:], node) < 0 {
			h.Write(k[:])
			h.Write(node)
		} else {
			h.Write(node)
			h.Write(k[:])
		}
		h.Sum(k[:0])
	}
	var internal [32]byte
	copy(internal[:], control[1:33])
	h.Reset()
	h.Write(tagTapTweak[:])
	h.Write(internal[:])
	h.Write(k[:])
	var tweak [32]byte
	h.Sum(tweak[:0])
	return m.p.eng.verifier.CheckTapTweak(internal, [32]byte(prog), tweak, control[0]&1 == 1)
}

// execWitness is Core's ExecuteWitnessScript.
func (m *vm) execWitness(items [][]byte, script []byte, sv sigVersion) ErrorCode {
	if sv == svTapscript {
		for pc := 0; pc < len(script); {
			op, _, next, ok := getOp(script, pc)
			if !ok {
				return ErrBadOpcode
			}
			if isOpSuccess(op) {
				if m.flags&DiscourageOpSuccess != 0 {
					return ErrDiscourageOpSuccess
				}
				return ErrOK
			}
			pc = next
		}
		if len(items) > maxStackSize {
			return ErrStackSize
		}
	}
	for _, it := range items {
		if len(it) > maxScriptElementSize {
			return ErrPushSize
		}
	}
	m.stack = append(m.stack[:0], items...)
	if e := m.eval(script, sv); e != ErrOK {
		return e
	}
	if len(m.stack) != 1 {
		return ErrCleanStack
	}
	if !castToBool(m.stack[0]) {
		return ErrEvalFalse
	}
	return ErrOK
}
