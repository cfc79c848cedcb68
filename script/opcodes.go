package script

// Opcodes used by the interpreter (script/script.h), beyond the ones
// sigops.go names.
const (
	op1Negate        = 0x4f
	opReserved       = 0x50
	opNop            = 0x61
	opVer            = 0x62
	opIf             = 0x63
	opNotIf          = 0x64
	opVerIf          = 0x65
	opVerNotIf       = 0x66
	opElse           = 0x67
	opEndIf          = 0x68
	opVerify         = 0x69
	opToAltStack     = 0x6b
	opFromAltStack   = 0x6c
	op2Drop          = 0x6d
	op2Dup           = 0x6e
	op3Dup           = 0x6f
	op2Over          = 0x70
	op2Rot           = 0x71
	op2Swap          = 0x72
	opIfDup          = 0x73
	opDepth          = 0x74
	opDrop           = 0x75
	opDup            = 0x76
	opNip            = 0x77
	opOver           = 0x78
	opPick           = 0x79
	opRoll           = 0x7a
	opRot            = 0x7b
	opSwap           = 0x7c
	opTuck           = 0x7d
	opCat            = 0x7e
	opSubstr         = 0x7f
	opLeft           = 0x80
	opRight          = 0x81
	opSize           = 0x82
	opInvert         = 0x83
	opAnd            = 0x84
	opOr             = 0x85
	opXor            = 0x86
	opEqualVerify    = 0x88
	op1Add           = 0x8b
	op1Sub           = 0x8c
	op2Mul           = 0x8d
	op2Div           = 0x8e
	opNegate         = 0x8f
	opAbs            = 0x90
	opNot            = 0x91
	op0NotEqual      = 0x92
	opAdd            = 0x93
	opSub            = 0x94
	opMul            = 0x95
	opDiv            = 0x96
	opMod            = 0x97
	opLShift         = 0x98
	opRShift         = 0x99
	opBoolAnd        = 0x9a
	opBoolOr         = 0x9b
	opNumEqual       = 0x9c
	opNumEqualVerify = 0x9d
	opNumNotEqual    = 0x9e
	opLessThan       = 0x9f
	opGreaterThan    = 0xa0
	opLessThanOrEq   = 0xa1
	opGreaterThanOrE = 0xa2
	opMin            = 0xa3
	opMax            = 0xa4
	opWithin         = 0xa5
	opRipemd160      = 0xa6
	opSha1           = 0xa7
	opSha256         = 0xa8
	opHash256        = 0xaa
	opNop1           = 0xb0
	opCLTV           = 0xb1
	opCSV            = 0xb2
	opNop4           = 0xb3
	opNop10          = 0xb9
	opCheckSigAdd    = 0xba
)

// isDisabledOpcode: the opcodes EvalScript refuses even unexecuted.
func isDisabledOpcode(op byte) bool {
	switch op {
	case opCat, opSubstr, opLeft, opRight, opInvert, opAnd, opOr, opXor,
		op2Mul, op2Div, opMul, opDiv, opMod, opLShift, opRShift:
		return true
	}
	return false
}

// isOpSuccess is Core's IsOpSuccess (BIP342).
func isOpSuccess(op byte) bool {
	return op == 80 || op == 98 || (op >= 126 && op <= 129) ||
		(op >= 131 && op <= 134) || (op >= 137 && op <= 138) ||
		(op >= 141 && op <= 142) || (op >= 149 && op <= 153) ||
		(op >= 187 && op <= 254)
}
