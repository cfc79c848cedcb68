package snapshot

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"

	"utxod/params"
	"utxod/utxo"
	"utxod/wire"
)

// maxGroupCoins bounds one txid group. No transaction can have more
// outputs: a block's 4,000,000 weight units hold at most 1,000,000
// non-witness bytes and an output takes at least 9. Core does not check
// this; utxod refuses such a group rather than buffer it (a crafted file
// could otherwise make one group of 2^25 coins).
const maxGroupCoins = 1_000_000 / 9

// readBuffer is the Reader's buffer size.
const readBuffer = 256 << 10

// Reader reads a snapshot strictly: every check of Core's loader
// (PopulateAndValidateSnapshot), with Core's messages, and the end of the
// file. It accepts what Core's loader accepts, with three exceptions, all
// files that dumptxoutset never writes: txid groups out of ascending order
// or repeated (ErrGroupOrder: the content hash must be computed in one
// pass, without the whole set in memory), a group larger than any
// transaction (ErrGroupSize), and one txid's coins at different heights or
// coinbase flags (ErrMixedHeights, which no valid chain produces and the
// store's records cannot hold; Loader only).
//
// What Core accepts but never writes — empty groups, vouts out of key
// order, duplicate outpoints (the first is kept, as Core's
// EmplaceCoinInternalDANGER does), non-canonical amount or script
// encodings, oversized raw scripts (read as OP_RETURN) and uncompressed
// keys off the curve (read as an empty script) — is read as Core reads it
// and reported by NonCanonical.
type Reader struct {
	br   *bufio.Reader
	meta Metadata
	net  *params.Params

	baseHeight int64 // −1: unknown, no height check
	left, done uint64
	last       wire.Hash
	started    bool
	finished   bool
	err        error

	coins []utxo.IndexedCoin
	order []uint32 // vouts as read, for the key-order check
	arena []byte
	spans []scriptSpan
	buf   [32]byte

	nonCanonical string
}

// NewReader reads r's metadata (ReadMetadata) and returns a Reader
// positioned on the first coin. node is the node's network (nil accepts
// every network Core knows).
func NewReader(r io.Reader, node *params.Params) (*Reader, error) {
	br := bufio.NewReaderSize(r, readBuffer)
	m, net, err := ReadMetadata(br, node)
	if err != nil {
		return nil, err
	}
	return &Reader{br: br, meta: m, net: net, baseHeight: -1, left: m.Coins}, nil
}

// Metadata returns the header.
func (r *Reader) Metadata() Metadata { return r.meta }

// Network returns the snapshot's network.
func (r *Reader) Network() *params.Params { return r.net }

// SetBaseHeight enables Core's check that no coin is younger than the base
// block (coin height > base height is ErrBadCoin). Call it before Next.
func (r *Reader) SetBaseHeight(h int32) { r.baseHeight = int64(h) }

// Done is the number of coins read so far.
func (r *Reader) Done() uint64 { return r.done }

// NonCanonical returns the first way the file differs from what
// dumptxoutset writes, or "" when everything read so far is canonical (a
// canonical file is byte-identical to the Writer's output for its coins).
func (r *Reader) NonCanonical() string { return r.nonCanonical }

func (r *Reader) noteNonCanonical(format string, args ...any) {
	if r.nonCanonical == "" {
		r.nonCanonical = fmt.Sprintf(format, args...)
	}
}

// Next returns the next txid and its coins in ascending vout order (the
// order hash_serialized_3 hashes them in). The slice and the coins' scripts
// are valid until the next call. After the last coin Next checks that
// nothing follows and returns io.EOF. Errors are sticky.
func (r *Reader) Next() (wire.Hash, []utxo.IndexedCoin, error) {
	if r.err != nil {
		return wire.Hash{}, nil, r.err
	}
	txid, coins, err := r.next()
	if err != nil {
		r.err = err
	}
	return txid, coins, err
}

func (r *Reader) next() (wire.Hash, []utxo.IndexedCoin, error) {
	for r.left > 0 {
		var txid wire.Hash
		if err := r.readFull(txid[:]); err != nil {
			return txid, nil, err
		}
		n, err := r.compactSize()
		if err != nil {
			return txid, nil, err
		}
		if n > r.left {
			return txid, nil, ErrCoinsCount
		}
		if n == 0 {
			r.noteNonCanonical("empty group for txid %s", txid)
			continue
		}
		if n > maxGroupCoins {
			return txid, nil, fmt.Errorf("%w: %d coins for txid %s", ErrGroupSize, n, txid)
		}
		if r.started && bytes.Compare(txid[:], r.last[:]) <= 0 {
			return txid, nil, fmt.Errorf("%w: %s after %s (after deserializing %d coins)", ErrGroupOrder, txid, r.last, r.done)
		}
		r.last, r.started = txid, true
		if err := r.readGroup(txid, int(n)); err != nil {
			return txid, nil, err
		}
		return txid, r.coins, nil
	}
	if !r.finished {
		r.finished = true
		if _, err := r.br.ReadByte(); err == nil {
			return wire.Hash{}, nil, coreErrorf(ErrLeftOver, "Bad snapshot - coins left over after deserializing %d coins", r.meta.Coins)
		} else if !errors.Is(err, io.EOF) {
			return wire.Hash{}, nil, fmt.Errorf("snapshot: read: %w", err)
		}
	}
	return wire.Hash{}, nil, io.EOF
}

// readGroup reads n coins of txid into r.coins, sorted by vout.
func (r *Reader) readGroup(txid wire.Hash, n int) error {
	r.coins, r.order, r.arena = r.coins[:0], r.order[:0], r.arena[:0]
	spans := r.spans[:0] // script positions in arena (arena may grow)
	for i := 0; i < n; i++ {
		vout, err := r.compactSize()
		if err != nil {
			return err
		}
		c, sp, err := r.coin()
		if err != nil {
			return err
		}
		if r.baseHeight >= 0 && int64(c.Height) > r.baseHeight {
			return coreErrorf(ErrBadCoin, "Bad snapshot data after deserializing %d coins", r.done)
		}
		if c.Value < 0 || c.Value > utxo.MaxMoney {
			return coreErrorf(ErrBadValue, "Bad snapshot data after deserializing %d coins - bad tx out value", r.done)
		}
		r.left--
		r.done++
		r.coins = append(r.coins, utxo.IndexedCoin{Index: uint32(vout), Coin: c})
		r.order = append(r.order, uint32(vout))
		spans = append(spans, sp)
	}
	r.spans = spans
	for i := range r.coins {
		r.coins[i].Coin.Script = r.arena[spans[i].off : spans[i].off+spans[i].n : spans[i].off+spans[i].n]
	}
	for i := 1; i < len(r.order); i++ {
		if keyCompare(r.order[i-1], r.order[i]) >= 0 {
			r.noteNonCanonical("vouts of txid %s not in Core's key order (%d then %d)", txid, r.order[i-1], r.order[i])
			break
		}
	}
	if !slices.IsSortedFunc(r.coins, byIndex) {
		slices.SortStableFunc(r.coins, byIndex)
	}
	// Duplicate outpoints: Core keeps the first one read.
	for i := 1; i < len(r.coins); i++ {
		if r.coins[i].Index == r.coins[i-1].Index {
			r.noteNonCanonical("duplicate outpoint %s:%d", txid, r.coins[i].Index)
			r.coins = slices.CompactFunc(r.coins, func(a, b utxo.IndexedCoin) bool { return a.Index == b.Index })
			break
		}
	}
	return nil
}

// scriptSpan is where a coin's script lies in Reader.arena.
type scriptSpan struct{ off, n int }

func byIndex(a, b utxo.IndexedCoin) int { return cmp.Compare(a.Index, b.Index) }

// coin reads one Coin as Core's Coin::Unserialize and TxOutCompression do;
// the script goes to r.arena and its position is returned.
func (r *Reader) coin() (utxo.Coin, scriptSpan, error) {
	var c utxo.Coin
	var sp scriptSpan
	code, err := r.varInt(0xffffffff)
	if err != nil {
		return c, sp, err
	}
	c.Height, c.Coinbase = uint32(code>>1), code&1 == 1
	xAmount, err := r.varInt(^uint64(0))
	if err != nil {
		return c, sp, err
	}
	// DecompressAmount wraps in uint64; CAmount is int64.
	c.Value = int64(utxo.DecompressAmount(xAmount))
	nSize, err := r.varInt(0xffffffff)
	if err != nil {
		return c, sp, err
	}
	sp.off = len(r.arena)
	switch {
	case nSize < utxo.NumSpecialScripts:
		data := r.buf[:utxo.SpecialScriptSize(nSize)]
		if err := r.readFull(data); err != nil {
			return c, sp, err
		}
		out, err := utxo.DecompressScript(r.arena, nSize, data)
		if err != nil {
			// Core ignores DecompressScript's failure: the coin keeps an
			// empty script.
			r.noteNonCanonical("uncompressed key off the curve (read as an empty script)")
		}
		r.arena = out
	case nSize-utxo.NumSpecialScripts > utxo.MaxScriptSize:
		// Core replaces an overly long script by OP_RETURN and skips it.
		n := nSize - utxo.NumSpecialScripts
		if _, err := r.br.Discard(int(n)); err != nil {
			return c, sp, r.streamErr(err)
		}
		r.arena = append(r.arena, 0x6a)
		r.noteNonCanonical("script of %d bytes (read as OP_RETURN)", n)
	default:
		n := int(nSize - utxo.NumSpecialScripts)
		r.arena = slices.Grow(r.arena, n)
		s := r.arena[len(r.arena) : len(r.arena)+n]
		if err := r.readFull(s); err != nil {
			return c, sp, err
		}
		r.arena = r.arena[:len(r.arena)+n]
	}
	sp.n = len(r.arena) - sp.off
	if r.nonCanonical == "" {
		// VARINTs have one encoding each; an amount or a raw script may
		// have another than the writer's.
		if utxo.CompressAmount(uint64(c.Value)) != xAmount {
			r.noteNonCanonical("non-canonical amount encoding %d", xAmount)
		} else if n := uint64(sp.n); nSize >= utxo.NumSpecialScripts &&
			utxo.CompressedScriptLen(r.arena[sp.off:]) != utxo.VarIntLen(n+utxo.NumSpecialScripts)+sp.n {
			r.noteNonCanonical("raw encoding of a compressible script")
		}
	}
	return c, sp, nil
}

// compactSize reads Core's ReadCompactSize with its range check.
func (r *Reader) compactSize() (uint64, error) {
	first, err := r.br.ReadByte()
	if err != nil {
		return 0, r.streamErr(err)
	}
	if first < 0xfd {
		return uint64(first), nil
	}
	k := 2
	switch first {
	case 0xfe:
		k = 4
	case 0xff:
		k = 8
	}
	r.buf[0] = first
	if err := r.readFull(r.buf[1 : 1+k]); err != nil {
		return 0, err
	}
	v, _, err := wire.ReadCompactSize(r.buf[:1+k], 0)
	if err != nil {
		return 0, formatErr(r.done) // non-canonical or above MAX_SIZE
	}
	return v, nil
}

// varInt reads Core's VARINT with ReadVarInt's overflow check against max.
func (r *Reader) varInt(max uint64) (uint64, error) {
	var n uint64
	for {
		c, err := r.br.ReadByte()
		if err != nil {
			return 0, r.streamErr(err)
		}
		if n > max>>7 {
			return 0, formatErr(r.done)
		}
		n = n<<7 | uint64(c&0x7f)
		if c&0x80 == 0 {
			if n > max {
				return 0, formatErr(r.done)
			}
			return n, nil
		}
		if n == max {
			return 0, formatErr(r.done)
		}
		n++
	}
}

func (r *Reader) readFull(b []byte) error {
	if _, err := io.ReadFull(r.br, b); err != nil {
		return r.streamErr(err)
	}
	return nil
}

// streamErr maps the end of the file to Core's format error and keeps
// other read failures (a disk error is not a bad snapshot).
func (r *Reader) streamErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return formatErr(r.done)
	}
	return fmt.Errorf("snapshot: read: %w", err)
}

// keyCompare orders vouts as Core's coins database keys do: by the bytes of
// VARINT(vout), which is numeric order except that a 3-byte encoding
// (vout ≥ 16512) sorts between the 2-byte ones.
func keyCompare(a, b uint32) int {
	if a < 16512 && b < 16512 {
		return cmp.Compare(a, b)
	}
	var ea, eb [8]byte
	return bytes.Compare(utxo.AppendVarInt(ea[:0], uint64(a)), utxo.AppendVarInt(eb[:0], uint64(b)))
}
