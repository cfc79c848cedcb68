package script

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
)

// eval is Core's EvalScript over m.stack; it returns ErrOK or the
// ScriptError code.
func (m *vm) eval(script []byte, sv sigVersion) ErrorCode {
	if (sv == svBase || sv == svWitnessV0) && len(script) > MaxScriptSize {
		return ErrScriptSize
	}
	flags := m.flags
	minimal := flags&MinimalData != 0
	m.alt = m.alt[:0]
	m.cond.reset()
	pbegin := 0
	opCount := 0
	m.ed.codesepPos = 0xffffffff
	legacyLimits := sv == svBase || sv == svWitnessV0
	var opcodePos uint32
	for pc := 0; pc < len(script); opcodePos++ {
		fExec := m.cond.allTrue()
		op, data, next, ok := getOp(script, pc)
		if !ok {
			return ErrBadOpcode
		}
		pc = next
		if len(data) > maxScriptElementSize {
			return ErrPushSize
		}
		if legacyLimits && op > op16 {
			opCount++
			if opCount > maxOpsPerScript {
				return ErrOpCount
			}
		}
		if isDisabledOpcode(op) {
			return ErrDisabledOpcode
		}
		if op == opCodeSeparator && sv == svBase && flags&ConstScriptcode != 0 {
			return ErrOpCodeSeparator
		}
		if fExec && op <= opPushData4 {
			if minimal && !checkMinimalPush(data, op) {
				return ErrMinimalData
			}
			if data == nil {
				data = vchFalse
			}
			m.push(data)
		} else if fExec || (opIf <= op && op <= opEndIf) {
			switch {
			case op == op1Negate || (op >= op1 && op <= op16):
				m.pushNum(int64(op) - int64(op1-1))
			case op == opNop:
			case op == opCLTV:
				if flags&CheckLockTimeVerify == 0 {
					break
				}
				n, e := m.lockTimeOperand(minimal)
				if e != ErrOK {
					return e
				}
				if !m.checkLockTime(n) {
					return ErrUnsatisfiedLocktime
				}
			case op == opCSV:
				if flags&CheckSequenceVerify == 0 {
					break
				}
				n, e := m.lockTimeOperand(minimal)
				if e != ErrOK {
					return e
				}
				if n&seqDisableFlag != 0 {
					break
				}
				if !m.checkSequence(n) {
					return ErrUnsatisfiedLocktime
				}
			case op == opNop1 || (op >= opNop4 && op <= opNop10):
				if flags&DiscourageUpgradableNops != 0 {
					return ErrDiscourageUpgradableNops
				}
			case op == opIf || op == opNotIf:
				v := false
				if fExec {
					if len(m.stack) < 1 {
						// Core before 2024 said UNBALANCED_CONDITIONAL; the
						// current script_tests.json expects this code.
						return ErrInvalidStackOperation
					}
					vch := m.top(-1)
					if sv == svTapscript && (len(vch) > 1 || (len(vch) == 1 && vch[0] != 1)) {
						return ErrTapscriptMinimalIf
					}
					if sv == svWitnessV0 && flags&MinimalIf != 0 && (len(vch) > 1 || (len(vch) == 1 && vch[0] != 1)) {
						return ErrMinimalIf
					}
					v = castToBool(vch)
					if op == opNotIf {
						v = !v
					}
					m.pop()
				}
				m.cond.push(v)
			case op == opElse:
				if m.cond.empty() {
					return ErrUnbalancedConditional
				}
				m.cond.toggle()
			case op == opEndIf:
				if m.cond.empty() {
					return ErrUnbalancedConditional
				}
				m.cond.pop()
			case op == opVerify:
				if len(m.stack) < 1 {
					return ErrInvalidStackOperation
				}
				if !castToBool(m.top(-1)) {
					return ErrVerify
				}
				m.pop()
			case op == opReturn:
				return ErrOpReturn
			case op == opToAltStack:
				if len(m.stack) < 1 {
					return ErrInvalidStackOperation
				}
				m.alt = append(m.alt, m.top(-1))
				m.pop()
			case op == opFromAltStack:
				if len(m.alt) < 1 {
					return ErrInvalidAltstackOperation
				}
				m.push(m.alt[len(m.alt)-1])
				m.alt = m.alt[:len(m.alt)-1]
			case op == op2Drop:
				if len(m.stack) < 2 {
					return ErrInvalidStackOperation
				}
				m.stack = m.stack[:len(m.stack)-2]
			case op == op2Dup:
				if len(m.stack) < 2 {
					return ErrInvalidStackOperation
				}
				a, b := m.top(-2), m.top(-1)
				m.push(a)
				m.push(b)
			case op == op3Dup:
				if len(m.stack) < 3 {
					return ErrInvalidStackOperation
				}
				a, b, c := m.top(-3), m.top(-2), m.top(-1)
				m.push(a)
				m.push(b)
				m.push(c)
			case op == op2Over:
				if len(m.stack) < 4 {
					return ErrInvalidStackOperation
				}
				a, b := m.top(-4), m.top(-3)
				m.push(a)
				m.push(b)
			case op == op2Rot:
				if len(m.stack) < 6 {
					return ErrInvalidStackOperation
				}
				n := len(m.stack)
				a, b := m.stack[n-6], m.stack[n-5]
				copy(m.stack[n-6:], m.stack[n-4:])
				m.stack[n-2], m.stack[n-1] = a, b
			case op == op2Swap:
				if len(m.stack) < 4 {
					return ErrInvalidStackOperation
				}
				n := len(m.stack)
				m.stack[n-4], m.stack[n-2] = m.stack[n-2], m.stack[n-4]
				m.stack[n-3], m.stack[n-1] = m.stack[n-1], m.stack[n-3]
			case op == opIfDup:
				if len(m.stack) < 1 {
					return ErrInvalidStackOperation
				}
				if v := m.top(-1); castToBool(v) {
					m.push(v)
				}
			case op == opDepth:
				m.pushNum(int64(len(m.stack)))
			case op == opDrop:
				if len(m.stack) < 1 {
					return ErrInvalidStackOperation
				}
				m.pop()
			case op == opDup:
				if len(m.stack) < 1 {
					return ErrInvalidStackOperation
				}
				m.push(m.top(-1))
			case op == opNip:
				if len(m.stack) < 2 {
					return ErrInvalidStackOperation
				}
				n := len(m.stack)
				m.stack[n-2] = m.stack[n-1]
				m.stack = m.stack[:n-1]
			case op == opOver:
				if len(m.stack) < 2 {
					return ErrInvalidStackOperation
				}
				m.push(m.top(-2))
			case op == opPick || op == opRoll:
				if len(m.stack) < 2 {
					return ErrInvalidStackOperation
				}
				v, e := decodeNum(m.top(-1), minimal, 4)
				if e != ErrOK {
					return e
				}
				n := clampInt(v)
				m.pop()
				if n < 0 || n >= len(m.stack) {
					return ErrInvalidStackOperation
				}
				l := len(m.stack)
				x := m.stack[l-n-1]
				if op == opRoll {
					copy(m.stack[l-n-1:], m.stack[l-n:])
					m.stack = m.stack[:l-1]
				}
				m.push(x)
			case op == opRot:
				if len(m.stack) < 3 {
					return ErrInvalidStackOperation
				}
				n := len(m.stack)
				m.stack[n-3], m.stack[n-2], m.stack[n-1] = m.stack[n-2], m.stack[n-1], m.stack[n-3]
			case op == opSwap:
				if len(m.stack) < 2 {
					return ErrInvalidStackOperation
				}
				n := len(m.stack)
				m.stack[n-2], m.stack[n-1] = m.stack[n-1], m.stack[n-2]
			case op == opTuck:
				if len(m.stack) < 2 {
					return ErrInvalidStackOperation
				}
				n := len(m.stack)
				v := m.stack[n-1]
				m.push(nil)
				m.stack[n] = m.stack[n-1]
				m.stack[n-1] = m.stack[n-2]
				m.stack[n-2] = v
			case op == opSize:
				if len(m.stack) < 1 {
					return ErrInvalidStackOperation
				}
				m.pushNum(int64(len(m.top(-1))))
			case op == opEqual || op == opEqualVerify:
				if len(m.stack) < 2 {
					return ErrInvalidStackOperation
				}
				eq := bytes.Equal(m.top(-2), m.top(-1))
				m.stack = m.stack[:len(m.stack)-2]
				m.pushBool(eq)
				if op == opEqualVerify {
					if !eq {
						return ErrEqualVerify
					}
					m.pop()
				}
			case op >= op1Add && op <= op0NotEqual:
				if len(m.stack) < 1 {
					return ErrInvalidStackOperation
				}
				bn, e := decodeNum(m.top(-1), minimal, 4)
				if e != ErrOK {
					return e
				}
				switch op {
				case op1Add:
					bn++
				case op1Sub:
					bn--
				case opNegate:
					bn = -bn
				case opAbs:
					if bn < 0 {
						bn = -bn
					}
				case opNot:
					bn = b2i(bn == 0)
				case op0NotEqual:
					bn = b2i(bn != 0)
				default:
					return ErrBadOpcode
				}
				m.pop()
				m.pushNum(bn)
			case op >= opAdd && op <= opMax:
				if len(m.stack) < 2 {
					return ErrInvalidStackOperation
				}
				a, e := decodeNum(m.top(-2), minimal, 4)
				if e != ErrOK {
					return e
				}
				b, e := decodeNum(m.top(-1), minimal, 4)
				if e != ErrOK {
					return e
				}
				var r int64
				switch op {
				case opAdd:
					r = a + b
				case opSub:
					r = a - b
				case opBoolAnd:
					r = b2i(a != 0 && b != 0)
				case opBoolOr:
					r = b2i(a != 0 || b != 0)
				case opNumEqual, opNumEqualVerify:
					r = b2i(a == b)
				case opNumNotEqual:
					r = b2i(a != b)
				case opLessThan:
					r = b2i(a < b)
				case opGreaterThan:
					r = b2i(a > b)
				case opLessThanOrEq:
					r = b2i(a <= b)
				case opGreaterThanOrE:
					r = b2i(a >= b)
				case opMin:
					r = min(a, b)
				case opMax:
					r = max(a, b)
				default:
					return ErrBadOpcode
				}
				m.stack = m.stack[:len(m.stack)-2]
				m.pushNum(r)
				if op == opNumEqualVerify {
					if !castToBool(m.top(-1)) {
						return ErrNumEqualVerify
					}
					m.pop()
				}
			case op == opWithin:
				if len(m.stack) < 3 {
					return ErrInvalidStackOperation
				}
				x, e := decodeNum(m.top(-3), minimal, 4)
				if e != ErrOK {
					return e
				}
				lo, e := decodeNum(m.top(-2), minimal, 4)
				if e != ErrOK {
					return e
				}
				hi, e := decodeNum(m.top(-1), minimal, 4)
				if e != ErrOK {
					return e
				}
				m.stack = m.stack[:len(m.stack)-3]
				m.pushBool(lo <= x && x < hi)
			case op >= opRipemd160 && op <= opHash256:
				if len(m.stack) < 1 {
					return ErrInvalidStackOperation
				}
				v := m.top(-1)
				var out []byte
				switch op {
				case opRipemd160:
					out = m.alloc(20)
					m.rmd.Reset()
					m.rmd.Write(v)
					m.rmd.Sum(out[:0])
				case opSha1:
					out = m.alloc(20)
					s := sha1.Sum(v)
					copy(out, s[:])
				case opSha256:
					out = m.alloc(32)
					s := sha256.Sum256(v)
					copy(out, s[:])
				case opHash160:
					out = m.alloc(20)
					m.sum = sha256.Sum256(v)
					m.rmd.Reset()
					m.rmd.Write(m.sum[:])
					m.rmd.Sum(out[:0])
				case opHash256:
					out = m.alloc(32)
					s := sha256.Sum256(v)
					s = sha256.Sum256(s[:])
					copy(out, s[:])
				}
				m.pop()
				m.push(out)
			case op == opCodeSeparator:
				pbegin = pc
				m.ed.codesepPos = opcodePos
			case op == opCheckSig || op == opCheckSigVerify:
				if len(m.stack) < 2 {
					return ErrInvalidStackOperation
				}
				ok, e := m.evalChecksig(m.top(-2), m.top(-1), script[pbegin:], sv)
				if e != ErrOK {
					return e
				}
				m.stack = m.stack[:len(m.stack)-2]
				m.pushBool(ok)
				if op == opCheckSigVerify {
					if !ok {
						return ErrCheckSigVerify
					}
					m.pop()
				}
			case op == opCheckSigAdd:
				if sv == svBase || sv == svWitnessV0 {
					return ErrBadOpcode
				}
				if len(m.stack) < 3 {
					return ErrInvalidStackOperation
				}
				num, e := decodeNum(m.top(-2), minimal, 4)
				if e != ErrOK {
					return e
				}
				ok, e := m.evalChecksig(m.top(-3), m.top(-1), script[pbegin:], sv)
				if e != ErrOK {
					return e
				}
				m.stack = m.stack[:len(m.stack)-3]
				m.pushNum(num + b2i(ok))
			case op == opCheckMultiSig || op == opCheckMultiSigVerif:
				if sv == svTapscript {
					return ErrTapscriptCheckMultisig
				}
				ok, e := m.checkMultisig(script[pbegin:], sv, &opCount)
				if e != ErrOK {
					return e
				}
				m.pushBool(ok)
				if op == opCheckMultiSigVerif {
					if !ok {
						return ErrCheckMultisigVerify
					}
					m.pop()
				}
			default:
				return ErrBadOpcode
			}
		}
		if len(m.stack)+len(m.alt) > maxStackSize {
			return ErrStackSize
		}
	}
	if !m.cond.empty() {
		return ErrUnbalancedConditional
	}
	return ErrOK
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// checkLockTime is Core's CheckLockTime.
func (m *vm) checkLockTime(n int64) bool {
	tx := m.p.tx
	lt := int64(tx.LockTime)
	if !((lt < locktimeThreshold && n < locktimeThreshold) || (lt >= locktimeThreshold && n >= locktimeThreshold)) {
		return false
	}
	if n > lt {
		return false
	}
	return tx.Inputs[m.idx].Sequence != seqFinal
}

// checkSequence is Core's CheckSequence.
func (m *vm) checkSequence(n int64) bool {
	tx := m.p.tx
	seq := int64(tx.Inputs[m.idx].Sequence)
	if uint32(tx.Version) < 2 {
		return false
	}
	if seq&seqDisableFlag != 0 {
		return false
	}
	const mask = seqTypeFlag | seqMask
	seqM := seq & mask
	nM := n & mask
	if !((seqM < seqTypeFlag && nM < seqTypeFlag) || (seqM >= seqTypeFlag && nM >= seqTypeFlag)) {
		return false
	}
	return nM <= seqM
}

// evalChecksig is Core's EvalChecksig: ok is the signature result; a
// non-empty name aborts the script.
func (m *vm) evalChecksig(sig, pub, scriptCode []byte, sv sigVersion) (bool, ErrorCode) {
	if sv == svTapscript {
		return m.evalChecksigTapscript(sig, pub)
	}
	if sv == svBase {
		var pat []byte
		pat = pushEncoding(m.scratch[:0], sig)
		var found int
		scriptCode, found = findAndDelete(m.code[0][:0], scriptCode, pat)
		if found > 0 {
			m.code[0] = scriptCode
			if m.flags&ConstScriptcode != 0 {
				return false, ErrSigFindAndDelete
			}
		}
	}
	if e := checkSignatureEncoding(sig, m.flags); e != ErrOK {
		return false, e
	}
	if e := checkPubKeyEncoding(pub, m.flags, sv); e != ErrOK {
		return false, e
	}
	ok := m.checkECDSA(sig, pub, scriptCode, sv)
	if !ok && m.flags&NullFail != 0 && len(sig) != 0 {
		return false, ErrNullFail
	}
	return ok, ErrOK
}

// evalChecksigTapscript is Core's EvalChecksigTapscript.
func (m *vm) evalChecksigTapscript(sig, pub []byte) (bool, ErrorCode) {
	success := len(sig) != 0
	if success {
		m.ed.weightLeft -= validationWeightPerSig
		if m.ed.weightLeft < 0 {
			return false, ErrTapscriptValidationWeight
		}
	}
	switch {
	case len(pub) == 0:
		return false, ErrTapscriptEmptyPubKey
	case len(pub) == 32:
		if success {
			if e := m.checkSchnorr(sig, pub, svTapscript); e != ErrOK {
				return false, e
			}
		}
	default:
		if m.flags&DiscourageUpgradablePubkeyType != 0 {
			return false, ErrDiscourageUpgradablePubKeyType
		}
	}
	return success, ErrOK
}

// checkMultisig runs OP_CHECKMULTISIG(VERIFY) up to pushing the result.
func (m *vm) checkMultisig(scriptCode []byte, sv sigVersion, opCount *int) (bool, ErrorCode) {
	flags := m.flags
	minimal := flags&MinimalData != 0
	i := 1
	if len(m.stack) < i {
		return false, ErrInvalidStackOperation
	}
	v, e := decodeNum(m.top(-i), minimal, 4)
	if e != ErrOK {
		return false, e
	}
	nKeys := clampInt(v)
	if nKeys < 0 || nKeys > MaxPubkeysPerMultisig {
		return false, ErrPubKeyCount
	}
	*opCount += nKeys
	if *opCount > maxOpsPerScript {
		return false, ErrOpCount
	}
	i++
	ikey := i
	ikey2 := nKeys + 2
	i += nKeys
	if len(m.stack) < i {
		return false, ErrInvalidStackOperation
	}
	v, e = decodeNum(m.top(-i), minimal, 4)
	if e != ErrOK {
		return false, e
	}
	nSigs := clampInt(v)
	if nSigs < 0 || nSigs > nKeys {
		return false, ErrSigCount
	}
	i++
	isig := i
	i += nSigs
	if len(m.stack) < i {
		return false, ErrInvalidStackOperation
	}
	if sv == svBase {
		buf := 0
		for k := 0; k < nSigs; k++ {
			pat := pushEncoding(m.scratch[:0], m.top(-isig-k))
			out, found := findAndDelete(m.code[buf][:0], scriptCode, pat)
			if found > 0 {
				if flags&ConstScriptcode != 0 {
					return false, ErrSigFindAndDelete
				}
				m.code[buf] = out
				scriptCode = out
				buf ^= 1
			}
		}
	}
	success := true
	for success && nSigs > 0 {
		sig, pub := m.top(-isig), m.top(-ikey)
		if e := checkSignatureEncoding(sig, flags); e != ErrOK {
			return false, e
		}
		if e := checkPubKeyEncoding(pub, flags, sv); e != ErrOK {
			return false, e
		}
		if m.checkECDSA(sig, pub, scriptCode, sv) {
			isig++
			nSigs--
		}
		ikey++
		nKeys--
		if nSigs > nKeys {
			success = false
		}
	}
	for ; i > 1; i-- {
		if !success && flags&NullFail != 0 && ikey2 == 0 && len(m.top(-1)) != 0 {
			return false, ErrNullFail
		}
		if ikey2 > 0 {
			ikey2--
		}
		m.pop()
	}
	if len(m.stack) < 1 {
		return false, ErrInvalidStackOperation
	}
	if flags&NullDummy != 0 && len(m.top(-1)) != 0 {
		return false, ErrSigNullDummy
	}
	m.pop()
	return success, ErrOK
}

// lockTimeOperand is the operand of OP_CHECKLOCKTIMEVERIFY and
// OP_CHECKSEQUENCEVERIFY: the top stack item as a CScriptNum of up to 5
// bytes (interpreter.cpp reads 5 so that 2^39-1 locktimes fit), never
// negative. It is left on the stack.
func (m *vm) lockTimeOperand(minimal bool) (int64, ErrorCode) {
	if len(m.stack) < 1 {
		return 0, ErrInvalidStackOperation
	}
	n, e := decodeNum(m.top(-1), minimal, 5)
	if e != ErrOK {
		return 0, e
	}
	if n < 0 {
		return 0, ErrNegativeLocktime
	}
	return n, ErrOK
}
