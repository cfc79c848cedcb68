package wire

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"slices"
)

// TxIn is a view of one transaction input. Script and Witness alias the
// buffer the transaction was parsed from.
type TxIn struct {
	PrevHash  Hash
	PrevIndex uint32
	Script    []byte
	Sequence  uint32
	// Witness is the input's witness stack (nil when it has none).
	Witness [][]byte

	witStart, witEnd int32 // arena positions, resolved after parsing
}

// TxOut is a view of one transaction output; Script aliases the parse buffer.
type TxOut struct {
	Value  int64
	Script []byte
}

// Tx is a zero-copy view of a serialized transaction. Raw, every Script and
// every witness item alias the caller's buffer, which must not be modified
// while the Tx is in use.
type Tx struct {
	Raw      []byte
	Version  int32
	LockTime uint32
	Inputs   []TxIn
	Outputs  []TxOut
	// TxID hashes the serialization without witness; WTxID hashes Raw.
	TxID  Hash
	WTxID Hash
	// HasWitness reports the segwit serialization (marker, flag, witnesses).
	HasWitness bool

	// witBytes is the number of bytes the segwit serialization adds to the
	// legacy one: marker, flag and the witness section.
	witBytes         int
	inStart, inEnd   int32 // arena ranges, resolved after parsing
	outStart, outEnd int32
}

// IsCoinbase reports whether tx has the coinbase shape: exactly one input
// spending the null outpoint (Core's CTransaction::IsCoinBase).
func (tx *Tx) IsCoinbase() bool {
	return len(tx.Inputs) == 1 && tx.Inputs[0].PrevIndex == 0xffffffff && tx.Inputs[0].PrevHash == (Hash{})
}

// Size is the full serialized size (with witness).
func (tx *Tx) Size() int { return len(tx.Raw) }

// BaseSize is the size of the serialization without witness data.
func (tx *Tx) BaseSize() int { return len(tx.Raw) - tx.witBytes }

// Weight is BaseSize*3 + Size (BIP141).
func (tx *Tx) Weight() int { return tx.BaseSize()*3 + tx.Size() }

// arena holds the per-block backing arrays so that parsing allocates per
// block (amortised), never per input or output.
type arena struct {
	ins  []TxIn
	outs []TxOut
	wits [][]byte
	h    hash.Hash
	sum  []byte // h's output buffer (a stack array would escape through the interface)

	// batch: parseTx leaves the ids to hashIDs, which hashes the whole
	// block's messages after its parse.
	batch bool
	msgs  [][]byte   // per transaction: Raw, or the stripped serialization then Raw
	strip []byte     // the stripped serializations of segwit transactions
	sums  [][32]byte // hashIDs' output
}

// ParseTx parses exactly one transaction occupying all of raw.
func ParseTx(raw []byte) (*Tx, error) {
	var a arena
	tx := new(Tx)
	end, err := a.parseTx(raw, 0, tx)
	if err != nil {
		return nil, err
	}
	if end != len(raw) {
		return nil, fmt.Errorf("%w: %d bytes after transaction", ErrTrailing, len(raw)-end)
	}
	a.resolve(tx)
	return tx, nil
}

func truncated(what string, off int) error {
	return fmt.Errorf("%w: %s at offset %d", ErrTruncated, what, off)
}

// readCount reads a CompactSize count of items each at least minItem bytes
// long and refuses counts that cannot fit in the remaining input.
func readCount(b []byte, off int, minItem int, what string) (int, int, error) {
	v, off, err := ReadCompactSize(b, off)
	if err != nil {
		return 0, off, err
	}
	if v > uint64((len(b)-off)/minItem) {
		return 0, off, fmt.Errorf("%w: %d %s with %d bytes left", ErrOversize, v, what, len(b)-off)
	}
	return int(v), off, nil
}

// readBytes reads a CompactSize-prefixed byte string.
func readBytes(b []byte, off int, what string) ([]byte, int, error) {
	v, off, err := ReadCompactSize(b, off)
	if err != nil {
		return nil, off, err
	}
	if v > uint64(len(b)-off) {
		return nil, off, fmt.Errorf("%w: %s of %d bytes with %d left", ErrTruncated, what, v, len(b)-off)
	}
	end := off + int(v)
	return b[off:end:end], end, nil
}

// parseTx parses the transaction starting at b[start:], appending its inputs,
// outputs and witness items to the arena. It returns the end offset. Slices
// in tx are resolved by resolve once the arena stops growing.
func (a *arena) parseTx(b []byte, start int, tx *Tx) (int, error) {
	off := start
	if off+4 > len(b) {
		return off, truncated("tx version", off)
	}
	tx.Version = int32(binary.LittleEndian.Uint32(b[off:]))
	off += 4

	// Core's UnserializeTransaction: an empty vin is the segwit marker; then
	// a flag byte; flag 0 means an empty transaction (no vin, no vout).
	nIn, off2, err := readCount(b, off, 41, "inputs")
	if err != nil {
		return off, err
	}
	var flags byte
	segwit := false
	bodyStart := off // start of vin in the legacy serialization
	off = off2
	nOut := 0
	if nIn == 0 {
		if off >= len(b) {
			return off, truncated("segwit flag", off)
		}
		flags = b[off]
		off++
		if flags != 0 {
			segwit = true
			bodyStart = off
			if nIn, off, err = readCount(b, off, 41, "inputs"); err != nil {
				return off, err
			}
			if off, err = a.parseInputs(b, off, nIn, tx); err != nil {
				return off, err
			}
			if nOut, off, err = readCount(b, off, 9, "outputs"); err != nil {
				return off, err
			}
			if off, err = a.parseOutputs(b, off, nOut, tx); err != nil {
				return off, err
			}
		} else {
			tx.inStart, tx.inEnd = int32(len(a.ins)), int32(len(a.ins))
			tx.outStart, tx.outEnd = int32(len(a.outs)), int32(len(a.outs))
		}
	} else {
		if off, err = a.parseInputs(b, off, nIn, tx); err != nil {
			return off, err
		}
		if nOut, off, err = readCount(b, off, 9, "outputs"); err != nil {
			return off, err
		}
		if off, err = a.parseOutputs(b, off, nOut, tx); err != nil {
			return off, err
		}
	}
	bodyEnd := off
	if segwit && flags&1 != 0 {
		flags ^= 1
		hasWit := false
		for i := tx.inStart; i < tx.inEnd; i++ {
			n, o, err := readCount(b, off, 1, "witness items")
			if err != nil {
				return o, err
			}
			off = o
			in := &a.ins[i]
			in.witStart = int32(len(a.wits))
			for j := 0; j < n; j++ {
				item, o, err := readBytes(b, off, "witness item")
				if err != nil {
					return o, err
				}
				off = o
				a.wits = append(a.wits, item)
			}
			in.witEnd = int32(len(a.wits))
			if n > 0 {
				hasWit = true
			}
		}
		if !hasWit {
			return off, fmt.Errorf("%w at offset %d", ErrBadWitness, start)
		}
	}
	if flags != 0 {
		return off, fmt.Errorf("%w: unknown transaction optional data (flags %#x) at offset %d", ErrBadWitness, flags, start)
	}
	if off+4 > len(b) {
		return off, truncated("tx locktime", off)
	}
	tx.LockTime = binary.LittleEndian.Uint32(b[off:])
	off += 4
	tx.Raw = b[start:off:off]
	tx.HasWitness = segwit
	if a.batch {
		if segwit {
			tx.witBytes = (off - start) - (4 + (bodyEnd - bodyStart) + 4)
			n := len(a.strip)
			a.strip = append(a.strip, b[start:start+4]...)
			a.strip = append(a.strip, b[bodyStart:bodyEnd]...)
			a.strip = append(a.strip, b[off-4:off]...)
			a.msgs = append(a.msgs, a.strip[n:len(a.strip):len(a.strip)], tx.Raw)
		} else {
			tx.witBytes = 0
			a.msgs = append(a.msgs, tx.Raw)
		}
		return off, nil
	}
	if segwit {
		// txid = SHA-256d(version ‖ vin…vout ‖ locktime), hashed from the
		// byte ranges of the segwit serialization.
		tx.witBytes = (off - start) - (4 + (bodyEnd - bodyStart) + 4)
		if a.h == nil {
			a.h = sha256.New()
		}
		h := a.h
		h.Reset()
		h.Write(b[start : start+4])
		h.Write(b[bodyStart:bodyEnd])
		h.Write(b[off-4 : off])
		a.sum = h.Sum(a.sum[:0])
		tx.TxID = sha256.Sum256(a.sum)
		tx.WTxID = DoubleSHA256(tx.Raw)
	} else {
		tx.witBytes = 0
		tx.TxID = DoubleSHA256(tx.Raw)
		tx.WTxID = tx.TxID
	}
	return off, nil
}

// hashIDs sets the ids of txs, parsed in batch mode, from a.msgs.
func (a *arena) hashIDs(txs []Tx) {
	a.sums = slices.Grow(a.sums[:0], len(a.msgs))[:len(a.msgs)]
	for i, m := range a.msgs {
		first := sha256.Sum256(m)
		a.sums[i] = sha256.Sum256(first[:])
	}
	k := 0
	for i := range txs {
		tx := &txs[i]
		tx.TxID = a.sums[k]
		k++
		if tx.HasWitness {
			tx.WTxID = a.sums[k]
			k++
		} else {
			tx.WTxID = tx.TxID
		}
	}
}

func (a *arena) parseInputs(b []byte, off, n int, tx *Tx) (int, error) {
	tx.inStart = int32(len(a.ins))
	for i := 0; i < n; i++ {
		if off+36 > len(b) {
			return off, truncated("outpoint", off)
		}
		var in TxIn
		copy(in.PrevHash[:], b[off:off+32])
		in.PrevIndex = binary.LittleEndian.Uint32(b[off+32:])
		off += 36
		var err error
		if in.Script, off, err = readBytes(b, off, "scriptSig"); err != nil {
			return off, err
		}
		if off+4 > len(b) {
			return off, truncated("sequence", off)
		}
		in.Sequence = binary.LittleEndian.Uint32(b[off:])
		off += 4
		a.ins = append(a.ins, in)
	}
	tx.inEnd = int32(len(a.ins))
	return off, nil
}

func (a *arena) parseOutputs(b []byte, off, n int, tx *Tx) (int, error) {
	tx.outStart = int32(len(a.outs))
	for i := 0; i < n; i++ {
		if off+8 > len(b) {
			return off, truncated("output value", off)
		}
		var out TxOut
		out.Value = int64(binary.LittleEndian.Uint64(b[off:]))
		off += 8
		var err error
		if out.Script, off, err = readBytes(b, off, "scriptPubKey"); err != nil {
			return off, err
		}
		a.outs = append(a.outs, out)
	}
	tx.outEnd = int32(len(a.outs))
	return off, nil
}

// resolve points tx's slices into the (now stable) arena.
func (a *arena) resolve(tx *Tx) {
	tx.Inputs = a.ins[tx.inStart:tx.inEnd:tx.inEnd]
	tx.Outputs = a.outs[tx.outStart:tx.outEnd:tx.outEnd]
	for i := range tx.Inputs {
		in := &tx.Inputs[i]
		if in.witEnd > in.witStart {
			in.Witness = a.wits[in.witStart:in.witEnd:in.witEnd]
		} else {
			in.Witness = nil
		}
	}
}
