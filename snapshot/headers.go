package snapshot

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
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

// HeaderSet collects block headers from headers files (or a node's REST
// interface). Headers are kept in arrival order, 80 bytes each in chunks
// (no copying as the set grows); while every header builds on the one
// before it (the first on genesis) — a raw headers file, a REST fetch —
// the set needs no index by hash at all, and Chain walks it in place. The
// first header that breaks the line (Core block files hold blocks in any
// order, forks, duplicates) builds a hash index of the set, kept from then
// on.
type HeaderSet struct {
	p      *params.Params
	chunks [][]wire.Header
	n      int
	linear bool      // headers[i] builds on headers[i-1], headers[0] on genesis
	last   wire.Hash // the last header's hash, while linear
	byHash map[wire.Hash]int32
	// taken is the chain take returned (the headers themselves are
	// released then), for a second load from the same set.
	taken     []validate.IndexEntry
	takenBase wire.Hash
}

const headerChunk = 1 << 16

// NewHeaderSet returns an empty set for network p.
func NewHeaderSet(p *params.Params) *HeaderSet {
	return &HeaderSet{p: p, linear: true, last: p.GenesisHash}
}

// Len is the number of distinct headers read.
func (s *HeaderSet) Len() int {
	if s.byHash != nil {
		return len(s.byHash)
	}
	return s.n
}

func (s *HeaderSet) at(i int) *wire.Header { return &s.chunks[i/headerChunk][i%headerChunk] }

// add adds one header whose hash is hash. The genesis block's is known.
func (s *HeaderSet) add(h *wire.Header, hash wire.Hash) {
	if hash == s.p.GenesisHash {
		return
	}
	if s.byHash != nil {
		if _, ok := s.byHash[hash]; ok {
			return
		}
	} else if s.linear && h.PrevBlock != s.last {
		// The line breaks: index what is there.
		s.linear = false
		s.byHash = make(map[wire.Hash]int32, s.n+1)
		for i := 0; i < s.n; i++ {
			s.byHash[s.at(i).BlockHash()] = int32(i)
		}
		if _, ok := s.byHash[hash]; ok {
			return
		}
	}
	if s.n%headerChunk == 0 {
		s.chunks = append(s.chunks, make([]wire.Header, 0, headerChunk))
	}
	c := &s.chunks[len(s.chunks)-1]
	*c = append(*c, *h)
	if s.byHash != nil {
		s.byHash[hash] = int32(s.n)
	}
	s.n++
	s.last = hash
}

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
			s.add(&h, h.BlockHash())
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
		s.add(&h, wire.DoubleSHA256(buf[:]))
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
		s.add(&h, h.BlockHash())
	}
}

// Chain returns the index entries of the header chain from genesis's
// child to base, each header checked with the consensus header rules
// (proof of work, difficulty, time, version) as Core's AcceptBlockHeader
// does. A base the set lacks gives ErrNoBaseHeader with Core's message.
// The checks need only the last blocks before each header (the median
// time past, the difficulty period), so the chain is walked with a window
// of block nodes rather than a whole block index.
func (s *HeaderSet) Chain(base wire.Hash, now time.Time) ([]validate.IndexEntry, error) {
	if s.taken != nil && base == s.takenBase {
		return s.taken, nil
	}
	if s.chunks == nil && s.taken != nil {
		return nil, fmt.Errorf("%w: the headers were released after the chain to %s was taken", ErrHeaders, s.takenBase)
	}
	if base == s.p.GenesisHash {
		return nil, nil
	}
	// The positions of the chain's headers, genesis's child first.
	var path []int32
	if s.byHash == nil {
		// One line from genesis: the base is one of its headers (usually
		// the last), and the chain is every header up to it.
		end := -1
		for i := s.n - 1; i >= 0; i-- {
			if s.at(i).BlockHash() == base {
				end = i
				break
			}
		}
		if end < 0 {
			return nil, coreErrorf(ErrNoBaseHeader, "Did not find snapshot start blockheader %s", base)
		}
		return s.check(end+1, func(k int) int { return k }, base, now)
	}
	if _, ok := s.byHash[base]; !ok {
		return nil, coreErrorf(ErrNoBaseHeader, "Did not find snapshot start blockheader %s", base)
	}
	for h := base; h != s.p.GenesisHash; {
		i, ok := s.byHash[h]
		if !ok {
			return nil, fmt.Errorf("%w: the chain from the base %s back to genesis lacks the header of %s", ErrHeaders, base, h)
		}
		if len(path) > s.n {
			return nil, fmt.Errorf("%w: headers form a cycle", ErrHeaders) // cannot happen with SHA-256d
		}
		path = append(path, i)
		h = s.at(int(i)).PrevBlock
	}
	slices.Reverse(path)
	return s.check(len(path), func(k int) int { return int(path[k]) }, base, now)
}

// chainWindow is how many block nodes Chain keeps linked behind the tip:
// a difficulty period and the median-time-past span, with room to spare.
const chainWindow = 2016 + 11 + 64

// check validates the n headers at(pos(0)) … at(pos(n-1)), a chain from
// genesis's child to base, and returns their index entries.
func (s *HeaderSet) check(n int, pos func(int) int, base wire.Hash, now time.Time) ([]validate.IndexEntry, error) {
	g, err := wire.ParseHeader(s.p.GenesisBlock)
	if err != nil {
		return nil, fmt.Errorf("%w: genesis: %w", ErrHeaders, err)
	}
	prev := &validate.BlockNode{Hash: s.p.GenesisHash, Header: g, Status: validate.StatusHeaderValid}
	ring := make([]*validate.BlockNode, chainWindow)
	ring[0] = prev
	out := make([]validate.IndexEntry, n)
	unix := now.Unix()
	for k := range n {
		h := s.at(pos(k))
		height := int32(k + 1)
		hash := h.BlockHash()
		fail := func(err error) error {
			return fmt.Errorf("%w: header %s at height %d: %w", ErrHeaders, hash, height, err)
		}
		if h.PrevBlock != prev.Hash {
			return nil, fail(fmt.Errorf("builds on %s, not on %s", h.PrevBlock, prev.Hash)) // cannot happen: the path chains
		}
		if err := validate.CheckBlockHeader(h, hash, s.p); err != nil {
			return nil, fail(err)
		}
		if err := validate.ContextualCheckBlockHeader(h, prev, unix, s.p); err != nil {
			return nil, fail(err)
		}
		node := &validate.BlockNode{Hash: hash, Header: *h, Parent: prev, Height: height, Status: validate.StatusHeaderValid}
		// Unlink the node that falls out of the window, so that the ones
		// behind it can be collected.
		slot := int(height) % chainWindow
		if old := ring[slot]; old != nil {
			if next := ring[(slot+1)%chainWindow]; next != nil && next.Parent == old {
				next.Parent = nil
			}
		}
		ring[slot] = node
		out[k] = validate.IndexEntry{Header: *h, Status: validate.StatusHeaderValid}
		prev = node
	}
	if prev.Hash != base {
		return nil, fmt.Errorf("%w: the chain ends at %s, not at the base %s", ErrHeaders, prev.Hash, base) // cannot happen
	}
	return out, nil
}

// take is Chain for Load: it returns the chain to base and releases the
// headers themselves (the chain holds its own copies), keeping the chain
// for another load to the same base.
func (s *HeaderSet) take(base wire.Hash, now time.Time) ([]validate.IndexEntry, error) {
	chain, err := s.Chain(base, now)
	if err != nil {
		return nil, err
	}
	s.taken, s.takenBase = chain, base
	if s.taken == nil {
		s.taken = []validate.IndexEntry{}
	}
	s.chunks, s.byHash = nil, nil
	return chain, nil
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
			s.add(&page[i].Header, page[i].Hash)
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
