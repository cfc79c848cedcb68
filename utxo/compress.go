package utxo

import (
	"errors"
	"fmt"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// This file holds Bitcoin Core's compact encodings used by the v5 record
// codec: the VARINT of serialize.h (MSB-first base-128 with the "+1" bias, so
// every value has exactly one encoding), the amount compression of
// compressor.cpp (CompressAmount/DecompressAmount) and the script compression
// of compressor.cpp/compressor.h (CScriptCompressor).

// MaxMoney is Core's MAX_MONEY: 21,000,000 BTC in satoshis. No output value in
// a valid UTXO set exceeds it.
const MaxMoney = 21_000_000 * 100_000_000

// MaxScriptSize is Core's MAX_SCRIPT_SIZE. Outputs with a longer script are
// unspendable and never enter the UTXO set; the record codec refuses them.
const MaxScriptSize = 10_000

// ErrVarInt reports a truncated or overflowing Core VARINT.
var ErrVarInt = errors.New("utxo: bad varint")

// maxVarIntLen is the longest VARINT encoding of a uint64 (ceil(64/7)).
const maxVarIntLen = 10

// AppendVarInt appends Core's VARINT encoding of n (serialize.h WriteVarInt)
// to dst and returns the extended slice.
func AppendVarInt(dst []byte, n uint64) []byte {
	var tmp [maxVarIntLen]byte
	l := 0
	for {
		b := byte(n & 0x7f)
		if l != 0 {
			b |= 0x80
		}
		tmp[l] = b
		if n <= 0x7f {
			break
		}
		n = (n >> 7) - 1
		l++
	}
	for i := l; i >= 0; i-- {
		dst = append(dst, tmp[i])
	}
	return dst
}

// VarIntLen returns the number of bytes AppendVarInt writes for n.
func VarIntLen(n uint64) int {
	l := 1
	for n > 0x7f {
		n = (n >> 7) - 1
		l++
	}
	return l
}

// ReadVarInt decodes one Core VARINT from the start of b, returning the value
// and the number of bytes consumed. It fails with ErrVarInt if b ends inside
// the encoding or the value exceeds max (ReadVarInt's "size too large"). Core's
// VARINT has no redundant encodings, so a successful read is canonical.
func ReadVarInt(b []byte, max uint64) (uint64, int, error) {
	var n uint64
	for i, c := range b {
		if n > max>>7 {
			return 0, 0, fmt.Errorf("%w: exceeds %d", ErrVarInt, max)
		}
		n = n<<7 | uint64(c&0x7f)
		if c&0x80 == 0 {
			if n > max {
				return 0, 0, fmt.Errorf("%w: exceeds %d", ErrVarInt, max)
			}
			return n, i + 1, nil
		}
		if n == max {
			return 0, 0, fmt.Errorf("%w: exceeds %d", ErrVarInt, max)
		}
		n++
	}
	return 0, 0, fmt.Errorf("%w: truncated", ErrVarInt)
}

// CompressAmount is Core's CompressAmount (compressor.cpp): 0 maps to 0;
// otherwise the value is split into mantissa and a decimal exponent e ≤ 9.
func CompressAmount(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	e := uint64(0)
	for n%10 == 0 && e < 9 {
		n /= 10
		e++
	}
	if e < 9 {
		d := n % 10
		n /= 10
		return 1 + (n*9+d-1)*10 + e
	}
	return 1 + (n-1)*10 + 9
}

// DecompressAmount is Core's DecompressAmount (compressor.cpp). Like Core it
// wraps on overflow for inputs no CompressAmount output can produce; callers
// that need canonical input check CompressAmount(DecompressAmount(x)) == x.
func DecompressAmount(x uint64) uint64 {
	if x == 0 {
		return 0
	}
	x--
	e := x % 10
	x /= 10
	var n uint64
	if e < 9 {
		d := x%9 + 1
		x /= 9
		n = x*10 + d
	} else {
		n = x + 1
	}
	for ; e > 0; e-- {
		n *= 10
	}
	return n
}

// Script compression (Core's CScriptCompressor). A compressed script is
// VARINT(nSize) followed by data:
//
//	nSize 0: P2PKH, 20-byte key hash follows
//	nSize 1: P2SH, 20-byte script hash follows
//	nSize 2, 3: P2PK with a compressed key whose first byte is nSize; 32-byte x follows
//	nSize 4, 5: P2PK with a valid uncompressed key, y parity nSize-4; 32-byte x follows
//	nSize ≥ 6: raw script of nSize-6 bytes follows
const numSpecialScripts = 6

// Script opcodes used by the special forms.
const (
	opDup         = 0x76
	opHash160     = 0xa9
	opEqual       = 0x87
	opEqualVerify = 0x88
	opCheckSig    = 0xac
)

// ErrScriptCompression reports a compressed script that cannot be decoded
// (an x coordinate not on the curve for nSize 4/5).
var ErrScriptCompression = errors.New("utxo: bad compressed script")

// specialScriptKind returns the nSize of the special form that compresses
// script, or -1 when script must be stored raw. It reproduces Core's
// CompressScript exactly, including the full validity check of uncompressed
// public keys (Core's IsFullyValid): a 65-byte key off the curve is stored raw.
func specialScriptKind(s []byte) int {
	switch len(s) {
	case 25:
		if s[0] == opDup && s[1] == opHash160 && s[2] == 20 && s[23] == opEqualVerify && s[24] == opCheckSig {
			return 0
		}
	case 23:
		if s[0] == opHash160 && s[1] == 20 && s[22] == opEqual {
			return 1
		}
	case 35:
		if s[0] == 33 && s[34] == opCheckSig && (s[1] == 2 || s[1] == 3) {
			return int(s[1])
		}
	case 67:
		if s[0] == 65 && s[66] == opCheckSig && s[1] == 4 && uncompressedKeyValid(s[2:34], s[34:66]) {
			return 4 | int(s[65]&1)
		}
	}
	return -1
}

// uncompressedKeyValid reports whether (x, y) are field elements below the
// secp256k1 prime that satisfy y² = x³ + 7 (libsecp256k1's pubkey parse).
func uncompressedKeyValid(xb, yb []byte) bool {
	var x, y, lhs, rhs secp256k1.FieldVal
	if x.SetByteSlice(xb) || y.SetByteSlice(yb) {
		return false // overflow: coordinate ≥ p
	}
	lhs.SquareVal(&y).Normalize()
	rhs.SquareVal(&x).Mul(&x).AddInt(7).Normalize()
	return lhs.Equals(&rhs)
}

// specialScriptDataLen is Core's GetSpecialScriptSize for nSize < 6.
func specialScriptDataLen(nSize uint64) int {
	if nSize < 2 {
		return 20
	}
	return 32
}

// specialScriptLen is the decompressed script length of special form nSize.
func specialScriptLen(nSize uint64) int {
	switch nSize {
	case 0:
		return 25
	case 1:
		return 23
	case 2, 3:
		return 35
	default:
		return 67
	}
}

// CompressedScriptLen returns the length of AppendCompressedScript's output
// for script.
func CompressedScriptLen(script []byte) int {
	if k := specialScriptKind(script); k >= 0 {
		return 1 + specialScriptDataLen(uint64(k))
	}
	n := uint64(len(script))
	return VarIntLen(n+numSpecialScripts) + len(script)
}

// AppendCompressedScript appends Core's compressed form of script
// (CScriptCompressor::Serialize) to dst.
func AppendCompressedScript(dst []byte, script []byte) []byte {
	switch k := specialScriptKind(script); k {
	case 0:
		dst = append(dst, 0)
		return append(dst, script[3:23]...)
	case 1:
		dst = append(dst, 1)
		return append(dst, script[2:22]...)
	case 2, 3:
		dst = append(dst, byte(k))
		return append(dst, script[2:34]...)
	case 4, 5:
		dst = append(dst, byte(k))
		return append(dst, script[2:34]...)
	}
	dst = AppendVarInt(dst, uint64(len(script))+numSpecialScripts)
	return append(dst, script...)
}

// appendDecompressedSpecial appends the script of special form nSize (< 6)
// with the given data (20 or 32 bytes) to dst. It fails only for nSize 4/5
// with an x coordinate that is not on the curve or not below the field prime.
func appendDecompressedSpecial(dst []byte, nSize uint64, data []byte) ([]byte, error) {
	switch nSize {
	case 0:
		dst = append(dst, opDup, opHash160, 20)
		dst = append(dst, data[:20]...)
		return append(dst, opEqualVerify, opCheckSig), nil
	case 1:
		dst = append(dst, opHash160, 20)
		dst = append(dst, data[:20]...)
		return append(dst, opEqual), nil
	case 2, 3:
		dst = append(dst, 33, byte(nSize))
		dst = append(dst, data[:32]...)
		return append(dst, opCheckSig), nil
	}
	var y [32]byte
	if !decompressKeyY(data[:32], nSize == 5, &y) {
		return dst, fmt.Errorf("%w: x coordinate not on secp256k1", ErrScriptCompression)
	}
	dst = append(dst, 65, 4)
	dst = append(dst, data[:32]...)
	dst = append(dst, y[:]...)
	return append(dst, opCheckSig), nil
}

// decompressKeyY computes the y coordinate with the given parity for x,
// reporting false when x ≥ p or x³+7 has no square root.
func decompressKeyY(xb []byte, odd bool, out *[32]byte) bool {
	var x, y secp256k1.FieldVal
	if x.SetByteSlice(xb) {
		return false
	}
	if !secp256k1.DecompressY(&x, odd, &y) {
		return false
	}
	y.PutBytes(out)
	return true
}
