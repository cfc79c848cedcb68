package wire

import (
	"bufio"
	"fmt"
	"io"
)

// headerReaderBuffer is small so that a record larger than it is skipped
// by seeking instead of being read.
const headerReaderBuffer = 16 << 10

// HeaderReader reads only the 80-byte headers of the records of a Core
// block file, for headers-first sync: the framing and scanning rules are
// BlockFileReader's (each record it returns is the one BlockFileReader
// returns at the same offset), but the rest of each block is skipped by
// seeking rather than read.
type HeaderReader struct {
	src    io.ReadSeeker
	r      *bufio.Reader
	magic  [4]byte
	offset int64 // file offset of the next byte r returns
	size   int64
}

// NewHeaderReader reads the headers of src, positioned at offset 0 (wrap an
// obfuscated file in an XORReader first; it seeks).
func NewHeaderReader(src io.ReadSeeker, magic [4]byte) (*HeaderReader, error) {
	size, err := src.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return &HeaderReader{src: src, r: bufio.NewReaderSize(src, headerReaderBuffer), magic: magic, size: size}, nil
}

// Next returns the next record's header and the file offset of its magic;
// io.EOF at the end. A record whose block runs past the end of the file is
// ErrTruncated, as BlockFileReader reports it.
func (h *HeaderReader) Next() (Header, int64, error) {
	n, start, err := nextRecord(h.r, h.magic, &h.offset)
	if err != nil {
		return Header{}, 0, err
	}
	var buf [HeaderSize]byte
	if _, err := io.ReadFull(h.r, buf[:]); err != nil {
		return Header{}, 0, fmt.Errorf("%w: block of %d bytes at offset %d", ErrTruncated, n, start)
	}
	h.offset += HeaderSize
	rest := int64(n) - HeaderSize
	if h.offset+rest > h.size {
		return Header{}, 0, fmt.Errorf("%w: block of %d bytes at offset %d", ErrTruncated, n, start)
	}
	if rest <= int64(h.r.Buffered()) {
		if _, err := h.r.Discard(int(rest)); err != nil {
			return Header{}, 0, err
		}
	} else {
		if _, err := h.src.Seek(h.offset+rest, io.SeekStart); err != nil {
			return Header{}, 0, err
		}
		h.r.Reset(h.src)
	}
	h.offset += rest
	hdr, err := ParseHeader(buf[:])
	if err != nil {
		return Header{}, 0, err
	}
	return hdr, start, nil
}
