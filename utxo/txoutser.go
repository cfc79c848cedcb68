package utxo

import (
	"encoding/binary"

	"utxod/wire"
)

// TxOutSerLen returns the number of bytes AppendTxOutSer writes for c.
func TxOutSerLen(c Coin) int {
	return 32 + 4 + 4 + 8 + wire.CompactSizeLen(uint64(len(c.Script))) + len(c.Script)
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
	dst = wire.AppendCompactSize(dst, uint64(len(c.Script)))
	return append(dst, c.Script...)
}
