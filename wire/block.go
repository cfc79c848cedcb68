package wire

import (
	"fmt"
	"slices"
)

// MaxBlockSerializedSize is Core's MAX_BLOCK_SERIALIZED_SIZE (4,000,000 bytes).
const MaxBlockSerializedSize = 4_000_000

// Block is a zero-copy view of a serialized block: Raw and everything
// reachable from Txs alias the buffer passed to Parse, which must stay
// unmodified while the Block is used.
type Block struct {
	Raw    []byte
	Header Header
	Hash   Hash
	Txs    []Tx

	a arena
}

// ParseBlock parses raw as exactly one block.
func ParseBlock(raw []byte) (*Block, error) {
	b := new(Block)
	if err := b.Parse(raw); err != nil {
		return nil, err
	}
	return b, nil
}

// Parse parses raw into b, reusing b's backing arrays from an earlier parse so
// that steady-state parsing allocates nothing. Trailing bytes are an error.
func (b *Block) Parse(raw []byte) error {
	hdr, err := ParseHeader(raw)
	if err != nil {
		return err
	}
	n, off, err := readCount(raw, HeaderSize, 10, "transactions")
	if err != nil {
		return err
	}
	b.Raw = raw
	b.Header = hdr
	b.Hash = DoubleSHA256(raw[:HeaderSize])
	if cap(b.Txs) < n {
		b.Txs = make([]Tx, n)
	}
	b.Txs = b.Txs[:n]
	a := &b.a
	a.ins, a.outs, a.wits = a.ins[:0], a.outs[:0], a.wits[:0]
	// A first guess at the counts (a typical input spans over 100 bytes,
	// an output about 35) saves append's growth copies on a fresh Block.
	a.ins = slices.Grow(a.ins, n+len(raw)/160)
	a.outs = slices.Grow(a.outs, 2*n+len(raw)/160)
	// Ids are hashed once the block is parsed, all at once (hashIDs).
	a.batch = true
	a.msgs = slices.Grow(a.msgs[:0], n)
	a.strip = a.strip[:0]
	for i := range b.Txs {
		b.Txs[i] = Tx{}
		if off, err = a.parseTx(raw, off, &b.Txs[i]); err != nil {
			return fmt.Errorf("tx %d: %w", i, err)
		}
	}
	if off != len(raw) {
		return fmt.Errorf("%w: %d bytes after block", ErrTrailing, len(raw)-off)
	}
	a.hashIDs(b.Txs)
	for i := range b.Txs {
		a.resolve(&b.Txs[i])
	}
	return nil
}

// BaseSize is the block's size without witness data.
func (b *Block) BaseSize() int {
	n := len(b.Raw)
	for i := range b.Txs {
		n -= b.Txs[i].witBytes
	}
	return n
}

// Weight is BaseSize*3 + total size (BIP141).
func (b *Block) Weight() int { return b.BaseSize()*3 + len(b.Raw) }
