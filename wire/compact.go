package wire

import (
	"encoding/binary"
	"fmt"
)

// MaxSize is Core's MAX_SIZE: the largest CompactSize a deserializer accepts
// for a count or length (serialize.h).
const MaxSize = 0x02000000

// ReadCompactSize decodes a CompactSize at b[off:], returning the value and
// the offset just past it. Non-minimal encodings are refused as Core's
// ReadCompactSize does ("non-canonical ReadCompactSize()"), and values above
// MaxSize as "size too large".
func ReadCompactSize(b []byte, off int) (uint64, int, error) {
	if off >= len(b) {
		return 0, off, fmt.Errorf("%w: compact size at offset %d", ErrTruncated, off)
	}
	first := b[off]
	var v uint64
	switch {
	case first < 0xfd:
		return uint64(first), off + 1, nil
	case first == 0xfd:
		if off+3 > len(b) {
			return 0, off, fmt.Errorf("%w: compact size at offset %d", ErrTruncated, off)
		}
		v = uint64(binary.LittleEndian.Uint16(b[off+1:]))
		if v < 0xfd {
			return 0, off, fmt.Errorf("%w at offset %d", ErrNonCanonical, off)
		}
		off += 3
	case first == 0xfe:
		if off+5 > len(b) {
			return 0, off, fmt.Errorf("%w: compact size at offset %d", ErrTruncated, off)
		}
		v = uint64(binary.LittleEndian.Uint32(b[off+1:]))
		if v < 0x10000 {
			return 0, off, fmt.Errorf("%w at offset %d", ErrNonCanonical, off)
		}
		off += 5
	default:
		if off+9 > len(b) {
			return 0, off, fmt.Errorf("%w: compact size at offset %d", ErrTruncated, off)
		}
		v = binary.LittleEndian.Uint64(b[off+1:])
		if v < 0x100000000 {
			return 0, off, fmt.Errorf("%w at offset %d", ErrNonCanonical, off)
		}
		off += 9
	}
	if v > MaxSize {
		return 0, off, fmt.Errorf("%w: %d exceeds %d", ErrOversize, v, MaxSize)
	}
	return v, off, nil
}

// AppendCompactSize appends the minimal CompactSize encoding of v.
func AppendCompactSize(dst []byte, v uint64) []byte {
	switch {
	case v < 0xfd:
		return append(dst, byte(v))
	case v <= 0xffff:
		return binary.LittleEndian.AppendUint16(append(dst, 0xfd), uint16(v))
	case v <= 0xffffffff:
		return binary.LittleEndian.AppendUint32(append(dst, 0xfe), uint32(v))
	default:
		return binary.LittleEndian.AppendUint64(append(dst, 0xff), v)
	}
}

// CompactSizeLen is the encoded length of v as a CompactSize.
func CompactSizeLen(v uint64) int {
	switch {
	case v < 0xfd:
		return 1
	case v <= 0xffff:
		return 3
	case v <= 0xffffffff:
		return 5
	default:
		return 9
	}
}
