package mainnetgen

import (
	"encoding/binary"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// appendVarInt appends Core's VARINT (src/serialize.h WriteVarInt): base 128,
// most significant group first, every byte but the last with the high bit
// set, and one subtracted from each group above the lowest so that every
// number has exactly one encoding (127 = 7f, 128 = 80 00, 16512 = 80 80 00).
func appendVarInt(dst []byte, n uint64) []byte {
	var tmp [10]byte
	i := 0
	for {
		b := byte(n & 0x7f)
		if i > 0 {
			b |= 0x80
		}
		tmp[i] = b
		if n <= 0x7f {
			break
		}
		n = (n >> 7) - 1
		i++
	}
	for ; i >= 0; i-- {
		dst = append(dst, tmp[i])
	}
	return dst
}

// appendCompactSize appends Bitcoin's CompactSize.
func appendCompactSize(dst []byte, n uint64) []byte {
	switch {
	case n < 0xfd:
		return append(dst, byte(n))
	case n <= 0xffff:
		return binary.LittleEndian.AppendUint16(append(dst, 0xfd), uint16(n))
	case n <= 0xffffffff:
		return binary.LittleEndian.AppendUint32(append(dst, 0xfe), uint32(n))
	}
	return binary.LittleEndian.AppendUint64(append(dst, 0xff), n)
}

// compressAmount is Core's CompressAmount (src/compressor.cpp).
func compressAmount(n uint64) uint64 {
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

// appendCompressedScript appends Core's ScriptCompression of script
// (src/compressor.cpp CompressScript, else the raw form VARINT(len+6) ‖
// script).
func appendCompressedScript(dst, s []byte) []byte {
	switch {
	case len(s) == 25 && s[0] == 0x76 && s[1] == 0xa9 && s[2] == 20 && s[23] == 0x88 && s[24] == 0xac:
		return append(append(dst, 0x00), s[3:23]...)
	case len(s) == 23 && s[0] == 0xa9 && s[1] == 20 && s[22] == 0x87:
		return append(append(dst, 0x01), s[2:22]...)
	case len(s) == 35 && s[0] == 33 && s[34] == 0xac && (s[1] == 0x02 || s[1] == 0x03):
		return append(append(dst, s[1]), s[2:34]...)
	case len(s) == 67 && s[0] == 65 && s[66] == 0xac && s[1] == 0x04 && onCurve(s[2:34], s[34:66]):
		return append(append(dst, 0x04|(s[65]&1)), s[2:34]...)
	}
	return append(appendVarInt(dst, uint64(len(s))+6), s...)
}

// onCurve reports whether (x, y) is a point of secp256k1 with both
// coordinates below the field prime (CPubKey::IsFullyValid of an
// uncompressed key).
func onCurve(x, y []byte) bool {
	var fx, fy, want secp256k1.FieldVal
	if fx.SetByteSlice(x) || fy.SetByteSlice(y) {
		return false
	}
	if !secp256k1.DecompressY(&fx, fy.IsOdd(), &want) {
		return false
	}
	return want.Normalize().Equals(fy.Normalize())
}

// appendTxOutSer appends Core's TxOutSer (src/kernel/coinstats.cpp): the
// outpoint (txid, vout LE32), (height << 1 | coinbase) LE32, then the CTxOut
// (value LE64, CompactSize(len) ‖ script).
func appendTxOutSer(dst []byte, txid *[32]byte, vout, code uint32, value uint64, script []byte) []byte {
	dst = append(dst, txid[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, vout)
	dst = binary.LittleEndian.AppendUint32(dst, code)
	dst = binary.LittleEndian.AppendUint64(dst, value)
	dst = appendCompactSize(dst, uint64(len(script)))
	return append(dst, script...)
}

// bogoSize is Core's GetBogoSize of one coin.
func bogoSize(script []byte) uint64 { return 32 + 4 + 4 + 8 + 2 + uint64(len(script)) }
