package script

import (
	"encoding/binary"

	"utxod/wire"
)

// Opcodes used by the script analysis helpers.
const (
	opPushData1          = 0x4c
	opPushData2          = 0x4d
	opPushData4          = 0x4e
	op0                  = 0x00
	op1                  = 0x51
	op16                 = 0x60
	opReturn             = 0x6a
	opEqual              = 0x87
	opHash160            = 0xa9
	opCodeSeparator      = 0xab
	opCheckSig           = 0xac
	opCheckSigVerify     = 0xad
	opCheckMultiSig      = 0xae
	opCheckMultiSigVerif = 0xaf
	opInvalidOpcode      = 0xff
)

const (
	// MaxScriptSize is Core's MAX_SCRIPT_SIZE (script/script.h).
	MaxScriptSize = 10_000
	// MaxPubkeysPerMultisig is Core's MAX_PUBKEYS_PER_MULTISIG, the sigop
	// count of an inaccurately counted CHECKMULTISIG.
	MaxPubkeysPerMultisig = 20
	// WitnessScaleFactor is Core's WITNESS_SCALE_FACTOR.
	WitnessScaleFactor = 4
)

// getOp is Core's GetScriptOp (script/script.cpp): it reads the opcode at
// s[pc:], returning the opcode, the pushed data (aliasing s; nil for a
// non-push opcode), the next position and whether the read succeeded. On
// failure opcode is OP_INVALIDOPCODE.
func getOp(s []byte, pc int) (opcode byte, data []byte, next int, ok bool) {
	if pc >= len(s) {
		return opInvalidOpcode, nil, pc, false
	}
	opcode = s[pc]
	pc++
	if opcode > opPushData4 {
		return opcode, nil, pc, true
	}
	var n uint64
	switch {
	case opcode < opPushData1:
		n = uint64(opcode)
	case opcode == opPushData1:
		if len(s)-pc < 1 {
			return opInvalidOpcode, nil, pc, false
		}
		n = uint64(s[pc])
		pc++
	case opcode == opPushData2:
		if len(s)-pc < 2 {
			return opInvalidOpcode, nil, pc, false
		}
		n = uint64(binary.LittleEndian.Uint16(s[pc:]))
		pc += 2
	default:
		if len(s)-pc < 4 {
			return opInvalidOpcode, nil, pc, false
		}
		n = uint64(binary.LittleEndian.Uint32(s[pc:]))
		pc += 4
	}
	if uint64(len(s)-pc) < n {
		return opInvalidOpcode, nil, pc, false
	}
	end := pc + int(n)
	return opcode, s[pc:end:end], end, true
}

// LegacySigOpCount is Core's CScript::GetSigOpCount(fAccurate): CHECKSIG and
// CHECKSIGVERIFY count 1; CHECKMULTISIG(VERIFY) counts the preceding OP_1..
// OP_16 when accurate, else 20. Counting stops at the first unparsable
// opcode.
func LegacySigOpCount(script []byte, accurate bool) int {
	n := 0
	last := byte(opInvalidOpcode)
	for pc := 0; pc < len(script); {
		op, _, next, ok := getOp(script, pc)
		if !ok {
			break
		}
		pc = next
		switch op {
		case opCheckSig, opCheckSigVerify:
			n++
		case opCheckMultiSig, opCheckMultiSigVerif:
			if accurate && last >= op1 && last <= op16 {
				n += int(last - op1 + 1)
			} else {
				n += MaxPubkeysPerMultisig
			}
		}
		last = op
	}
	return n
}

// P2SHSigOpCount is the contribution of one input to Core's
// GetP2SHSigOpCount (consensus/tx_verify.cpp): zero unless prevPkScript is
// pay-to-script-hash; otherwise CScript::GetSigOpCount(scriptSig) — the
// accurate count of the redeem script, the last item scriptSig pushes, or
// zero if scriptSig does not parse or is not push-only.
func P2SHSigOpCount(scriptSig, prevPkScript []byte) int {
	if !IsPayToScriptHash(prevPkScript) {
		return 0
	}
	var last []byte
	for pc := 0; pc < len(scriptSig); {
		op, data, next, ok := getOp(scriptSig, pc)
		if !ok || op > op16 {
			return 0
		}
		last = data
		pc = next
	}
	return LegacySigOpCount(last, true)
}

// WitnessSigOpCount is Core's CountWitnessSigOps (script/interpreter.cpp):
// zero without the WITNESS flag; for a native witness program or a P2SH-
// wrapped one (push-only scriptSig whose last push is a witness program), 1
// for P2WPKH, the accurate count of the witness script for P2WSH, and zero
// for every other version.
func WitnessSigOpCount(scriptSig, prevPkScript []byte, witness [][]byte, flags Flags) int {
	if flags&Witness == 0 {
		return 0
	}
	if v, prog, ok := IsWitnessProgram(prevPkScript); ok {
		return witnessSigOps(v, prog, witness)
	}
	if IsPayToScriptHash(prevPkScript) && IsPushOnly(scriptSig) {
		var last []byte
		for pc := 0; pc < len(scriptSig); {
			_, data, next, _ := getOp(scriptSig, pc)
			last = data
			pc = next
		}
		if v, prog, ok := IsWitnessProgram(last); ok {
			return witnessSigOps(v, prog, witness)
		}
	}
	return 0
}

func witnessSigOps(version int, program []byte, witness [][]byte) int {
	if version == 0 {
		if len(program) == 20 {
			return 1
		}
		if len(program) == 32 && len(witness) > 0 {
			return LegacySigOpCount(witness[len(witness)-1], true)
		}
	}
	return 0
}

// IsPayToScriptHash is Core's CScript::IsPayToScriptHash: exactly
// OP_HASH160 <20 bytes> OP_EQUAL.
func IsPayToScriptHash(script []byte) bool {
	return len(script) == 23 && script[0] == opHash160 && script[1] == 0x14 && script[22] == opEqual
}

// IsWitnessProgram is Core's CScript::IsWitnessProgram: 4 to 42 bytes, a
// version opcode (OP_0, OP_1..OP_16) and one direct push of the rest. The
// program aliases script.
func IsWitnessProgram(script []byte) (version int, program []byte, ok bool) {
	if len(script) < 4 || len(script) > 42 {
		return 0, nil, false
	}
	if script[0] != op0 && (script[0] < op1 || script[0] > op16) {
		return 0, nil, false
	}
	if int(script[1])+2 != len(script) {
		return 0, nil, false
	}
	if script[0] != op0 {
		version = int(script[0] - op1 + 1)
	}
	return version, script[2:], true
}

// IsPushOnly is Core's CScript::IsPushOnly: every opcode parses and is at
// most OP_16 (which admits OP_RESERVED, as Core does).
func IsPushOnly(script []byte) bool {
	for pc := 0; pc < len(script); {
		op, _, next, ok := getOp(script, pc)
		if !ok || op > op16 {
			return false
		}
		pc = next
	}
	return true
}

// IsUnspendable is Core's CScript::IsUnspendable: starts with OP_RETURN or
// is larger than MaxScriptSize.
func IsUnspendable(script []byte) bool {
	return (len(script) > 0 && script[0] == opReturn) || len(script) > MaxScriptSize
}

// LegacyTxSigOpCount is Core's GetLegacySigOpCount: the inaccurate count
// over every scriptSig and scriptPubKey of tx.
func LegacyTxSigOpCount(tx *wire.Tx) int {
	n := 0
	for i := range tx.Inputs {
		n += LegacySigOpCount(tx.Inputs[i].Script, false)
	}
	for i := range tx.Outputs {
		n += LegacySigOpCount(tx.Outputs[i].Script, false)
	}
	return n
}

// TxSigOpCost is Core's GetTransactionSigOpCost (consensus/tx_verify.cpp):
// legacy sigops ×4, plus P2SH sigops ×4 when P2SH is set, plus witness
// sigops. prevouts[i] is the output spent by tx.Inputs[i]; it is ignored for
// a coinbase and may then be nil.
func TxSigOpCost(tx *wire.Tx, prevouts []wire.TxOut, flags Flags) int64 {
	n := int64(LegacyTxSigOpCount(tx)) * WitnessScaleFactor
	if tx.IsCoinbase() {
		return n
	}
	if len(prevouts) < len(tx.Inputs) {
		return n // caller error; nothing more can be counted
	}
	for i := range tx.Inputs {
		in := &tx.Inputs[i]
		if flags&P2SH != 0 {
			n += int64(P2SHSigOpCount(in.Script, prevouts[i].Script)) * WitnessScaleFactor
		}
		n += int64(WitnessSigOpCount(in.Script, prevouts[i].Script, in.Witness, flags))
	}
	return n
}
