package validate

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"utxod/params"
	"utxod/wire"
)

// farFuture is a clock far beyond any test header's time.
const farFuture = int64(1) << 40

// mainnetHeaders reads the headers of ../testdata/mainnet/blk_0_to_14131.dat
// (Core block-file framing: magic f9beb4d9, 4-byte little-endian length,
// block; zero padding ends the data). The header is the first 80 bytes of
// each block.
func mainnetHeaders(t testing.TB) []wire.Header {
	t.Helper()
	data, err := os.ReadFile("../testdata/mainnet/blk_0_to_14131.dat")
	if err != nil {
		t.Fatal(err)
	}
	magic := []byte{0xf9, 0xbe, 0xb4, 0xd9}
	var hs []wire.Header
	for off := 0; off+8 <= len(data); {
		if string(data[off:off+4]) != string(magic) {
			if data[off] == 0 {
				break // padding
			}
			t.Fatalf("bad magic at offset %d", off)
		}
		n := int(binary.LittleEndian.Uint32(data[off+4:]))
		off += 8
		if n < wire.HeaderSize || off+n > len(data) {
			t.Fatalf("bad block length %d at offset %d", n, off)
		}
		h, err := wire.ParseHeader(data[off : off+n])
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
		off += n
	}
	return hs
}

// Every header of mainnet 0–14131 passes CheckBlockHeader and
// ContextualCheckBlockHeader and the index ends at block 14131, whose hash
// is 00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c
// (public block explorers; btcd's blockchain tests use the same file).
func TestMainnetHeaders(t *testing.T) {
	p := params.MainNet()
	hs := mainnetHeaders(t)
	if len(hs) != 14132 {
		t.Fatalf("%d headers, want 14132", len(hs))
	}
	if hs[0].BlockHash() != p.GenesisHash {
		t.Fatal("first block is not genesis")
	}
	bi := NewBlockIndex(p)
	var chain Chain
	for i, h := range hs {
		hash := h.BlockHash()
		if err := CheckBlockHeader(&h, hash, p); err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		if i == 0 {
			continue
		}
		prev := bi.Lookup(h.PrevBlock)
		if prev == nil {
			t.Fatalf("block %d: parent unknown", i)
		}
		if err := ContextualCheckBlockHeader(&h, prev, farFuture, p); err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		n, err := bi.AcceptHeader(h, farFuture)
		if err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		if n.Height != int32(i) || !n.Status.Has(StatusHeaderValid) {
			t.Fatalf("block %d at height %d status %v", i, n.Height, n.Status)
		}
	}
	best := bi.BestHeader()
	const tipHash = "00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c"
	if best.Height != 14131 || best.Hash.String() != tipHash {
		t.Fatalf("best header %d %s", best.Height, best.Hash)
	}
	// All of 0..14131 ran at difficulty 1: chain work is 14132 × 0x100010001.
	if got, want := best.ChainWork.Big().Text(16), "373437343734"; got != want {
		t.Errorf("chainwork %s, want %s", got, want)
	}
	chain.SetTip(best)
	if chain.Height() != 14131 || chain.Genesis().Hash != p.GenesisHash {
		t.Fatal("chain")
	}
	// Block 2016 ends the first period (which took longer than two
	// weeks): the retarget keeps 1d00ffff.
	if got := NextWorkRequired(chain.At(2015), &hs[2016], p); got != 0x1d00ffff {
		t.Errorf("retarget at 2016: %08x", got)
	}
	// Accepting a known header again returns the same node.
	if n, err := bi.AcceptHeader(hs[100], farFuture); err != nil || n != chain.At(100) {
		t.Errorf("re-accept: %v", err)
	}
}

func TestHeaderRejects(t *testing.T) {
	p := params.MainNet()
	hs := mainnetHeaders(t)[:200]
	bi := NewBlockIndex(p)
	for _, h := range hs[1:199] {
		if _, err := bi.AcceptHeader(h, farFuture); err != nil {
			t.Fatal(err)
		}
	}
	prev := bi.Lookup(hs[198].BlockHash())
	good := hs[199]
	goodTime := int64(good.Time)

	mutate := func(f func(h *wire.Header)) wire.Header { h := good; f(&h); return h }
	for _, tc := range []struct {
		name   string
		h      wire.Header
		now    int64
		ctx    bool // contextual check only (the PoW would fail too)
		reason string
	}{
		{"corrupted nonce", mutate(func(h *wire.Header) { h.Nonce++ }), farFuture, false, "high-hash"},
		{"wrong bits", mutate(func(h *wire.Header) { h.Bits = 0x1c00ffff }), farFuture, true, "bad-diffbits"},
		{"time equal to MTP", mutate(func(h *wire.Header) { h.Time = uint32(prev.MedianTimePast()) }), farFuture, true, "time-too-old"},
		{"time before MTP", mutate(func(h *wire.Header) { h.Time = uint32(prev.MedianTimePast() - 1) }), farFuture, true, "time-too-old"},
		{"two hours and a second ahead", good, goodTime - MaxFutureBlockTime - 1, false, "time-too-new"},
		{"exactly two hours ahead", good, goodTime - MaxFutureBlockTime, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.ctx {
				err = ContextualCheckBlockHeader(&tc.h, prev, tc.now, p)
			} else {
				_, err = bi.AcceptHeader(tc.h, tc.now)
			}
			if got := Reason(err); got != tc.reason {
				t.Fatalf("reason %q (%v), want %q", got, err, tc.reason)
			}
		})
	}
	bad := mutate(func(h *wire.Header) { h.Nonce++ })
	if bi.Lookup(bad.BlockHash()) != nil {
		t.Error("rejected header was added")
	}
	if n := bi.Lookup(good.BlockHash()); n == nil || n.Height != 199 {
		t.Error("good header (exactly two hours ahead) not added")
	}
}

// mine finds a nonce meeting the regtest target (about two tries).
func mine(t testing.TB, h wire.Header, p *params.Params) wire.Header {
	t.Helper()
	for h.Nonce = 0; h.Nonce < 1000; h.Nonce++ {
		if CheckProofOfWork(h.BlockHash(), h.Bits, p) == nil {
			return h
		}
	}
	t.Fatal("no nonce found")
	return h
}

// regtestBranch mines n valid regtest headers on top of from.
func regtestBranch(t testing.TB, bi *BlockIndex, from *BlockNode, n int, salt uint32) []*BlockNode {
	t.Helper()
	var out []*BlockNode
	tip := from
	for i := 0; i < n; i++ {
		h := mine(t, wire.Header{Version: 4, PrevBlock: tip.Hash, MerkleRoot: wire.Hash{byte(salt)}, Time: tip.Header.Time + 600, Bits: 0x207fffff}, bi.params)
		node, err := bi.AcceptHeader(h, farFuture)
		if err != nil {
			t.Fatalf("height %d: %v", tip.Height+1, err)
		}
		out = append(out, node)
		tip = node
	}
	return out
}

func TestSideBranches(t *testing.T) {
	p := params.RegTest()
	bi := NewBlockIndex(p)
	main := regtestBranch(t, bi, bi.Genesis(), 5, 0)
	side := regtestBranch(t, bi, main[1], 3, 1) // equal work: heights 3..5
	if bi.BestHeader() != main[4] {
		t.Fatal("equal work replaced the first-seen tip")
	}
	more := regtestBranch(t, bi, side[2], 1, 1)
	if bi.BestHeader() != more[0] {
		t.Fatal("fork with more work is not BestHeader")
	}
	// An invalid parent rejects new children; a known invalid header is a
	// duplicate.
	bi.MarkInvalid(side[0], "bad-blk-sigops")
	if bi.BestHeader() != main[4] {
		t.Fatal("best did not fall back")
	}
	h := mine(t, wire.Header{Version: 4, PrevBlock: more[0].Hash, Time: more[0].Header.Time + 600, Bits: 0x207fffff}, p)
	if _, err := bi.AcceptHeader(h, farFuture); Reason(err) != "bad-prevblk" {
		t.Errorf("child of invalid: %v", err)
	}
	if _, err := bi.AcceptHeader(side[1].Header, farFuture); Reason(err) != "duplicate" {
		t.Errorf("known invalid: %v", err)
	}
	orphan := mine(t, wire.Header{Version: 4, PrevBlock: wire.Hash{7}, Time: 1, Bits: 0x207fffff}, p)
	if _, err := bi.AcceptHeader(orphan, farFuture); !errors.Is(err, ErrOrphanHeader) {
		t.Errorf("orphan: %v", err)
	}
}

// Core's ContextualCheckBlockHeader version rule: at the new height, version
// must be ≥2 once BIP34 is active, ≥3 once BIP66, ≥4 once BIP65; the reason
// carries the version as %08x of its 32-bit pattern.
func TestBadVersion(t *testing.T) {
	p := params.RegTest()
	p.BIP34Height, p.BIP66Height, p.BIP65Height = 2, 3, 4
	bi := NewBlockIndex(p)
	g := bi.Genesis()
	for _, tc := range []struct {
		height  int32 // height of the new header
		version int32
		reason  string
	}{
		{1, 1, ""},
		{2, 1, "bad-version(0x00000001)"},
		{2, 2, ""},
		{3, 2, "bad-version(0x00000002)"},
		{3, 3, ""},
		{4, 3, "bad-version(0x00000003)"},
		{4, 4, ""},
		{4, 0x20000000, ""},
		{4, -0x80000000, "bad-version(0x80000000)"},
		{4, -1, "bad-version(0xffffffff)"},
	} {
		prev := g
		if tc.height > 1 {
			nodes := branch(t, bi, g, int(tc.height-1), 50)
			prev = nodes[len(nodes)-1]
		}
		h := wire.Header{Version: tc.version, PrevBlock: prev.Hash, Time: prev.Header.Time + 600, Bits: 0x207fffff}
		if got := Reason(ContextualCheckBlockHeader(&h, prev, farFuture, p)); got != tc.reason {
			t.Errorf("height %d version %x: %q, want %q", tc.height, tc.version, got, tc.reason)
		}
	}
	// Mainnet: version 1 is fine below 227931 (every header of 0..14131 is
	// version 1, checked in TestMainnetHeaders).
}

// BIP94 (testnet4; regtest with -test=bip94): the first block of a period
// may not be more than MaxTimewarp seconds before its parent.
func TestTimewarp(t *testing.T) {
	for _, enforce := range []bool{true, false} {
		p := params.RegTest()
		p.EnforceBIP94 = enforce
		bi := NewBlockIndex(p)
		nodes := branch(t, bi, bi.Genesis(), 143, 0) // heights 1..143; 144 is a period start
		prev := nodes[len(nodes)-1]
		for _, tc := range []struct {
			delta  int64
			reason string
		}{
			{-MaxTimewarp - 1, "time-timewarp-attack"},
			{-MaxTimewarp, ""},
			{0, ""},
		} {
			h := wire.Header{Version: 4, PrevBlock: prev.Hash, Time: uint32(int64(prev.Header.Time) + tc.delta), Bits: 0x207fffff}
			want := tc.reason
			if !enforce {
				want = ""
			}
			if got := Reason(ContextualCheckBlockHeader(&h, prev, farFuture, p)); got != want {
				t.Errorf("enforce=%v delta %d: %q, want %q", enforce, tc.delta, got, want)
			}
		}
		// Not a period start: no timewarp rule (MTP still applies).
		mid := nodes[100]
		h := wire.Header{Version: 4, PrevBlock: mid.Hash, Time: uint32(int64(mid.Header.Time) - MaxTimewarp - 1), Bits: 0x207fffff}
		if got := Reason(ContextualCheckBlockHeader(&h, mid, farFuture, p)); got != "" {
			t.Errorf("mid-period: %q", got)
		}
	}
}

func BenchmarkAcceptMainnetHeaders(b *testing.B) {
	hs := mainnetHeaders(b)
	p := params.MainNet()
	for b.Loop() {
		bi := NewBlockIndex(p)
		for _, h := range hs[1:] {
			if _, err := bi.AcceptHeader(h, farFuture); err != nil {
				b.Fatal(err)
			}
		}
	}
}
