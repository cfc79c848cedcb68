package utxo

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"slices"

	"utxod/wire"
)

// IndexedCoin is one output of a transaction: its output index (vout) and
// the coin. The record codec and HashSerialized3.AddTx take lists of them.
type IndexedCoin struct {
	Index uint32
	Coin  Coin
}

// ErrCoinOrder reports coins fed to HashSerialized3 out of Core's order or
// twice.
var ErrCoinOrder = errors.New("utxo: coins out of order")

// HashSerialized3 computes gettxoutsetinfo's hash_serialized_3: SHA-256d over
// the TxOutSer of every coin, in Core's order.
//
// Core's order (kernel/coinstats.cpp ComputeUTXOStats/ApplyHash): the
// coins-DB cursor walks keys 'C' ‖ txid ‖ VARINT(vout), so txids come in
// ascending order of their raw (internal) bytes; the outputs of one txid are
// collected into a std::map<uint32_t, Coin> and hashed in ascending numeric
// vout order. (The key order of VARINT(vout) differs from numeric order from
// vout 16512 on; the per-txid map is what makes the result numeric.)
//
// Add must therefore be called in ascending (txid raw bytes, vout) order; it
// rejects anything else with ErrCoinOrder and the hasher stays usable with
// the offending coin ignored. AddTx accepts one txid's outputs in any order.
// The zero value is ready to use.
type HashSerialized3 struct {
	h       hash.Hash
	buf     []byte
	last    Outpoint
	started bool
	n       uint64
}

// Add hashes one coin. It fails with ErrCoinOrder unless op is strictly
// greater than the previously added outpoint in Core's order.
func (s *HashSerialized3) Add(op Outpoint, c Coin) error {
	if s.started {
		d := bytes.Compare(op.Hash[:], s.last.Hash[:])
		if d < 0 || (d == 0 && op.Index <= s.last.Index) {
			return fmt.Errorf("%w: %s:%d after %s:%d", ErrCoinOrder, op.Hash, op.Index, s.last.Hash, s.last.Index)
		}
	}
	if s.h == nil {
		s.h = sha256.New()
	}
	s.buf = AppendTxOutSer(s.buf[:0], op, c)
	s.h.Write(s.buf)
	s.last = op
	s.started = true
	s.n++
	return nil
}

// AddTx hashes all unspent outputs of transaction txid, given in any vout
// order; it sorts outs in place by Index (as Core's per-txid std::map does).
// txid must be greater than every txid added before. Duplicate indices fail
// with ErrCoinOrder (the coins before the duplicate are hashed).
func (s *HashSerialized3) AddTx(txid wire.Hash, outs []IndexedCoin) error {
	slices.SortFunc(outs, func(a, b IndexedCoin) int { return cmp.Compare(a.Index, b.Index) })
	for i := range outs {
		if err := s.Add(Outpoint{Hash: txid, Index: outs[i].Index}, outs[i].Coin); err != nil {
			return err
		}
	}
	return nil
}

// AddSerialized hashes coins given as their TxOutSer serializations,
// concatenated, in Core's order, which the caller guarantees (Add checks
// it; do not mix the two): a reader that orders its coins can serialize
// them once, for MuHash too, and hash them on another goroutine.
func (s *HashSerialized3) AddSerialized(ser []byte, coins uint64) {
	if s.h == nil {
		s.h = sha256.New()
	}
	s.h.Write(ser)
	s.n += coins
}

// Count returns the number of coins hashed so far.
func (s *HashSerialized3) Count() uint64 { return s.n }

// Sum returns SHA-256d of everything added so far (Core's HashWriter
// GetHash), in raw byte order; its String form is what gettxoutsetinfo prints
// as "hash_serialized_3". Sum does not change the hasher's state.
func (s *HashSerialized3) Sum() wire.Hash {
	var first [sha256.Size]byte
	if s.h == nil {
		first = sha256.Sum256(nil)
	} else {
		s.h.Sum(first[:0])
	}
	return wire.Hash(sha256.Sum256(first[:]))
}
