package utxo

import "encoding/binary"

// AppendCompactSize appends Bitcoin's CompactSize encoding of n (serialize.h
// WriteCompactSize) to dst.
func AppendCompactSize(dst []byte, n uint64) []byte {
	switch {
	case n < 0xfd:
		return append(dst, byte(n))
	case n <= 0xffff:
		return append(dst, 0xfd, byte(n), byte(n>>8))
	case n <= 0xffffffff:
		return append(dst, 0xfe, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	}
	dst = append(dst, 0xff)
	return binary.LittleEndian.AppendUint64(dst, n)
}

// compactSizeLen is the length of AppendCompactSize's output for n.
func compactSizeLen(n uint64) int {
	switch {
	case n < 0xfd:
		return 1
	case n <= 0xffff:
		return 3
	case n <= 0xffffffff:
		return 5
	}
	return 9
}

// TxOutSerLen returns the number of bytes AppendTxOutSer writes for c.
func TxOutSerLen(c Coin) int {
	return 32 + 4 + 4 + 8 + compactSizeLen(uint64(len(c.Script))) + len(c.Script)
}

// AppendTxOutSer appends the serialization Bitcoin Core hashes for one coin
// (TxOutSer in kernel/coinstats.cpp) to dst and returns the extended slice:
//
//	txid (32 bytes, internal byte order) ‖ vout (uint32 LE)
//	‖ uint32 LE (height<<1 | coinbase)
//	‖ value (int64 LE) ‖ CompactSize(len(script)) ‖ script
//
// It allocates only if dst lacks capacity for TxOutSerLen(c) more bytes. Both
// MuHash3072 (per-coin element) and hash_serialized_3 (stream) consume it.
func AppendTxOutSer(dst []byte, op Outpoint, c Coin) []byte {
	dst = append(dst, op.Hash[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, op.Index)
	code := c.Height << 1
	if c.Coinbase {
		code |= 1
	}
	dst = binary.LittleEndian.AppendUint32(dst, code)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(c.Value))
	dst = AppendCompactSize(dst, uint64(len(c.Script)))
	return append(dst, c.Script...)
}
