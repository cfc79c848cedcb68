package follow

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"utxod/params"
	"utxod/testkit/corerest"
	"utxod/testkit/mainnetgen"
	"utxod/wire"
)

// headerSource serves the raw header chain of a generated regtest set
// (heights 1..height) from a corerest stand-in.
func headerSource(t *testing.T, height int32) (*corerest.Server, *Client, []wire.Hash) {
	t.Helper()
	dir := t.TempDir()
	if _, err := mainnetgen.Generate(mainnetgen.Config{Coins: 10, Seed: 3, Network: "regtest", Height: height}, dir); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "headers.dat"))
	if err != nil {
		t.Fatal(err)
	}
	p := params.RegTest()
	src := corerest.New(p)
	hashes := []wire.Hash{p.GenesisHash}
	for off := 0; off < len(raw); off += wire.HeaderSize {
		h := raw[off : off+wire.HeaderSize]
		if err := src.Add(h); err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, wire.DoubleSHA256(h))
	}
	src.RevealAll()
	srv := httptest.NewServer(src)
	t.Cleanup(srv.Close)
	c, err := NewClient(ClientConfig{URL: srv.URL, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	return src, c, hashes
}

// TestHeaderChain: the chain from genesis's child to a block, in pages of
// 2,000 walked forward by their last header, for bases inside a page and at
// its edges; a block the source's chain lacks, and headers that do not
// chain, are errors; an outage is retried.
func TestHeaderChain(t *testing.T) {
	defer func(d time.Duration) { headerChainBackoff = d }(headerChainBackoff)
	headerChainBackoff = time.Millisecond
	src, c, hashes := headerSource(t, 4100)
	ctx := context.Background()
	fetch := func(to wire.Hash) ([]Header, error) {
		var got []Header
		err := c.HeaderChain(ctx, to, func(page []Header) error {
			if len(page) == 0 || len(page) > MaxHeaders-1 {
				t.Errorf("page of %d headers", len(page))
			}
			got = append(got, page...)
			return nil
		})
		return got, err
	}
	for _, h := range []int{0, 1, 1999, 2000, 3998, 3999, 4000, 4100} {
		got, err := fetch(hashes[h])
		if err != nil {
			t.Fatalf("to height %d: %v", h, err)
		}
		if len(got) != h {
			t.Fatalf("to height %d: %d headers", h, len(got))
		}
		for i := range got {
			if got[i].Hash != hashes[i+1] {
				t.Fatalf("to height %d: header %d is %s, want %s", h, i+1, got[i].Hash, hashes[i+1])
			}
		}
	}
	if _, err := fetch(wire.Hash{1}); !errors.Is(err, ErrChainEnds) {
		t.Fatalf("a block the source lacks: %v", err)
	}
	src.Outage(corerest.Unavailable, 2)
	if got, err := fetch(hashes[2500]); err != nil || len(got) != 2500 {
		t.Fatalf("through an outage: %d headers, %v", len(got), err)
	}
	src.BreakHeaders(true)
	if _, err := fetch(hashes[2500]); !errors.Is(err, ErrBadReply) {
		t.Fatalf("headers that do not chain: %v", err)
	}
}
