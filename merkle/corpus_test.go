package merkle

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"testing"

	"utxod/wire"
)

const corpusPath = "../testdata/mainnet/blk_0_to_14131.dat"

var errCorpus = errors.New("corpus: malformed")

// corpusBlock is one block of the test corpus: its header merkle root and
// the txids computed by the tiny parser below.
type corpusBlock struct {
	headerRoot wire.Hash
	txids      []wire.Hash
}

// readCorpus splits Core's block-file framing (magic f9beb4d9, LE length,
// block; zero padding at the end) and hashes every transaction.
func readCorpus(tb testing.TB) []corpusBlock {
	tb.Helper()
	data, err := os.ReadFile(corpusPath)
	if err != nil {
		tb.Fatalf("corpus: %v", err)
	}
	var blocks []corpusBlock
	for off := 0; off+8 <= len(data); {
		if binary.LittleEndian.Uint32(data[off:]) == 0 {
			break // zero padding
		}
		if binary.LittleEndian.Uint32(data[off:]) != 0xd9b4bef9 {
			tb.Fatalf("bad magic at %d", off)
		}
		n := int(binary.LittleEndian.Uint32(data[off+4:]))
		off += 8
		if off+n > len(data) {
			tb.Fatalf("truncated block at %d", off)
		}
		b, err := parseBlock(data[off : off+n])
		if err != nil {
			tb.Fatalf("block %d: %v", len(blocks), err)
		}
		blocks = append(blocks, b)
		off += n
	}
	return blocks
}

// parseBlock is a test-only legacy (non-witness) block walker; the corpus
// predates segwit.
func parseBlock(b []byte) (corpusBlock, error) {
	var cb corpusBlock
	if len(b) < 81 {
		return cb, fmt.Errorf("%w: short header", errCorpus)
	}
	copy(cb.headerRoot[:], b[36:68])
	p := 80
	varint := func() (int, error) {
		if p >= len(b) {
			return 0, errCorpus
		}
		v := b[p]
		p++
		var n, w int
		switch v {
		case 0xfd:
			w = 2
		case 0xfe:
			w = 4
		case 0xff:
			w = 8
		default:
			return int(v), nil
		}
		if p+w > len(b) {
			return 0, errCorpus
		}
		for i := w - 1; i >= 0; i-- {
			n = n<<8 | int(b[p+i])
		}
		p += w
		if n < 0 || n > len(b) {
			return 0, errCorpus
		}
		return n, nil
	}
	skip := func(n int) error {
		if n < 0 || p+n > len(b) {
			return errCorpus
		}
		p += n
		return nil
	}
	ntx, err := varint()
	if err != nil {
		return cb, err
	}
	for t := 0; t < ntx; t++ {
		start := p
		if err := skip(4); err != nil {
			return cb, err
		}
		nin, err := varint()
		if err != nil || nin == 0 {
			return cb, fmt.Errorf("%w: tx %d inputs (segwit?)", errCorpus, t)
		}
		for i := 0; i < nin; i++ {
			if err := skip(36); err != nil {
				return cb, err
			}
			l, err := varint()
			if err != nil {
				return cb, err
			}
			if err := skip(l + 4); err != nil {
				return cb, err
			}
		}
		nout, err := varint()
		if err != nil {
			return cb, err
		}
		for i := 0; i < nout; i++ {
			if err := skip(8); err != nil {
				return cb, err
			}
			l, err := varint()
			if err != nil {
				return cb, err
			}
			if err := skip(l); err != nil {
				return cb, err
			}
		}
		if err := skip(4); err != nil {
			return cb, err
		}
		first := sha256.Sum256(b[start:p])
		cb.txids = append(cb.txids, sha256.Sum256(first[:]))
	}
	if p != len(b) {
		return cb, fmt.Errorf("%w: %d trailing bytes", errCorpus, len(b)-p)
	}
	return cb, nil
}

// TestCorpusParity checks, for every block of mainnet 0..14131, that every
// level computed by every available kernel equals the generic level and that
// the root equals the header's merkle root, unmutated.
func TestCorpusParity(t *testing.T) {
	blocks := readCorpus(t)
	if len(blocks) != 14132 {
		t.Fatalf("corpus has %d blocks, want 14132", len(blocks))
	}
	gen := newKernel(t, KernelGeneric)
	forEachKernel(t, func(t *testing.T, h *Hasher) {
		var cur, ref []wire.Hash
		for height, b := range blocks {
			root, mut := h.Root(b.txids)
			if root != b.headerRoot || mut {
				t.Fatalf("block %d: root %x mutated=%v, header %x", height, root, mut, b.headerRoot)
			}
			cur = append(cur[:0], b.txids...)
			ref = append(ref[:0], b.txids...)
			for level := 0; len(cur) > 1; level++ {
				if len(cur)&1 == 1 {
					cur = append(cur, cur[len(cur)-1])
					ref = append(ref, ref[len(ref)-1])
				}
				n, err := h.HashLevel(cur, cur)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := gen.HashLevel(ref, ref); err != nil {
					t.Fatal(err)
				}
				cur, ref = cur[:n], ref[:n]
				for i := range cur {
					if cur[i] != ref[i] {
						t.Fatalf("block %d level %d node %d: %x, generic %x", height, level+1, i, cur[i], ref[i])
					}
				}
			}
		}
	})
}
