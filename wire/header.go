package wire

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// HeaderSize is the size of a serialized block header.
const HeaderSize = 80

// Header is a decoded block header.
type Header struct {
	Version    int32
	PrevBlock  Hash
	MerkleRoot Hash
	Time       uint32
	Bits       uint32
	Nonce      uint32
}

// ParseHeader decodes the first 80 bytes of b.
func ParseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < HeaderSize {
		return h, fmt.Errorf("%w: header needs %d bytes, have %d", ErrTruncated, HeaderSize, len(b))
	}
	h.Version = int32(binary.LittleEndian.Uint32(b[0:]))
	copy(h.PrevBlock[:], b[4:36])
	copy(h.MerkleRoot[:], b[36:68])
	h.Time = binary.LittleEndian.Uint32(b[68:])
	h.Bits = binary.LittleEndian.Uint32(b[72:])
	h.Nonce = binary.LittleEndian.Uint32(b[76:])
	return h, nil
}

// AppendTo appends the 80-byte serialization of h to dst.
func (h *Header) AppendTo(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.Version))
	dst = append(dst, h.PrevBlock[:]...)
	dst = append(dst, h.MerkleRoot[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, h.Time)
	dst = binary.LittleEndian.AppendUint32(dst, h.Bits)
	return binary.LittleEndian.AppendUint32(dst, h.Nonce)
}

// BlockHash returns the SHA-256d of the serialized header.
func (h *Header) BlockHash() Hash {
	var buf [HeaderSize]byte
	return DoubleSHA256(h.AppendTo(buf[:0]))
}

// DoubleSHA256 returns SHA-256(SHA-256(b)).
func DoubleSHA256(b []byte) Hash {
	first := sha256.Sum256(b)
	return sha256.Sum256(first[:])
}
