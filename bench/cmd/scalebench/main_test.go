package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"utxod/params"
)

// TestRawGet: the load generator's HTTP/1.1 reader against net/http's
// server, for a Content-Length body, a chunked one and a 404, on one
// keep-alive connection.
func TestRawGet(t *testing.T) {
	big := strings.Repeat("x", 100_000) // past net/http's buffer: chunked
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/small":
			w.Write([]byte("hello"))
		case "/big":
			w.Write([]byte(big))
			w.(http.Flusher).Flush()
			w.Write([]byte("!"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := dial(strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	for _, tc := range []struct {
		path         string
		status, size int
	}{{"/small", 200, 5}, {"/big", 200, len(big) + 1}, {"/nope", 404, len("404 page not found\n")}, {"/small", 200, 5}} {
		st, n, err := c.get(tc.path)
		if err != nil || st != tc.status || n != tc.size {
			t.Errorf("GET %s: status %d, %d bytes, %v; want %d, %d bytes", tc.path, st, n, err, tc.status, tc.size)
		}
	}
	r := load(context.Background(), strings.TrimPrefix(srv.URL, "http://"), []string{"/small", "/nope"}, 4, 200*time.Millisecond, nil)
	if r.errs != 0 || r.n() == 0 || r.status[200]+r.status[404] != r.n() {
		t.Errorf("load: %d requests, %d errors (%v), statuses %v", r.n(), r.errs, r.firstError, r.status)
	}
}

// TestAnchor: the bundled mainnet sample's block after the genesis is at
// height 1, and a tip it does not extend is refused.
func TestAnchor(t *testing.T) {
	b, err := openBlocks("../../../testdata/mainnet/blk_0_to_14131.dat", params.MainNet().Magic)
	if err != nil {
		t.Fatal(err)
	}
	defer b.f.Close()
	if len(b.offs) != 14132 {
		t.Fatalf("%d blocks, want 14132", len(b.offs))
	}
	const genesis = "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f"
	if err := b.anchor(genesis, 0); err != nil || b.base != -1 {
		t.Fatalf("anchor on the genesis: base %d, %v; want -1 (block 1 is the file's second)", b.base, err)
	}
	if err := b.anchor(strings.Repeat("1", 64), 5); err == nil {
		t.Error("a tip no block extends was accepted")
	}
}
