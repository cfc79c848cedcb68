package script

// AppendScriptNum appends n as Core's CScriptNum::serialize does: minimal
// little-endian sign-magnitude (zero is the empty string).
func AppendScriptNum(dst []byte, n int64) []byte {
	if n == 0 {
		return dst
	}
	neg := n < 0
	abs := uint64(n)
	if neg {
		abs = uint64(-n)
	}
	for abs > 0 {
		dst = append(dst, byte(abs))
		abs >>= 8
	}
	switch last := len(dst) - 1; {
	case dst[last]&0x80 != 0 && neg:
		dst = append(dst, 0x80)
	case dst[last]&0x80 != 0:
		dst = append(dst, 0x00)
	case neg:
		dst[last] |= 0x80
	}
	return dst
}

// AppendPushInt64 appends the script `CScript() << n` (script.h push_int64):
// OP_0, OP_1NEGATE or OP_1..OP_16 for small values, else a push of the
// CScriptNum serialization. BIP34's coinbase height is this push.
func AppendPushInt64(dst []byte, n int64) []byte {
	switch {
	case n == 0:
		return append(dst, 0x00)
	case n == -1 || (n >= 1 && n <= 16):
		return append(dst, byte(0x50+n))
	}
	var num [9]byte
	b := AppendScriptNum(num[:0], n)
	return append(append(dst, byte(len(b))), b...)
}
