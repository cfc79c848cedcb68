package script

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// opNameTable holds Core's GetOpName strings (script/script.cpp) for the
// non-push opcodes that have a name; OP_1..OP_16 are written as numbers.
var opNameTable = [256]string{
	0x4f: "-1", 0x50: "OP_RESERVED", 0x61: "OP_NOP", 0x62: "OP_VER", 0x63: "OP_IF", 0x64: "OP_NOTIF",
	0x65: "OP_VERIF", 0x66: "OP_VERNOTIF", 0x67: "OP_ELSE", 0x68: "OP_ENDIF", 0x69: "OP_VERIFY",
	0x6a: "OP_RETURN", 0x6b: "OP_TOALTSTACK", 0x6c: "OP_FROMALTSTACK", 0x6d: "OP_2DROP", 0x6e: "OP_2DUP",
	0x6f: "OP_3DUP", 0x70: "OP_2OVER", 0x71: "OP_2ROT", 0x72: "OP_2SWAP", 0x73: "OP_IFDUP", 0x74: "OP_DEPTH",
	0x75: "OP_DROP", 0x76: "OP_DUP", 0x77: "OP_NIP", 0x78: "OP_OVER", 0x79: "OP_PICK", 0x7a: "OP_ROLL",
	0x7b: "OP_ROT", 0x7c: "OP_SWAP", 0x7d: "OP_TUCK", 0x7e: "OP_CAT", 0x7f: "OP_SUBSTR", 0x80: "OP_LEFT",
	0x81: "OP_RIGHT", 0x82: "OP_SIZE", 0x83: "OP_INVERT", 0x84: "OP_AND", 0x85: "OP_OR", 0x86: "OP_XOR",
	0x87: "OP_EQUAL", 0x88: "OP_EQUALVERIFY", 0x89: "OP_RESERVED1", 0x8a: "OP_RESERVED2", 0x8b: "OP_1ADD",
	0x8c: "OP_1SUB", 0x8d: "OP_2MUL", 0x8e: "OP_2DIV", 0x8f: "OP_NEGATE", 0x90: "OP_ABS", 0x91: "OP_NOT",
	0x92: "OP_0NOTEQUAL", 0x93: "OP_ADD", 0x94: "OP_SUB", 0x95: "OP_MUL", 0x96: "OP_DIV", 0x97: "OP_MOD",
	0x98: "OP_LSHIFT", 0x99: "OP_RSHIFT", 0x9a: "OP_BOOLAND", 0x9b: "OP_BOOLOR", 0x9c: "OP_NUMEQUAL",
	0x9d: "OP_NUMEQUALVERIFY", 0x9e: "OP_NUMNOTEQUAL", 0x9f: "OP_LESSTHAN", 0xa0: "OP_GREATERTHAN",
	0xa1: "OP_LESSTHANOREQUAL", 0xa2: "OP_GREATERTHANOREQUAL", 0xa3: "OP_MIN", 0xa4: "OP_MAX",
	0xa5: "OP_WITHIN", 0xa6: "OP_RIPEMD160", 0xa7: "OP_SHA1", 0xa8: "OP_SHA256", 0xa9: "OP_HASH160",
	0xaa: "OP_HASH256", 0xab: "OP_CODESEPARATOR", 0xac: "OP_CHECKSIG", 0xad: "OP_CHECKSIGVERIFY",
	0xae: "OP_CHECKMULTISIG", 0xaf: "OP_CHECKMULTISIGVERIFY", 0xb0: "OP_NOP1",
	0xb1: "OP_CHECKLOCKTIMEVERIFY", 0xb2: "OP_CHECKSEQUENCEVERIFY", 0xb3: "OP_NOP4", 0xb4: "OP_NOP5",
	0xb5: "OP_NOP6", 0xb6: "OP_NOP7", 0xb7: "OP_NOP8", 0xb8: "OP_NOP9", 0xb9: "OP_NOP10",
	0xba: "OP_CHECKSIGADD", 0xff: "OP_INVALIDOPCODE",
}

// OpName is Core's GetOpName for a non-push opcode: its name, the number for
// OP_1..OP_16, "-1" for OP_1NEGATE, or "OP_UNKNOWN".
func OpName(op byte) string {
	if op >= op1 && op <= op16 {
		return strconv.Itoa(int(op-op1) + 1)
	}
	if n := opNameTable[op]; n != "" {
		return n
	}
	return "OP_UNKNOWN"
}

// Asm is Core's ScriptToAsmStr(script, fAttemptSighashDecode=false)
// (core_io): pushes of at most 4 bytes as decimal script numbers, longer
// pushes as hex, other opcodes by name, and "[error]" where a push runs past
// the end.
func Asm(script []byte) string {
	var sb strings.Builder
	for pc := 0; pc < len(script); {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		op, data, next, ok := getOp(script, pc)
		if !ok {
			sb.WriteString("[error]")
			break
		}
		pc = next
		if op > opPushData4 {
			sb.WriteString(OpName(op))
			continue
		}
		if len(data) <= 4 {
			n, _ := decodeNum(data, false, 4)
			sb.WriteString(strconv.FormatInt(n, 10))
		} else {
			sb.WriteString(hex.EncodeToString(data))
		}
	}
	return sb.String()
}
