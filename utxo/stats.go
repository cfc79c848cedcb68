package utxo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"utxod/wire"
)

// BogoSize is Core's GetBogoSize (kernel/coinstats.cpp): a
// database-independent size of one coin, 32 (txid) + 4 (vout) + 4 (height
// and coinbase) + 8 (amount) + 2 (script length) + len(script).
func BogoSize(script []byte) uint64 { return 50 + uint64(len(script)) }

// ErrStats reports an update that would make the statistics inconsistent
// (a negative count or amount, or a value outside 0..MaxMoney).
var ErrStats = errors.New("utxo: inconsistent statistics update")

// ErrStatsState reports a serialized Stats that cannot be decoded.
var ErrStatsState = errors.New("utxo: bad statistics state")

// Stats are the gettxoutsetinfo statistics of a coin set, maintained
// incrementally as coins are added and removed, with the set's MuHash3072.
//
// Fields must only be changed through the methods (SetTip, AddCoin,
// RemoveCoin, UnmarshalBinary); they are exported for reading. The zero value
// is the empty set at height 0 with a zero best block.
type Stats struct {
	Height       uint32
	BestBlock    wire.Hash
	TxOuts       uint64 // number of unspent outputs
	Transactions uint64 // number of txids with at least one unspent output
	BogoSize     uint64 // Σ BogoSize(script) over all coins
	TotalAmount  int64  // Σ value in satoshis
	MuHash       MuHash3072
	// NoMuHash skips MuHash maintenance (a measurement arm: the digest
	// on/off replay comparison). The MuHash is then meaningless and Info
	// omits it. Not persisted.
	NoMuHash bool
}

// SetTip records the block the set corresponds to.
func (s *Stats) SetTip(height uint32, hash wire.Hash) {
	s.Height, s.BestBlock = height, hash
}

// AddCoin accounts for a coin entering the set. newTx must be true exactly
// when op.Hash had no unspent output before this coin (the caller's coin
// store knows; Core counts one transaction per txid group). It fails with
// ErrStats, leaving s unchanged, if c.Value is outside 0..MaxMoney or the
// total would overflow.
func (s *Stats) AddCoin(op Outpoint, c Coin, newTx bool) error {
	if c.Value < 0 || c.Value > MaxMoney {
		return fmt.Errorf("%w: value %d", ErrStats, c.Value)
	}
	if s.TotalAmount > math.MaxInt64-c.Value {
		return fmt.Errorf("%w: total amount overflow", ErrStats)
	}
	s.TxOuts++
	if newTx {
		s.Transactions++
	}
	s.BogoSize += BogoSize(c.Script)
	s.TotalAmount += c.Value
	if !s.NoMuHash {
		s.MuHash.InsertCoin(op, c)
	}
	return nil
}

// RemoveCoin accounts for a coin leaving the set; c must be the coin exactly
// as it was added. lastOfTx must be true exactly when it was the last unspent
// output of op.Hash. It fails with ErrStats, leaving s unchanged, if a count
// or the total would go negative.
func (s *Stats) RemoveCoin(op Outpoint, c Coin, lastOfTx bool) error {
	b := BogoSize(c.Script)
	switch {
	case s.TxOuts == 0, lastOfTx && s.Transactions == 0, s.BogoSize < b,
		c.Value < 0, c.Value > s.TotalAmount:
		return fmt.Errorf("%w: removing %s:%d", ErrStats, op.Hash, op.Index)
	}
	s.TxOuts--
	if lastOfTx {
		s.Transactions--
	}
	s.BogoSize -= b
	s.TotalAmount -= c.Value
	if !s.NoMuHash {
		s.MuHash.RemoveCoin(op, c)
	}
	return nil
}

// Info returns the gettxoutsetinfo object for the set with the finalized
// MuHash filled in (hash_serialized_3 needs a full ordered scan; callers that
// computed one set it themselves).
func (s *Stats) Info() ChainstateInfo {
	var muhash *wire.Hash
	if !s.NoMuHash {
		mh := s.MuHash.Finalize()
		muhash = &mh
	}
	return ChainstateInfo{
		Height:         s.Height,
		BestBlock:      s.BestBlock,
		TxOuts:         s.TxOuts,
		BogoSize:       s.BogoSize,
		MuHash:         muhash,
		Transactions:   s.Transactions,
		TotalAmount:    Amount(s.TotalAmount),
		TotalAmountSat: s.TotalAmount,
	}
}

// statsVersion tags the Stats serialization.
const statsVersion = 1

// StatsStateSize is the length of Stats.MarshalBinary's output.
const StatsStateSize = 1 + 4 + 32 + 4*8 + MuHashStateSize

// MarshalBinary returns the persistent form of s (StatsStateSize bytes):
//
//	version (1 byte, 1) ‖ height (uint32 LE) ‖ best block (32 bytes, internal
//	order) ‖ txouts, transactions, bogosize (uint64 LE each) ‖ total amount
//	(int64 LE) ‖ MuHash3072 state (768 bytes, MuHash3072.MarshalBinary)
//
// so the chainstate can store it with the tip in one atomic batch.
func (s *Stats) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, StatsStateSize)
	b = append(b, statsVersion)
	b = binary.LittleEndian.AppendUint32(b, s.Height)
	b = append(b, s.BestBlock[:]...)
	b = binary.LittleEndian.AppendUint64(b, s.TxOuts)
	b = binary.LittleEndian.AppendUint64(b, s.Transactions)
	b = binary.LittleEndian.AppendUint64(b, s.BogoSize)
	b = binary.LittleEndian.AppendUint64(b, uint64(s.TotalAmount))
	return s.MuHash.AppendBinary(b)
}

// UnmarshalBinary restores a state written by MarshalBinary. It fails with
// ErrStatsState (s unchanged) on a wrong length or version, or counts that
// cannot describe a coin set (transactions > txouts, negative amount).
func (s *Stats) UnmarshalBinary(b []byte) error {
	if len(b) != StatsStateSize {
		return fmt.Errorf("%w: %d bytes, want %d", ErrStatsState, len(b), StatsStateSize)
	}
	if b[0] != statsVersion {
		return fmt.Errorf("%w: version %d", ErrStatsState, b[0])
	}
	var t Stats
	t.Height = binary.LittleEndian.Uint32(b[1:])
	copy(t.BestBlock[:], b[5:37])
	t.TxOuts = binary.LittleEndian.Uint64(b[37:])
	t.Transactions = binary.LittleEndian.Uint64(b[45:])
	t.BogoSize = binary.LittleEndian.Uint64(b[53:])
	t.TotalAmount = int64(binary.LittleEndian.Uint64(b[61:]))
	if t.Transactions > t.TxOuts || t.TotalAmount < 0 || t.BogoSize < 50*t.TxOuts {
		return fmt.Errorf("%w: inconsistent counters", ErrStatsState)
	}
	if err := t.MuHash.UnmarshalBinary(b[69:]); err != nil {
		return fmt.Errorf("%w: %w", ErrStatsState, err)
	}
	*s = t
	return nil
}

// ChainstateInfo is the gettxoutsetinfo result as the API and CLI print it,
// with Core's field names. MuHash and HashSerialized3 are display-order hex
// (wire.Hash's text form) and omitted when nil.
type ChainstateInfo struct {
	Height          uint32     `json:"height"`
	BestBlock       wire.Hash  `json:"bestblock"`
	TxOuts          uint64     `json:"txouts"`
	BogoSize        uint64     `json:"bogosize"`
	HashSerialized3 *wire.Hash `json:"hash_serialized_3,omitempty"`
	MuHash          *wire.Hash `json:"muhash,omitempty"`
	Transactions    uint64     `json:"transactions"`
	TotalAmount     Amount     `json:"total_amount"`
	TotalAmountSat  int64      `json:"total_amount_sat"`
	// AssumeValid and AssumedValidHeight are utxod's, not gettxoutsetinfo's:
	// the assume-valid block the node runs with (null: every script is
	// verified, -assumevalid=0) and the height of the highest active-chain
	// block that was connected without verifying its scripts (null: every
	// block's scripts were verified).
	AssumeValid        *wire.Hash `json:"assume_valid"`
	AssumedValidHeight *int32     `json:"assumed_valid_height"`
	// SnapshotBase and SnapshotBaseHeight name the block of the UTXO
	// snapshot the chainstate was loaded from (omitted for a chainstate
	// built block by block).
	SnapshotBase       *wire.Hash `json:"snapshot_base,omitempty"`
	SnapshotBaseHeight *int32     `json:"snapshot_base_height,omitempty"`
}

// Amount is a value in satoshis that JSON-encodes as a BTC number with
// exactly eight decimals, like Core's ValueFromAmount (50 BTC is written
// 50.00000000, as a number, not a string).
type Amount int64

// ErrAmountSyntax reports a JSON amount that is not a decimal BTC value with
// at most eight fractional digits in int64 satoshi range.
var ErrAmountSyntax = errors.New("utxo: bad amount")

// String returns the eight-decimal BTC form, e.g. "50.00000000".
func (a Amount) String() string { return string(a.appendText(nil)) }

func (a Amount) appendText(dst []byte) []byte {
	u := uint64(a)
	if a < 0 {
		dst = append(dst, '-')
		u = -u
	}
	dst = strconv.AppendUint(dst, u/100_000_000, 10)
	dst = append(dst, '.')
	frac := u % 100_000_000
	var f [8]byte
	for i := 7; i >= 0; i-- {
		f[i] = byte('0' + frac%10)
		frac /= 10
	}
	return append(dst, f[:]...)
}

// MarshalJSON writes the amount as a JSON number with eight decimals.
func (a Amount) MarshalJSON() ([]byte, error) { return a.appendText(nil), nil }

// UnmarshalJSON reads a JSON number (or a quoted decimal string) in BTC with
// at most eight fractional digits, exactly (no floating point).
func (a *Amount) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	v, err := parseBTC(b)
	if err != nil {
		return err
	}
	*a = Amount(v)
	return nil
}

// parseBTC parses [-]digits[.digits≤8] into satoshis.
func parseBTC(b []byte) (int64, error) {
	bad := func() (int64, error) { return 0, fmt.Errorf("%w: %q", ErrAmountSyntax, b) }
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	intPart, frac, hasDot := bytes.Cut(b, []byte{'.'})
	if len(intPart) == 0 || len(intPart) > 11 || (hasDot && (len(frac) == 0 || len(frac) > 8)) {
		return bad()
	}
	var v int64
	for _, c := range intPart {
		if c < '0' || c > '9' {
			return bad()
		}
		v = v*10 + int64(c-'0')
	}
	v *= 100_000_000
	var f int64
	for i := 0; i < 8; i++ {
		f *= 10
		if i < len(frac) {
			c := frac[i]
			if c < '0' || c > '9' {
				return bad()
			}
			f += int64(c - '0')
		}
	}
	v += f
	if neg {
		v = -v
	}
	return v, nil
}
