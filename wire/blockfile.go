package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// BlockFileReader reads blocks from Core's block-file framing: 4-byte network
// magic, 4-byte little-endian length, the block. Like Core's
// LoadExternalBlockFile it scans forward to the next magic, so the zero
// padding at the end of a pre-allocated blk*.dat file (and any other bytes
// between records) is skipped.
type BlockFileReader struct {
	r      *bufio.Reader
	magic  [4]byte
	offset int64 // file offset of the next unread byte
	buf    []byte
}

// NewBlockFileReader reads framed blocks for the network with the given magic.
func NewBlockFileReader(r io.Reader, magic [4]byte) *BlockFileReader {
	return &BlockFileReader{r: bufio.NewReaderSize(r, 1<<20), magic: magic}
}

// Next returns the next block's raw bytes and the file offset of its magic.
// The returned slice is valid until the next call to Next (NextOwned does
// not reuse it). At the end of the input it returns io.EOF.
func (f *BlockFileReader) Next() ([]byte, int64, error) {
	raw, start, err := f.read(f.buf)
	if err == nil {
		f.buf = raw
	}
	return raw, start, err
}

// NextOwned is Next into a fresh slice the caller owns: one copy out of the
// read buffer, where Next and a copy of its bytes make two.
func (f *BlockFileReader) NextOwned() ([]byte, int64, error) { return f.read(nil) }

// read reads the next block into buf, grown if it is too small.
func (f *BlockFileReader) read(buf []byte) ([]byte, int64, error) {
	n, start, err := nextRecord(f.r, f.magic, &f.offset)
	if err != nil {
		return nil, 0, err
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(f.r, buf); err != nil {
		return nil, 0, fmt.Errorf("%w: block of %d bytes at offset %d", ErrTruncated, n, start)
	}
	f.offset += int64(n)
	return buf, start, nil
}

// nextRecord scans r for the next record's framing as Core's
// LoadExternalBlockFile does and returns the block's length and the offset
// of its magic, leaving r at the block's first byte; *offset tracks the
// position in the file.
func nextRecord(r *bufio.Reader, magic [4]byte, offset *int64) (uint32, int64, error) {
	for {
		// Scan for the magic one byte at a time, as Core does.
		matched := 0
		start := *offset
		for matched < 4 {
			c, err := r.ReadByte()
			if err != nil {
				if errors.Is(err, io.EOF) {
					return 0, 0, io.EOF
				}
				return 0, 0, err
			}
			*offset++
			switch {
			case c == magic[matched]:
				matched++
			case c == magic[0]:
				matched = 1
			default:
				matched = 0
			}
			if matched == 1 {
				start = *offset - 1
			}
		}
		var lenBuf [4]byte
		if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
			return 0, 0, fmt.Errorf("%w: block length at offset %d", ErrTruncated, *offset)
		}
		*offset += 4
		n := binary.LittleEndian.Uint32(lenBuf[:])
		if n < HeaderSize || n > MaxBlockSerializedSize {
			continue // not a block record; keep scanning (Core does the same)
		}
		return n, start, nil
	}
}

// XORReader undoes Core's block-file obfuscation (Core 28+, blocks/xor.dat):
// the byte at file offset i is XORed with key[i%len(key)].
type XORReader struct {
	r   io.Reader
	key []byte
	pos int64
}

// NewXORReader wraps r, which must be positioned at file offset 0. A nil or
// all-zero key passes bytes through unchanged.
func NewXORReader(r io.Reader, key []byte) *XORReader {
	return &XORReader{r: r, key: key}
}

func (x *XORReader) Read(p []byte) (int, error) {
	n, err := x.r.Read(p)
	if len(x.key) > 0 {
		k := int64(len(x.key))
		for i := 0; i < n; i++ {
			p[i] ^= x.key[(x.pos+int64(i))%k]
		}
	}
	x.pos += int64(n)
	return n, err
}

// Seek moves the underlying reader, which must be an io.Seeker, and keeps
// the key aligned with the file offset (offsets are relative to the
// position the reader started at, offset 0).
func (x *XORReader) Seek(offset int64, whence int) (int64, error) {
	sk, ok := x.r.(io.Seeker)
	if !ok {
		return x.pos, errors.New("wire: XORReader: the underlying reader cannot seek")
	}
	pos, err := sk.Seek(offset, whence)
	if err != nil {
		return x.pos, err
	}
	x.pos = pos
	return pos, nil
}

// ReadAllBlocks reads every framed block of r (see BlockFileReader) into
// freshly allocated slices the caller owns.
func ReadAllBlocks(r io.Reader, magic [4]byte) ([][]byte, error) {
	fr := NewBlockFileReader(r, magic)
	var out [][]byte
	for {
		raw, _, err := fr.NextOwned()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, raw)
	}
}
