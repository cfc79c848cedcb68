package snapshot

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"utxod/follow"
	"utxod/params"
	"utxod/validate"
	"utxod/wire"
)

// ErrHeaders reports a headers file that does not give a valid header
// chain from genesis to the snapshot base.
var ErrHeaders = errors.New("snapshot: bad headers")

// HeaderSet collects block headers by hash from headers files.
type HeaderSet struct {
	p       *params.Params
	headers map[wire.Hash]wire.Header
}

// NewHeaderSet returns an empty set for network p.
func NewHeaderSet(p *params.Params) *HeaderSet {
	return &HeaderSet{p: p, headers: make(map[wire.Hash]wire.Header)}
}

// Len is the number of distinct headers read.
func (s *HeaderSet) Len() int { return len(s.headers) }

// Read adds the headers of one file, in either of two forms told apart by
// the first four bytes: Core's block files (the network magic, a 4-byte
// length, a block; the header is the block's first 80 bytes; padding and
// any order allowed), or raw 80-byte headers one after another, as Core's
// REST /rest/headers/<count>/<hash>.bin returns them.
func (s *HeaderSet) Read(r io.Reader) error {
	if rs, ok := r.(io.ReadSeeker); ok {
		// A seekable block file is read header by header, skipping the
		// blocks' bodies (wire.HeaderReader).
		var first [4]byte
		n, err := io.ReadFull(rs, first[:])
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: %w", ErrHeaders, err)
		}
		if _, err := rs.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("%w: %w", ErrHeaders, err)
		}
		if n == 4 && first == s.p.Magic {
			return s.readBlockFile(rs)
		}
	}
	br := bufio.NewReaderSize(r, 1<<20)
	first, err := br.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %w", ErrHeaders, err)
	}
	if bytes.Equal(first, s.p.Magic[:]) {
		fr := wire.NewBlockFileReader(br, s.p.Magic)
		for {
			raw, off, err := fr.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%w: block file: %w", ErrHeaders, err)
			}
			h, err := wire.ParseHeader(raw)
			if err != nil {
				return fmt.Errorf("%w: block at offset %d: %w", ErrHeaders, off, err)
			}
			s.headers[h.BlockHash()] = h
		}
	}
	var buf [wire.HeaderSize]byte
	for n := 0; ; n++ {
		if _, err := io.ReadFull(br, buf[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("%w: raw headers: the file ends inside header %d (its size is not a multiple of 80 bytes)", ErrHeaders, n)
			}
			return fmt.Errorf("%w: %w", ErrHeaders, err)
		}
		h, err := wire.ParseHeader(buf[:])
		if err != nil {
			return fmt.Errorf("%w: header %d: %w", ErrHeaders, n, err)
		}
		s.headers[h.BlockHash()] = h
	}
}

// readBlockFile adds the headers of a seekable Core block file.
func (s *HeaderSet) readBlockFile(rs io.ReadSeeker) error {
	hr, err := wire.NewHeaderReader(rs, s.p.Magic)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrHeaders, err)
	}
	for {
		h, _, err := hr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: block file: %w", ErrHeaders, err)
		}
		s.headers[h.BlockHash()] = h
	}
}

// Chain returns the index entries of the header chain from genesis's
// child to base, each header checked with the consensus header rules
// (proof of work, difficulty, time, version) as Core's AcceptBlockHeader
// does. A base the set lacks gives ErrNoBaseHeader with Core's message.
func (s *HeaderSet) Chain(base wire.Hash, now time.Time) ([]validate.IndexEntry, error) {
	if _, ok := s.headers[base]; !ok && base != s.p.GenesisHash {
		return nil, coreErrorf(ErrNoBaseHeader, "Did not find snapshot start blockheader %s", base)
	}
	var path []wire.Header
	for h := base; h != s.p.GenesisHash; {
		hdr, ok := s.headers[h]
		if !ok {
			return nil, fmt.Errorf("%w: the chain from the base %s back to genesis lacks the header of %s", ErrHeaders, base, h)
		}
		if len(path) > len(s.headers) {
			return nil, fmt.Errorf("%w: headers form a cycle", ErrHeaders) // cannot happen with SHA-256d
		}
		path = append(path, hdr)
		h = hdr.PrevBlock
	}
	idx := validate.NewBlockIndex(s.p)
	out := make([]validate.IndexEntry, 0, len(path))
	for i := len(path) - 1; i >= 0; i-- {
		n, err := idx.AcceptHeader(path[i], now.Unix())
		if err != nil {
			return nil, fmt.Errorf("%w: header %s at height %d: %w", ErrHeaders, path[i].BlockHash(), len(path)-i, err)
		}
		out = append(out, validate.IndexEntry{Header: n.Header, Status: n.Status})
	}
	return out, nil
}

// IsURL reports whether a --headers argument names a node's REST interface
// (http:// or https://) rather than a file.
func IsURL(name string) bool {
	return strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://")
}

// Fetch adds the header chain from genesis to base, fetched from the REST
// interface at url (bitcoind -rest, or another utxod: http://host:port)
// with /rest/headers/<count>/<hash>.bin, 2,000 headers a request, walking
// forward from genesis by the last header of each page (follow.Client's
// HeaderChain: each page is checked to start where asked, chain and carry
// its proof of work; Chain then applies every header rule). progress, if
// set, is called after each page with the headers fetched.
func (s *HeaderSet) Fetch(ctx context.Context, url string, base wire.Hash, progress func(fetched int)) error {
	c, err := follow.NewClient(follow.ClientConfig{URL: url, Params: s.p})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrHeaders, err)
	}
	n := 0
	err = c.HeaderChain(ctx, base, func(page []follow.Header) error {
		for i := range page {
			s.headers[page[i].Hash] = page[i].Header
		}
		n += len(page)
		if progress != nil {
			progress(n)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: from %s: %w", ErrHeaders, url, err)
	}
	return nil
}
