package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"utxod/params"
	"utxod/testkit/blockgen"
	"utxod/validate"
	"utxod/wire"
)

// blockFile frames blocks as Core's blk*.dat does, with zero padding.
func blockFile(p *params.Params, blocks [][]byte) []byte {
	var out []byte
	for _, raw := range blocks {
		out = append(out, p.Magic[:]...)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(raw)))
		out = append(out, raw...)
	}
	return append(out, make([]byte, 100)...)
}

// TestHeaderSetForms: raw 80-byte headers, a seekable block file and a
// block file read as a stream (a pipe) give the same chain; the blocks may
// be out of order and repeated.
func TestHeaderSetForms(t *testing.T) {
	p := params.RegTest()
	blocks := fuzzTargetChain(t, 30)
	tip := blocks[29]
	shuffled := append(append(append([][]byte{}, blocks[15:]...), blocks[:15]...), blocks[3])
	now := time.Unix(1<<31, 0)
	var want []validate.IndexEntry
	for name, read := range map[string]func(*HeaderSet) error{
		"raw":                func(h *HeaderSet) error { return h.Read(bytes.NewReader(rawHeaders(blocks))) },
		"block file":         func(h *HeaderSet) error { return h.Read(bytes.NewReader(blockFile(p, shuffled))) },
		"block file, stream": func(h *HeaderSet) error { return h.Read(io.MultiReader(bytes.NewReader(blockFile(p, shuffled)))) },
		"two raw files": func(h *HeaderSet) error {
			if err := h.Read(bytes.NewReader(rawHeaders(blocks[:10]))); err != nil {
				return err
			}
			return h.Read(bytes.NewReader(rawHeaders(blocks[10:])))
		},
	} {
		hs := NewHeaderSet(p)
		if err := read(hs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		chain, err := hs.Chain(wire.DoubleSHA256(tip[:wire.HeaderSize]), now)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(chain) != 30 || chain[29].Header.BlockHash() != wire.DoubleSHA256(tip[:wire.HeaderSize]) {
			t.Fatalf("%s: chain of %d", name, len(chain))
		}
		if want == nil {
			want = chain
		} else if len(want) != len(chain) || want[0] != chain[0] || want[29] != chain[29] {
			t.Fatalf("%s: another chain", name)
		}
	}
	if err := NewHeaderSet(p).Read(bytes.NewReader(rawHeaders(blocks)[:170])); !errors.Is(err, ErrHeaders) {
		t.Fatalf("170 bytes of raw headers: %v", err)
	}
}

// TestHeadersValidated: a header chain that breaks a consensus header rule
// (a time at the median time past) is refused with the rule's reason, and
// nothing is loaded.
func TestHeadersValidated(t *testing.T) {
	p := params.RegTest()
	c, err := blockgen.NewChain(p)
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][]byte
	parent := c.Genesis
	for h := 1; h <= 12; h++ {
		tpl := c.Template(parent, nil)
		if h == 12 {
			tpl.SetTime(parent.MedianTimePast())
		}
		parent = tpl.Finish()
		blocks = append(blocks, parent.Raw)
	}
	hs := headerSet(t, p, rawHeaders(blocks))
	_, err = hs.Chain(parent.Hash, time.Unix(1<<31, 0))
	var re *validate.RuleError
	if !errors.Is(err, ErrHeaders) || !errors.As(err, &re) || re.Reason != "time-too-old" {
		t.Fatalf("got %v", err)
	}
}

// TestChainMatchesBlockIndex: Chain's windowed walk gives exactly what a
// whole validate.BlockIndex gives over the mainnet sample (seven
// difficulty periods), with the headers in order (no hash index) and
// shuffled (the hash index), and refuses a header whose bits break the
// rules after the window (its bits changed).
func TestChainMatchesBlockIndex(t *testing.T) {
	p := params.MainNet()
	_, blocks := mainnetBlocks(t)
	now := time.Unix(1<<31, 0)
	var raw []byte
	hdrs := make([]wire.Header, 0, len(blocks))
	for _, b := range blocks {
		raw = append(raw, b[:wire.HeaderSize]...)
		h, _ := wire.ParseHeader(b)
		hdrs = append(hdrs, h)
	}
	base := hdrs[len(hdrs)-1].BlockHash()
	idx := validate.NewBlockIndex(p)
	var want []validate.IndexEntry
	for _, h := range hdrs[1:] {
		n, err := idx.AcceptHeader(h, now.Unix())
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, validate.IndexEntry{Header: n.Header, Status: n.Status})
	}
	shuffled := make([]byte, 0, len(raw))
	for i := len(hdrs) - 1; i >= 0; i-- {
		shuffled = append(shuffled, raw[i*wire.HeaderSize:(i+1)*wire.HeaderSize]...)
	}
	for name, file := range map[string][]byte{"in order": raw, "reversed": shuffled} {
		hs := headerSet(t, p, file)
		if (hs.byHash == nil) != (name == "in order") {
			t.Fatalf("%s: hash index %v", name, hs.byHash != nil)
		}
		got, err := hs.Chain(base, now)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: the chain differs from the block index's", name)
		}
	}
	// A header after the window whose bits were changed.
	bad := slices.Clone(hdrs[:4033])
	bad[4032].Bits ^= 1
	var file []byte
	for i := range bad {
		if i > 0 {
			bad[i].PrevBlock = bad[i-1].BlockHash()
		}
		file = bad[i].AppendTo(file)
	}
	if _, err := headerSet(t, p, file).Chain(bad[4032].BlockHash(), now); !errors.Is(err, ErrHeaders) {
		t.Fatalf("bad bits at height 4032: %v", err)
	}
}
