package api

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/big"
	"strconv"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// This file renders a scriptPubKey the way Bitcoin Core's ScriptToUniv does
// with include_hex and include_address (src/core_write.cpp): asm
// (ScriptToAsmStr without sighash decoding), desc (InferDescriptor with no
// signing provider, with its checksum), hex, address (ExtractDestination,
// not for bare pubkeys) and type (Solver's GetTxnOutputType).

// ScriptPubKey is Core's JSON description of an output script.
type ScriptPubKey struct {
	Asm     string `json:"asm" example:"OP_DUP OP_HASH160 1c7cebb529b86a04c683dfa87be49de35bcf589e OP_EQUALVERIFY OP_CHECKSIG"`
	Desc    string `json:"desc" example:"addr(13ZSdMCNkNp5TCE5rCCFe2KMiaCxmdGW8P)#7f5zqwqn"`
	Hex     string `json:"hex" example:"76a9141c7cebb529b86a04c683dfa87be49de35bcf589e88ac"`
	Address string `json:"address,omitempty" example:"13ZSdMCNkNp5TCE5rCCFe2KMiaCxmdGW8P"`
	Type    string `json:"type" example:"pubkeyhash"`
}

// addrParams are a network's address encodings (Core's base58Prefixes and
// bech32_hrp).
type addrParams struct {
	pkh, sh byte
	hrp     string
}

func addrParamsFor(network string) addrParams {
	switch network {
	case "main", "mainnet":
		return addrParams{0x00, 0x05, "bc"}
	case "regtest":
		return addrParams{0x6f, 0xc4, "bcrt"}
	default: // testnet3, testnet4, signet
		return addrParams{0x6f, 0xc4, "tb"}
	}
}

// Script opcodes used below.
const (
	op0             = 0x00
	opPushData1     = 0x4c
	opPushData2     = 0x4d
	opPushData4     = 0x4e
	op1Negate       = 0x4f
	op1             = 0x51
	op16            = 0x60
	opReturn        = 0x6a
	opDup           = 0x76
	opEqual         = 0x87
	opEqualVerify   = 0x88
	opHash160       = 0xa9
	opCheckSig      = 0xac
	opCheckMultisig = 0xae
)

// describeScript builds Core's scriptPubKey object for script.
func describeScript(script []byte, ap addrParams) ScriptPubKey {
	typ, sol := solve(script)
	out := ScriptPubKey{Asm: scriptAsm(script), Hex: hex.EncodeToString(script), Type: typ}
	addr, hasAddr := extractAddress(typ, sol, ap)
	if hasAddr && typ != "pubkey" {
		out.Address = addr
	}
	out.Desc = descriptorChecksum(inferDescriptor(script, typ, sol, addr, hasAddr))
	return out
}

// scriptOp is one parsed opcode.
type scriptOp struct {
	op   byte
	data []byte
}

// nextOp is Core's GetScriptOp: it returns the opcode at b[0] and its push
// data, and false when a push runs past the end.
func nextOp(b []byte) (scriptOp, []byte, bool) {
	if len(b) == 0 {
		return scriptOp{}, nil, false
	}
	op := b[0]
	b = b[1:]
	if op > opPushData4 {
		return scriptOp{op: op}, b, true
	}
	var n int
	switch {
	case op < opPushData1:
		n = int(op)
	case op == opPushData1:
		if len(b) < 1 {
			return scriptOp{}, nil, false
		}
		n, b = int(b[0]), b[1:]
	case op == opPushData2:
		if len(b) < 2 {
			return scriptOp{}, nil, false
		}
		n, b = int(binary.LittleEndian.Uint16(b)), b[2:]
	default:
		if len(b) < 4 {
			return scriptOp{}, nil, false
		}
		u := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(u) > uint64(len(b)) {
			return scriptOp{}, nil, false
		}
		n = int(u)
	}
	if n > len(b) {
		return scriptOp{}, nil, false
	}
	return scriptOp{op: op, data: b[:n]}, b[n:], true
}

// scriptAsm is Core's ScriptToAsmStr(script, false).
func scriptAsm(script []byte) string {
	var sb strings.Builder
	for b := script; len(b) > 0; {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		op, rest, ok := nextOp(b)
		if !ok {
			sb.WriteString("[error]")
			break
		}
		b = rest
		if op.op <= opPushData4 {
			if len(op.data) <= 4 {
				sb.WriteString(strconv.FormatInt(scriptNum(op.data), 10))
			} else {
				sb.WriteString(hex.EncodeToString(op.data))
			}
			continue
		}
		sb.WriteString(opName(op.op))
	}
	return sb.String()
}

// scriptNum decodes a little-endian sign-magnitude number of up to 4 bytes
// (CScriptNum without minimal-encoding checks).
func scriptNum(b []byte) int64 {
	if len(b) == 0 {
		return 0
	}
	var v int64
	for i, c := range b {
		v |= int64(c) << (8 * i)
	}
	if b[len(b)-1]&0x80 != 0 {
		return -(v &^ (int64(0x80) << (8 * (len(b) - 1))))
	}
	return v
}

var opNames = map[byte]string{
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

// opName is Core's GetOpName for non-push opcodes.
func opName(op byte) string {
	if op >= op1 && op <= op16 {
		return strconv.Itoa(int(op-op1) + 1)
	}
	if n, ok := opNames[op]; ok {
		return n
	}
	return "OP_UNKNOWN"
}

// validPubKeySize is CPubKey::ValidSize.
func validPubKeySize(k []byte) bool {
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

// pubKeyFullyValid is CPubKey::IsFullyValid (libsecp256k1 parsing).
func pubKeyFullyValid(k []byte) bool {
	if !validPubKeySize(k) {
		return false
	}
	_, err := secp256k1.ParsePubKey(k)
	return err == nil
}

// xOnlyFullyValid is XOnlyPubKey::IsFullyValid: x is on the curve.
func xOnlyFullyValid(x []byte) bool {
	if len(x) != 32 {
		return false
	}
	_, err := secp256k1.ParsePubKey(append([]byte{2}, x...))
	return err == nil
}

// witnessProgram is CScript::IsWitnessProgram.
func witnessProgram(s []byte) (version int, program []byte, ok bool) {
	if len(s) < 4 || len(s) > 42 {
		return 0, nil, false
	}
	if s[0] != op0 && (s[0] < op1 || s[0] > op16) {
		return 0, nil, false
	}
	if int(s[1])+2 != len(s) {
		return 0, nil, false
	}
	if s[0] != op0 {
		version = int(s[0]-op1) + 1
	}
	return version, s[2:], true
}

// pushOnly is CScript::IsPushOnly.
func pushOnly(b []byte) bool {
	for len(b) > 0 {
		op, rest, ok := nextOp(b)
		if !ok || op.op > op16 {
			return false
		}
		b = rest
	}
	return true
}

// smallInt decodes OP_1..OP_16.
func smallInt(op byte) (int, bool) {
	if op >= op1 && op <= op16 {
		return int(op-op1) + 1, true
	}
	return 0, false
}

// solve is Core's Solver: the output type and its solutions (pubkeys,
// hashes, witness program; for multisig m first, then the keys).
func solve(s []byte) (string, [][]byte) {
	if len(s) == 23 && s[0] == opHash160 && s[1] == 20 && s[22] == opEqual {
		return "scripthash", [][]byte{s[2:22]}
	}
	if v, prog, ok := witnessProgram(s); ok {
		switch {
		case v == 0 && len(prog) == 20:
			return "witness_v0_keyhash", [][]byte{prog}
		case v == 0 && len(prog) == 32:
			return "witness_v0_scripthash", [][]byte{prog}
		case v == 1 && len(prog) == 32:
			return "witness_v1_taproot", [][]byte{prog}
		case v == 1 && len(prog) == 2 && prog[0] == 0x4e && prog[1] == 0x73:
			return "anchor", [][]byte{{byte(v)}, prog}
		case v != 0:
			return "witness_unknown", [][]byte{{byte(v)}, prog}
		}
		return "nonstandard", nil
	}
	if len(s) >= 1 && s[0] == opReturn && pushOnly(s[1:]) {
		return "nulldata", nil
	}
	if (len(s) == 35 && s[0] == 33 || len(s) == 67 && s[0] == 65) && s[len(s)-1] == opCheckSig && validPubKeySize(s[1:len(s)-1]) {
		return "pubkey", [][]byte{s[1 : len(s)-1]}
	}
	if len(s) == 25 && s[0] == opDup && s[1] == opHash160 && s[2] == 20 && s[23] == opEqualVerify && s[24] == opCheckSig {
		return "pubkeyhash", [][]byte{s[3:23]}
	}
	if keys, m, ok := matchMultisig(s); ok {
		return "multisig", append([][]byte{{byte(m)}}, keys...)
	}
	return "nonstandard", nil
}

// matchMultisig is Core's MatchMultisig for OP_m <keys> OP_n
// OP_CHECKMULTISIG with small-integer m and n.
func matchMultisig(s []byte) (keys [][]byte, m int, ok bool) {
	if len(s) < 1 || s[len(s)-1] != opCheckMultisig {
		return nil, 0, false
	}
	op, b, ok := nextOp(s)
	if !ok {
		return nil, 0, false
	}
	if m, ok = smallInt(op.op); !ok {
		return nil, 0, false
	}
	for {
		op, rest, ok := nextOp(b)
		if !ok || !validPubKeySize(op.data) {
			break
		}
		keys = append(keys, op.data)
		b = rest
	}
	op, b, ok = nextOp(b)
	if !ok {
		return nil, 0, false
	}
	n, ok := smallInt(op.op)
	if !ok || len(keys) != n || n < m {
		return nil, 0, false
	}
	return keys, m, len(b) == 1
}

// extractAddress is Core's ExtractDestination + EncodeDestination; bare
// pubkeys report an address here but ScriptToUniv omits it.
func extractAddress(typ string, sol [][]byte, ap addrParams) (string, bool) {
	switch typ {
	case "pubkeyhash":
		return base58Check(ap.pkh, sol[0]), true
	case "scripthash":
		return base58Check(ap.sh, sol[0]), true
	case "witness_v0_keyhash", "witness_v0_scripthash":
		return segwitAddress(ap.hrp, 0, sol[0]), true
	case "witness_v1_taproot":
		return segwitAddress(ap.hrp, 1, sol[0]), true
	case "witness_unknown", "anchor":
		return segwitAddress(ap.hrp, int(sol[0][0]), sol[1]), true
	}
	return "", false
}

// inferDescriptor is Core's InferDescriptor with an empty signing provider.
func inferDescriptor(script []byte, typ string, sol [][]byte, addr string, hasAddr bool) string {
	switch typ {
	case "pubkey":
		if pubKeyFullyValid(sol[0]) {
			return "pk(" + hex.EncodeToString(sol[0]) + ")"
		}
	case "witness_v1_taproot":
		if xOnlyFullyValid(sol[0]) {
			return "rawtr(" + hex.EncodeToString(sol[0]) + ")"
		}
	case "multisig":
		parts := []string{strconv.Itoa(int(sol[0][0]))}
		ok := true
		for _, k := range sol[1:] {
			if !pubKeyFullyValid(k) {
				ok = false
				break
			}
			parts = append(parts, hex.EncodeToString(k))
		}
		if ok {
			return "multi(" + strings.Join(parts, ",") + ")"
		}
	}
	if hasAddr && typ != "pubkey" {
		return "addr(" + addr + ")"
	}
	return "raw(" + hex.EncodeToString(script) + ")"
}

// Descriptor checksum (Core's DescriptorChecksum, doc/descriptors.md).
const (
	descInputCharset    = "0123456789()[],'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~ijklmnopqrstuvwxyzABCDEFGH`#\"\\ "
	descChecksumCharset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
)

func descPolyMod(c uint64, val int) uint64 {
	c0 := c >> 35
	c = (c&0x7ffffffff)<<5 ^ uint64(val)
	gen := [5]uint64{0xf5dee51989, 0xa9fdca3312, 0x1bab10e32d, 0x3706b1677a, 0x644d626ffd}
	for i, g := range gen {
		if c0&(1<<i) != 0 {
			c ^= g
		}
	}
	return c
}

// descriptorChecksum appends "#" and the 8-character checksum to desc.
func descriptorChecksum(desc string) string {
	c := uint64(1)
	cls, clscount := 0, 0
	for i := 0; i < len(desc); i++ {
		pos := strings.IndexByte(descInputCharset, desc[i])
		if pos < 0 {
			return desc // cannot happen for the descriptors built here
		}
		c = descPolyMod(c, pos&31)
		cls = cls*3 + pos>>5
		clscount++
		if clscount == 3 {
			c = descPolyMod(c, cls)
			cls, clscount = 0, 0
		}
	}
	if clscount > 0 {
		c = descPolyMod(c, cls)
	}
	for range 8 {
		c = descPolyMod(c, 0)
	}
	c ^= 1
	var sum [8]byte
	for j := range 8 {
		sum[j] = descChecksumCharset[(c>>(5*(7-j)))&31]
	}
	return desc + "#" + string(sum[:])
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// base58Check encodes version||payload with a 4-byte SHA-256d checksum.
func base58Check(version byte, payload []byte) string {
	b := append([]byte{version}, payload...)
	first := sha256.Sum256(b)
	second := sha256.Sum256(first[:])
	b = append(b, second[:4]...)
	x := new(big.Int).SetBytes(b)
	radix, mod := big.NewInt(58), new(big.Int)
	var out []byte
	for x.Sign() > 0 {
		x.DivMod(x, radix, mod)
		out = append(out, base58Alphabet[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

func bech32Polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i, g := range gen {
			if (top>>i)&1 == 1 {
				chk ^= g
			}
		}
	}
	return chk
}

// segwitAddress encodes a witness program (BIP173 bech32 for version 0,
// BIP350 bech32m otherwise).
func segwitAddress(hrp string, version int, program []byte) string {
	data := []byte{byte(version)}
	acc, bits := 0, 0
	for _, b := range program {
		acc = acc<<8 | int(b)
		bits += 8
		for bits >= 5 {
			bits -= 5
			data = append(data, byte(acc>>bits&31))
		}
	}
	if bits > 0 {
		data = append(data, byte(acc<<(5-bits)&31))
	}
	var values []byte
	for i := 0; i < len(hrp); i++ {
		values = append(values, hrp[i]>>5)
	}
	values = append(values, 0)
	for i := 0; i < len(hrp); i++ {
		values = append(values, hrp[i]&31)
	}
	values = append(values, data...)
	values = append(values, 0, 0, 0, 0, 0, 0)
	konst := uint32(1)
	if version != 0 {
		konst = 0x2bc830a3
	}
	mod := bech32Polymod(values) ^ konst
	var sb strings.Builder
	sb.WriteString(hrp)
	sb.WriteByte('1')
	for _, d := range data {
		sb.WriteByte(bech32Charset[d])
	}
	for i := range 6 {
		sb.WriteByte(bech32Charset[(mod>>(5*(5-i)))&31])
	}
	return sb.String()
}
