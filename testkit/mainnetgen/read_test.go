package mainnetgen

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// The tests read the generated snapshot back with this decoder (Core's
// Unserialize side: ReadCompactSize, ReadVarInt, DecompressAmount,
// DecompressScript), written for the tests only.

type snapHeader struct {
	magic   [5]byte
	version uint16
	netMagc [4]byte
	base    [32]byte
	coins   uint64
}

type readCoin struct {
	vout   uint32
	code   uint32
	value  uint64
	script []byte
	key    []byte // VARINT(vout), the cursor key's tail
}

type snapReader struct {
	r *bufio.Reader
}

func (s *snapReader) header() (snapHeader, error) {
	var b [51]byte
	var h snapHeader
	if _, err := io.ReadFull(s.r, b[:]); err != nil {
		return h, err
	}
	copy(h.magic[:], b[:5])
	h.version = binary.LittleEndian.Uint16(b[5:])
	copy(h.netMagc[:], b[7:11])
	copy(h.base[:], b[11:43])
	h.coins = binary.LittleEndian.Uint64(b[43:])
	return h, nil
}

func (s *snapReader) compactSize() (uint64, error) {
	b, err := s.r.ReadByte()
	if err != nil {
		return 0, err
	}
	var n int
	switch b {
	case 0xfd:
		n = 2
	case 0xfe:
		n = 4
	case 0xff:
		n = 8
	default:
		return uint64(b), nil
	}
	var buf [8]byte
	if _, err := io.ReadFull(s.r, buf[:n]); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint64(buf[:])
	if (n == 2 && v < 0xfd) || (n == 4 && v <= 0xffff) || (n == 8 && v <= 0xffffffff) {
		return 0, errors.New("non-canonical CompactSize")
	}
	return v, nil
}

func (s *snapReader) varInt() (uint64, error) {
	var n uint64
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			return 0, err
		}
		if n > (^uint64(0) >> 7) {
			return 0, errors.New("VARINT overflow")
		}
		n = n<<7 | uint64(b&0x7f)
		if b&0x80 == 0 {
			return n, nil
		}
		n++
	}
}

// decompressAmount is Core's DecompressAmount.
func decompressAmount(x uint64) uint64 {
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

func (s *snapReader) script() ([]byte, error) {
	size, err := s.varInt()
	if err != nil {
		return nil, err
	}
	var body [32]byte
	switch size {
	case 0x00:
		if _, err := io.ReadFull(s.r, body[:20]); err != nil {
			return nil, err
		}
		return append(append([]byte{0x76, 0xa9, 20}, body[:20]...), 0x88, 0xac), nil
	case 0x01:
		if _, err := io.ReadFull(s.r, body[:20]); err != nil {
			return nil, err
		}
		return append(append([]byte{0xa9, 20}, body[:20]...), 0x87), nil
	case 0x02, 0x03:
		if _, err := io.ReadFull(s.r, body[:]); err != nil {
			return nil, err
		}
		return append(append([]byte{33, byte(size)}, body[:]...), 0xac), nil
	case 0x04, 0x05:
		if _, err := io.ReadFull(s.r, body[:]); err != nil {
			return nil, err
		}
		var x, y secp256k1.FieldVal
		if x.SetByteSlice(body[:]) || !secp256k1.DecompressY(&x, size == 0x05, &y) {
			return nil, errors.New("uncompressed key off the curve")
		}
		var yb [32]byte
		y.Normalize().PutBytesUnchecked(yb[:])
		return append(append(append([]byte{65, 0x04}, body[:]...), yb[:]...), 0xac), nil
	}
	n := size - 6
	if n > 10_000 {
		return nil, fmt.Errorf("script of %d bytes", n)
	}
	b := make([]byte, n)
	_, err = io.ReadFull(s.r, b)
	return b, err
}

// group reads one txid group.
func (s *snapReader) group() ([32]byte, []readCoin, error) {
	var txid [32]byte
	if _, err := io.ReadFull(s.r, txid[:]); err != nil {
		return txid, nil, err
	}
	n, err := s.compactSize()
	if err != nil {
		return txid, nil, err
	}
	coins := make([]readCoin, 0, n)
	for range n {
		vout, err := s.compactSize()
		if err != nil {
			return txid, nil, err
		}
		code, err := s.varInt()
		if err != nil {
			return txid, nil, err
		}
		amt, err := s.varInt()
		if err != nil {
			return txid, nil, err
		}
		script, err := s.script()
		if err != nil {
			return txid, nil, err
		}
		coins = append(coins, readCoin{vout: uint32(vout), code: uint32(code), value: decompressAmount(amt), script: script, key: appendVarInt(nil, vout)})
	}
	return txid, coins, nil
}
