package snapshot

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"

	"utxod/utxo"
	"utxod/wire"
)

// Writer writes a snapshot exactly as Core's WriteUTXOSnapshot does
// (src/rpc/blockchain.cpp): the metadata, then one group per txid in
// ascending order of the txid's raw bytes, each group's coins in the byte
// order of Core's database keys (VARINT(vout), see keyCompare). It buffers
// one group at most. Close checks that as many coins were written as the
// header announced (Core's CHECK_NONFATAL) and flushes; it does not close
// the underlying writer.
type Writer struct {
	bw      *bufio.Writer
	meta    Metadata
	written uint64
	err     error
	enc     groupEncoder
	out     []byte             // the encoded group
	outs    []utxo.IndexedCoin // Add's pending group
	pending wire.Hash          // its txid
}

// NewWriter writes m's header to w and returns a Writer for the body.
func NewWriter(w io.Writer, m Metadata) (*Writer, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.Write(m.AppendBinary(nil)); err != nil {
		return nil, err
	}
	return &Writer{bw: bw, meta: m}, nil
}

// Written is the number of coins written so far.
func (w *Writer) Written() uint64 { return w.written }

// WriteTx writes the group of txid. coins must be non-empty with distinct
// vouts, in any order (WriteTx may reorder the slice).
func (w *Writer) WriteTx(txid wire.Hash, coins []utxo.IndexedCoin) error {
	if w.err != nil {
		return w.err
	}
	var err error
	if w.out, err = w.enc.appendTx(w.out[:0], txid, coins); err != nil {
		w.err = err
		return err
	}
	return w.write(w.out, uint64(len(coins)))
}

// WriteRecord writes the group of txid from its v5 record (the store's
// encoding, utxo.EncodeRecord) without decoding scripts.
func (w *Writer) WriteRecord(txid wire.Hash, rec []byte) error {
	if w.err != nil {
		return w.err
	}
	n := w.enc.coins
	var err error
	if w.out, err = w.enc.appendRecord(w.out[:0], txid, rec); err != nil {
		w.err = err
		return err
	}
	return w.write(w.out, w.enc.coins-n)
}

// write writes encoded groups holding coins coins.
func (w *Writer) write(groups []byte, coins uint64) error {
	if _, err := w.bw.Write(groups); err != nil {
		w.err = err
		return err
	}
	w.written += coins
	return nil
}

// Add takes coins one at a time in hash_serialized_3 order (txid, then
// vout), as a chainstate Scanner yields them, grouping them per txid. Call
// Close after the last one to write the final group.
func (w *Writer) Add(e utxo.Entry) error {
	if len(w.outs) > 0 && e.Hash != w.pending {
		if err := w.flushPending(); err != nil {
			return err
		}
	}
	if len(w.outs) == 0 {
		w.pending = e.Hash
	}
	w.outs = append(w.outs, utxo.IndexedCoin{Index: e.Index, Coin: e.Coin})
	return nil
}

// flushPending writes the group Add has collected, if any.
func (w *Writer) flushPending() error {
	if len(w.outs) == 0 {
		return nil
	}
	err := w.WriteTx(w.pending, w.outs)
	w.outs = w.outs[:0]
	return err
}

// Close writes a pending group (Add), flushes, and checks the count.
func (w *Writer) Close() error {
	if err := w.flushPending(); err != nil {
		return err
	}
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = err
		return err
	}
	if w.written != w.meta.Coins {
		w.err = fmt.Errorf("%w: wrote %d, the header says %d", ErrCountMismatch, w.written, w.meta.Coins)
		return w.err
	}
	return nil
}

// groupEncoder encodes txid groups in Core's form, checking that txids
// ascend. A Writer has one; a parallel dump has one per worker and part.
type groupEncoder struct {
	first, last wire.Hash // the first and last txid encoded
	coins       uint64    // the coins encoded
	grp         []byte    // the group being built (coins only)
	ends        []int     // end offset in grp of each coin
	vouts       []uint32  // vout of each coin
	perm        []int     // key-order permutation when needed
	coin        []byte    // scratch for one coin
	tmp         []byte    // reordered group
}

// reset forgets the groups encoded, keeping the scratch buffers.
func (g *groupEncoder) reset() { g.first, g.last, g.coins = wire.Hash{}, wire.Hash{}, 0 }

func (g *groupEncoder) checkTxid(txid wire.Hash) error {
	switch {
	case g.coins == 0:
		g.first = txid
	case bytes.Compare(txid[:], g.last[:]) <= 0:
		return fmt.Errorf("%w: writer got %s after %s", ErrGroupOrder, txid, g.last)
	}
	g.last = txid
	return nil
}

// appendTx appends the group of txid from its coins (any order, distinct
// vouts; the slice is not modified).
func (g *groupEncoder) appendTx(dst []byte, txid wire.Hash, coins []utxo.IndexedCoin) ([]byte, error) {
	if err := g.checkTxid(txid); err != nil {
		return dst, err
	}
	g.beginGroup()
	for _, c := range coins {
		g.coin = utxo.AppendCoreCoin(g.coin[:0], c.Coin)
		g.addCoin(c.Index, g.coin)
	}
	return g.endGroup(dst, txid)
}

// appendRecord appends the group of txid from its v5 record.
func (g *groupEncoder) appendRecord(dst []byte, txid wire.Hash, rec []byte) ([]byte, error) {
	if err := g.checkTxid(txid); err != nil {
		return dst, err
	}
	g.beginGroup()
	var err error
	g.coin, err = utxo.RecordCoreCoins(rec, g.coin, func(vout uint32, coin []byte) error {
		g.addCoin(vout, coin)
		return nil
	})
	if err != nil {
		return dst, fmt.Errorf("snapshot: coins of %s: %w", txid, err)
	}
	return g.endGroup(dst, txid)
}

func (g *groupEncoder) beginGroup() {
	g.grp, g.ends, g.vouts = g.grp[:0], g.ends[:0], g.vouts[:0]
}

func (g *groupEncoder) addCoin(vout uint32, coin []byte) {
	g.grp = wire.AppendCompactSize(g.grp, uint64(vout))
	g.grp = append(g.grp, coin...)
	g.ends = append(g.ends, len(g.grp))
	g.vouts = append(g.vouts, vout)
}

// endGroup appends the txid, the coin count and the group in key order.
func (g *groupEncoder) endGroup(dst []byte, txid wire.Hash) ([]byte, error) {
	if len(g.ends) == 0 {
		return dst, fmt.Errorf("snapshot: empty group for txid %s", txid)
	}
	grp := g.grp
	if !slices.IsSortedFunc(g.vouts, keyCompare) {
		grp = g.reorder()
	}
	dst = append(dst, txid[:]...)
	dst = wire.AppendCompactSize(dst, uint64(len(g.ends)))
	g.coins += uint64(len(g.ends))
	return append(dst, grp...), nil
}

// reorder returns the group's coins in key order.
func (g *groupEncoder) reorder() []byte {
	g.perm = g.perm[:0]
	for i := range g.vouts {
		g.perm = append(g.perm, i)
	}
	slices.SortFunc(g.perm, func(a, b int) int { return keyCompare(g.vouts[a], g.vouts[b]) })
	g.tmp = g.tmp[:0]
	for _, i := range g.perm {
		start := 0
		if i > 0 {
			start = g.ends[i-1]
		}
		g.tmp = append(g.tmp, g.grp[start:g.ends[i]]...)
	}
	return g.tmp
}
