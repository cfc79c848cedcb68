package kvstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"utxod/utxo"
)

// ErrBadUndo reports undo bytes that do not decode.
var ErrBadUndo = errors.New("kvstore: corrupt undo record")

// undoVersion tags the undo record layout (docs/formats.md, "Undo record").
const undoVersion = 1

// encodeUndo serializes a block's delta:
//
//	version (1 byte) ‖ 3 × list (Spent, Overwritten, Created), each
//	VARINT(count) then per entry: txid (32) ‖ VARINT(vout) ‖
//	VARINT(height<<1|coinbase) ‖ value (int64 LE) ‖ VARINT(len) ‖ script
func encodeUndo(dst []byte, d *utxo.Delta) []byte {
	// Size it once: undo records are written for every block.
	n := 1
	for _, list := range [][]utxo.Entry{d.Spent, d.Overwritten, d.Created} {
		n += 9
		for _, e := range list {
			n += 32 + 5 + 5 + 8 + 3 + len(e.Script) // varints at their widest for these fields
		}
	}
	dst = slices.Grow(dst, n)
	dst = append(dst, undoVersion)
	for _, list := range [][]utxo.Entry{d.Spent, d.Overwritten, d.Created} {
		dst = utxo.AppendVarInt(dst, uint64(len(list)))
		for _, e := range list {
			dst = append(dst, e.Hash[:]...)
			dst = utxo.AppendVarInt(dst, uint64(e.Index))
			code := uint64(e.Height) << 1
			if e.Coinbase {
				code |= 1
			}
			dst = utxo.AppendVarInt(dst, code)
			dst = binary.LittleEndian.AppendUint64(dst, uint64(e.Value))
			dst = utxo.AppendVarInt(dst, uint64(len(e.Script)))
			dst = append(dst, e.Script...)
		}
	}
	return dst
}

// decodeUndo parses encodeUndo's output. Scripts alias b.
func decodeUndo(b []byte) (*utxo.Delta, error) {
	if len(b) == 0 || b[0] != undoVersion {
		return nil, fmt.Errorf("%w: version", ErrBadUndo)
	}
	off := 1
	varint := func(max uint64) (uint64, error) {
		v, n, err := utxo.ReadVarInt(b[off:], max)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrBadUndo, err)
		}
		off += n
		return v, nil
	}
	d := &utxo.Delta{}
	for li, list := range []*[]utxo.Entry{&d.Spent, &d.Overwritten, &d.Created} {
		n, err := varint(uint64(len(b)))
		if err != nil {
			return nil, err
		}
		if n > uint64(len(b)-off)/44 {
			return nil, fmt.Errorf("%w: list %d count %d", ErrBadUndo, li, n)
		}
		out := make([]utxo.Entry, n)
		for i := range out {
			if off+32 > len(b) {
				return nil, fmt.Errorf("%w: truncated", ErrBadUndo)
			}
			e := &out[i]
			copy(e.Hash[:], b[off:])
			off += 32
			vout, err := varint(0xffffffff)
			if err != nil {
				return nil, err
			}
			code, err := varint(0x1ffffffff)
			if err != nil {
				return nil, err
			}
			if off+8 > len(b) {
				return nil, fmt.Errorf("%w: truncated", ErrBadUndo)
			}
			value := int64(binary.LittleEndian.Uint64(b[off:]))
			off += 8
			sl, err := varint(uint64(len(b) - off))
			if err != nil {
				return nil, err
			}
			e.Index = uint32(vout)
			e.Height = uint32(code >> 1)
			e.Coinbase = code&1 == 1
			e.Value = value
			e.Script = b[off : off+int(sl) : off+int(sl)]
			off += int(sl)
		}
		*list = out
	}
	if off != len(b) {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrBadUndo, len(b)-off)
	}
	return d, nil
}
