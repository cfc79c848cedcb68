package script

// OutputType is Core's TxoutType: the standard template an output script
// matches (script/solver.h).
type OutputType uint8

// The output types, in Core's order.
const (
	NonStandard OutputType = iota
	PubKey
	PubKeyHash
	ScriptHash
	Multisig
	NullData
	Anchor
	WitnessV0KeyHash
	WitnessV0ScriptHash
	WitnessV1Taproot
	WitnessUnknown
)

// String is Core's GetTxnOutputType, the "type" of scriptPubKey JSON.
func (t OutputType) String() string {
	switch t {
	case PubKey:
		return "pubkey"
	case PubKeyHash:
		return "pubkeyhash"
	case ScriptHash:
		return "scripthash"
	case Multisig:
		return "multisig"
	case NullData:
		return "nulldata"
	case Anchor:
		return "anchor"
	case WitnessV0KeyHash:
		return "witness_v0_keyhash"
	case WitnessV0ScriptHash:
		return "witness_v0_scripthash"
	case WitnessV1Taproot:
		return "witness_v1_taproot"
	case WitnessUnknown:
		return "witness_unknown"
	}
	return "nonstandard"
}

// Solve is Core's Solver (script/solver.cpp): the template script matches
// and its solutions, which alias script. PubKey: the key; PubKeyHash,
// ScriptHash, WitnessV0*, WitnessV1Taproot: the hash or program;
// WitnessUnknown: the version as one byte, then the program; Multisig: m as
// one byte, the keys, n as one byte; the others: none.
func Solve(script []byte) (OutputType, [][]byte) {
	if IsPayToScriptHash(script) {
		return ScriptHash, [][]byte{script[2:22]}
	}
	if v, prog, ok := IsWitnessProgram(script); ok {
		switch {
		case v == 0 && len(prog) == 20:
			return WitnessV0KeyHash, [][]byte{prog}
		case v == 0 && len(prog) == 32:
			return WitnessV0ScriptHash, [][]byte{prog}
		case v == 1 && len(prog) == 32:
			return WitnessV1Taproot, [][]byte{prog}
		case IsPayToAnchor(v, prog):
			return Anchor, nil
		case v != 0:
			return WitnessUnknown, [][]byte{{byte(v)}, prog}
		}
		return NonStandard, nil
	}
	if len(script) >= 1 && script[0] == opReturn && IsPushOnly(script[1:]) {
		return NullData, nil
	}
	if (len(script) == 67 && script[0] == 65 || len(script) == 35 && script[0] == 33) &&
		script[len(script)-1] == opCheckSig && ValidPubKeySize(script[1:len(script)-1]) {
		return PubKey, [][]byte{script[1 : len(script)-1]}
	}
	if len(script) == 25 && script[0] == opDup && script[1] == opHash160 && script[2] == 20 &&
		script[23] == opEqualVerify && script[24] == opCheckSig {
		return PubKeyHash, [][]byte{script[3:23]}
	}
	if sol, ok := matchMultisig(script); ok {
		return Multisig, sol
	}
	return NonStandard, nil
}

// IsPayToAnchor is Core's CScript::IsPayToAnchor(version, program): the
// witness v1 program 4e73 (BIP P2A).
func IsPayToAnchor(version int, program []byte) bool {
	return version == 1 && len(program) == 2 && program[0] == 0x4e && program[1] == 0x73
}

// ValidPubKeySize is CPubKey::ValidSize: a length that matches the key's
// first byte (33 for 02/03, 65 for 04/06/07).
func ValidPubKeySize(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	switch k[0] {
	case 2, 3:
		return len(k) == 33
	case 4, 6, 7:
		return len(k) == 65
	}
	return false
}

// matchMultisig is Core's MatchMultisig: <m> <keys...> <n>
// OP_CHECKMULTISIG with m and n small integers or minimal pushes in
// 1..MaxPubkeysPerMultisig, m <= n = number of keys.
func matchMultisig(s []byte) ([][]byte, bool) {
	if len(s) < 1 || s[len(s)-1] != opCheckMultiSig {
		return nil, false
	}
	op, data, pc, ok := getOp(s, 0)
	if !ok {
		return nil, false
	}
	m, ok := scriptNumber(op, data, 1, MaxPubkeysPerMultisig)
	if !ok {
		return nil, false
	}
	sol := [][]byte{{byte(m)}}
	for {
		op, data, pc, ok = getOp(s, pc)
		if !ok || !ValidPubKeySize(data) {
			break
		}
		sol = append(sol, data)
	}
	n, ok := scriptNumber(op, data, m, MaxPubkeysPerMultisig)
	if !ok || len(sol)-1 != n || pc+1 != len(s) {
		return nil, false
	}
	return append(sol, []byte{byte(n)}), true
}

// scriptNumber is Core's GetScriptNumber: OP_1..OP_16, or a minimal push of
// a minimally encoded number, within [lo, hi].
func scriptNumber(op byte, data []byte, lo, hi int) (int, bool) {
	var v int
	switch {
	case op >= op1 && op <= op16:
		v = int(op-op1) + 1
	case op <= opPushData4:
		if !checkMinimalPush(data, op) {
			return 0, false
		}
		n, err := decodeNum(data, true, 4)
		if err != ErrOK {
			return 0, false
		}
		v = clampInt(n)
	default:
		return 0, false
	}
	return v, v >= lo && v <= hi
}
