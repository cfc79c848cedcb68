// Package undorec is kvstore's undo record codec (docs/formats.md, "Undo
// record"): the coins a block spent, whole, and the outpoints it created.
// Pure Go without I/O, so its fuzz target builds without the stores.
package undorec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"utxod/utxo"
	"utxod/wire"
)

// ErrCorrupt reports undo bytes that do not decode (kvstore.ErrBadUndo).
var ErrCorrupt = errors.New("kvstore: corrupt undo record")

// Version tags the undo record layout (docs/formats.md, "Undo record"):
// version 1 kept the created coins whole; version 2 keeps only their
// outpoints, as Core's undo data holds only spent coins.
const (
	Version1 = 1
	Version  = 2
)

// Encode appends to dst the serialization of a block's delta:
//
//	version (1 byte) ‖ 2 × list (Spent, Overwritten), each VARINT(count)
//	then per entry: txid (32) ‖ VARINT(vout) ‖ VARINT(height<<1|coinbase) ‖
//	value (int64 LE) ‖ VARINT(len) ‖ script; then the created outpoints:
//	VARINT(groups), per group (one txid): txid (32) ‖ VARINT(n) ‖ n × VARINT(vout)
//
// Created coins are not kept: when the block is disconnected it is the tip,
// so every coin it created is in the coin set, where Undo reads it.
func Encode(dst []byte, d *utxo.Delta) []byte {
	// Size it once: undo records are written for every block.
	n := 1 + 9*3
	for _, list := range [][]utxo.Entry{d.Spent, d.Overwritten} {
		for _, e := range list {
			n += 32 + 5 + 5 + 8 + 3 + len(e.Script) // varints at their widest for these fields
		}
	}
	n += len(d.Created) * (32 + 5 + 5)
	dst = slices.Grow(dst, n)
	dst = append(dst, Version)
	dst = appendList(dst, d.Spent)
	dst = appendList(dst, d.Overwritten)
	groups := 0
	for i := 0; i < len(d.Created); i = utxo.TxidRunEnd(d.Created, i) {
		groups++
	}
	dst = utxo.AppendVarInt(dst, uint64(groups))
	for i := 0; i < len(d.Created); {
		j := utxo.TxidRunEnd(d.Created, i)
		dst = append(dst, d.Created[i].Hash[:]...)
		dst = utxo.AppendVarInt(dst, uint64(j-i))
		for _, e := range d.Created[i:j] {
			dst = utxo.AppendVarInt(dst, uint64(e.Index))
		}
		i = j
	}
	return dst
}

// appendList appends a list of whole coins: VARINT(count), then per
// entry txid (32) ‖ VARINT(vout) ‖ VARINT(height<<1|coinbase) ‖ value
// (int64 LE) ‖ VARINT(len) ‖ script.
func appendList(dst []byte, list []utxo.Entry) []byte {
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
	return dst
}

// Decode parses Encode's output (and version 1 records). Scripts
// alias b. The Created entries of a version-2 record carry only their
// outpoints (whole reports false); kvstore's Store.Undo fills in their coins.
func Decode(b []byte) (d *utxo.Delta, whole bool, err error) {
	if len(b) == 0 || (b[0] != Version && b[0] != Version1) {
		return nil, false, fmt.Errorf("%w: version", ErrCorrupt)
	}
	whole = b[0] == Version1
	off := 1
	varint := func(max uint64) (uint64, error) {
		v, n, err := utxo.ReadVarInt(b[off:], max)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		off += n
		return v, nil
	}
	d = &utxo.Delta{}
	lists := []*[]utxo.Entry{&d.Spent, &d.Overwritten}
	if whole {
		lists = append(lists, &d.Created)
	}
	for li, list := range lists {
		n, err := varint(uint64(len(b)))
		if err != nil {
			return nil, false, err
		}
		if n > uint64(len(b)-off)/44 {
			return nil, false, fmt.Errorf("%w: list %d count %d", ErrCorrupt, li, n)
		}
		out := make([]utxo.Entry, n)
		for i := range out {
			if off+32 > len(b) {
				return nil, false, fmt.Errorf("%w: truncated", ErrCorrupt)
			}
			e := &out[i]
			copy(e.Hash[:], b[off:])
			off += 32
			vout, err := varint(0xffffffff)
			if err != nil {
				return nil, false, err
			}
			code, err := varint(0x1ffffffff)
			if err != nil {
				return nil, false, err
			}
			if off+8 > len(b) {
				return nil, false, fmt.Errorf("%w: truncated", ErrCorrupt)
			}
			value := int64(binary.LittleEndian.Uint64(b[off:]))
			off += 8
			sl, err := varint(uint64(len(b) - off))
			if err != nil {
				return nil, false, err
			}
			if uint64(len(b)-off) < sl { // the bound above was taken before the length's own bytes
				return nil, false, fmt.Errorf("%w: truncated script", ErrCorrupt)
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
	if !whole {
		groups, err := varint(uint64(len(b)))
		if err != nil {
			return nil, false, err
		}
		if groups > uint64(len(b)-off)/34 {
			return nil, false, fmt.Errorf("%w: %d created groups", ErrCorrupt, groups)
		}
		for range groups {
			if off+32 > len(b) {
				return nil, false, fmt.Errorf("%w: truncated", ErrCorrupt)
			}
			var txid wire.Hash
			copy(txid[:], b[off:])
			off += 32
			n, err := varint(uint64(len(b) - off))
			if err != nil {
				return nil, false, err
			}
			if n == 0 {
				return nil, false, fmt.Errorf("%w: empty created group", ErrCorrupt)
			}
			for range n {
				vout, err := varint(0xffffffff)
				if err != nil {
					return nil, false, err
				}
				d.Created = append(d.Created, utxo.Entry{Outpoint: utxo.Outpoint{Hash: txid, Index: uint32(vout)}})
			}
		}
	}
	if off != len(b) {
		return nil, false, fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(b)-off)
	}
	return d, whole, nil
}
