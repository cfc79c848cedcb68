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
	last    wire.Hash
	started bool
	err     error

	grp     []byte             // the group being built (coins only)
	ends    []int              // end offset in grp of each coin
	vouts   []uint32           // vout of each coin
	perm    []int              // key-order permutation when needed
	coin    []byte             // scratch for one coin
	tmp     []byte             // reordered group
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

func (w *Writer) checkTxid(txid wire.Hash) error {
	if w.err != nil {
		return w.err
	}
	if w.started && bytes.Compare(txid[:], w.last[:]) <= 0 {
		w.err = fmt.Errorf("%w: writer got %s after %s", ErrGroupOrder, txid, w.last)
		return w.err
	}
	w.last, w.started = txid, true
	return nil
}

// WriteTx writes the group of txid. coins must be non-empty with distinct
// vouts, in any order (WriteTx may reorder the slice).
func (w *Writer) WriteTx(txid wire.Hash, coins []utxo.IndexedCoin) error {
	if err := w.checkTxid(txid); err != nil {
		return err
	}
	w.beginGroup()
	for _, c := range coins {
		w.coin = utxo.AppendCoreCoin(w.coin[:0], c.Coin)
		w.addCoin(c.Index, w.coin)
	}
	return w.endGroup(txid)
}

// WriteRecord writes the group of txid from its v5 record (the store's
// encoding, utxo.EncodeRecord) without decoding scripts.
func (w *Writer) WriteRecord(txid wire.Hash, rec []byte) error {
	if err := w.checkTxid(txid); err != nil {
		return err
	}
	w.beginGroup()
	var err error
	w.coin, err = utxo.RecordCoreCoins(rec, w.coin, func(vout uint32, coin []byte) error {
		w.addCoin(vout, coin)
		return nil
	})
	if err != nil {
		w.err = fmt.Errorf("snapshot: coins of %s: %w", txid, err)
		return w.err
	}
	return w.endGroup(txid)
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

func (w *Writer) beginGroup() {
	w.grp, w.ends, w.vouts = w.grp[:0], w.ends[:0], w.vouts[:0]
}

func (w *Writer) addCoin(vout uint32, coin []byte) {
	w.grp = wire.AppendCompactSize(w.grp, uint64(vout))
	w.grp = append(w.grp, coin...)
	w.ends = append(w.ends, len(w.grp))
	w.vouts = append(w.vouts, vout)
}

func (w *Writer) endGroup(txid wire.Hash) error {
	if len(w.ends) == 0 {
		w.err = fmt.Errorf("snapshot: empty group for txid %s", txid)
		return w.err
	}
	grp := w.grp
	if !slices.IsSortedFunc(w.vouts, keyCompare) {
		grp = w.reorder()
	}
	var hdr [32 + 9]byte
	h := append(hdr[:0], txid[:]...)
	h = wire.AppendCompactSize(h, uint64(len(w.ends)))
	if _, err := w.bw.Write(h); err != nil {
		w.err = err
		return err
	}
	if _, err := w.bw.Write(grp); err != nil {
		w.err = err
		return err
	}
	w.written += uint64(len(w.ends))
	return nil
}

// reorder returns the group's coins in key order.
func (w *Writer) reorder() []byte {
	w.perm = w.perm[:0]
	for i := range w.vouts {
		w.perm = append(w.perm, i)
	}
	slices.SortFunc(w.perm, func(a, b int) int { return keyCompare(w.vouts[a], w.vouts[b]) })
	w.tmp = w.tmp[:0]
	for _, i := range w.perm {
		start := 0
		if i > 0 {
			start = w.ends[i-1]
		}
		w.tmp = append(w.tmp, w.grp[start:w.ends[i]]...)
	}
	return w.tmp
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
