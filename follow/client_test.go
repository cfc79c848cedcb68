package follow

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"utxod/params"
	"utxod/testkit/corerest"
	"utxod/wire"
)

func headersOf(blocks [][]byte) []byte {
	var b []byte
	for _, raw := range blocks {
		b = append(b, raw[:wire.HeaderSize]...)
	}
	return b
}

func TestParseHeaders(t *testing.T) {
	p := params.MainNet()
	blocks := mainnet(t, 10)
	h := func(i int) wire.Hash { return wire.DoubleSHA256(blocks[i][:wire.HeaderSize]) }
	badPoW := bytes.Clone(blocks[3][:wire.HeaderSize])
	badPoW[76]++ // nonce: the hash no longer meets the target
	for _, tc := range []struct {
		name  string
		body  []byte
		from  wire.Hash
		count int
		n     int    // headers expected, or
		err   string // a failure mentioning this
	}{
		{"five", headersOf(blocks[2:7]), h(2), 5, 5, ""},
		{"fewer than asked", headersOf(blocks[8:11]), h(8), 2000, 3, ""},
		{"empty: not on the active chain", nil, h(2), 5, 0, ""},
		{"partial header", headersOf(blocks[2:4])[:150], h(2), 5, 0, "not a whole number"},
		{"more than asked", headersOf(blocks[2:7]), h(2), 4, 0, "5 headers, asked for 4"},
		{"wrong first", headersOf(blocks[3:6]), h(2), 5, 0, "first header is " + h(3).String()},
		{"gap", append(headersOf(blocks[2:4]), blocks[5][:wire.HeaderSize]...), h(2), 5, 0, "builds on " + h(4).String()},
		{"no proof of work", append(headersOf(blocks[2:3]), badPoW...), h(2), 5, 0, "high-hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs, err := ParseHeaders(tc.body, tc.from, tc.count, p)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(hs) != tc.n {
				t.Fatalf("%d headers, %v", len(hs), err)
			}
			for i := range hs {
				if hs[i].Hash != wire.DoubleSHA256(tc.body[i*80:i*80+80]) {
					t.Fatalf("header %d hash", i)
				}
			}
		})
	}
}

func TestCheckBlock(t *testing.T) {
	blocks := mainnet(t, 200)
	raw := blocks[170]
	h := wire.DoubleSHA256(raw[:wire.HeaderSize])
	for _, tc := range []struct {
		name   string
		raw    []byte
		reason string
	}{
		{"ok", raw, ""},
		{"another block", blocks[171], "wrong-hash"},
		{"header only", raw[:wire.HeaderSize], "truncated"},
		{"shorter than a header", raw[:40], "truncated"},
		{"half", raw[:len(raw)/2], "truncated"},
		{"one byte short", raw[:len(raw)-1], "truncated"},
		{"trailing byte", append(bytes.Clone(raw), 0), "bad-block"},
	} {
		err := CheckBlock(tc.raw, h)
		var be *BlockError
		switch {
		case tc.reason == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.reason != "" && (!errors.As(err, &be) || be.Reason != tc.reason):
			t.Errorf("%s: %v, want %s", tc.name, err, tc.reason)
		}
	}
}

func TestClientErrors(t *testing.T) {
	p := params.MainNet()
	blocks := mainnet(t, 10)
	src := corerest.New(p)
	if err := src.Add(blocks...); err != nil {
		t.Fatal(err)
	}
	src.RevealAll()
	h3 := wire.DoubleSHA256(blocks[3][:wire.HeaderSize])
	mux := http.NewServeMux()
	mux.Handle("/rest/", src)
	mux.HandleFunc("/html/rest/chaininfo.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>proxy error</html>"))
	})
	mux.HandleFunc("/problem/rest/block/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"status":404,"reason":"block-pruned","detail":"` + h3.String() + ` not available (pruned data)"}`))
	})
	mux.HandleFunc("/huge/rest/chaininfo.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(bytes.Repeat([]byte(" "), maxChainInfoBytes+10))
	})
	c := serve(t, mux, p)
	ctx := context.Background()
	info, err := c.ChainInfo(ctx)
	if err != nil || info.Blocks != 10 || info.Chain != "main" || info.BestBlockHash != wire.DoubleSHA256(blocks[10][:80]) {
		t.Fatalf("%+v %v", info, err)
	}
	if got, err := c.BlockHashByHeight(ctx, 3); err != nil || got != h3 {
		t.Fatalf("blockhashbyheight %s %v", got, err)
	}
	for _, tc := range []struct {
		name   string
		call   func(*Client) error
		class  error
		reason string
		detail string
	}{
		{"height above the tip", func(c *Client) error { _, err := c.BlockHashByHeight(ctx, 11); return err }, ErrNotFound, "not-found", "Block height out of range"},
		{"unknown block", func(c *Client) error { _, err := c.Block(ctx, wire.Hash{1}); return err }, ErrNotFound, "not-found", "not found"},
		{"html instead of json", func(c *Client) error { _, err := sub(t, c, "/html").ChainInfo(ctx); return err }, ErrBadReply, "bad-reply", "content type"},
		{"utxod's problem+json", func(c *Client) error { _, err := sub(t, c, "/problem").Block(ctx, h3); return err }, ErrNotFound, "not-found", "not available (pruned data)"},
		{"oversized reply", func(c *Client) error { _, err := sub(t, c, "/huge").ChainInfo(ctx); return err }, ErrBadReply, "too-large", ""},
	} {
		err := tc.call(c)
		var se *SourceError
		if !errors.Is(err, tc.class) || !errors.As(err, &se) || se.Reason != tc.reason || !strings.Contains(se.Detail, tc.detail) {
			t.Errorf("%s: %v (reason %q), want %v %s %q", tc.name, err, reasonOf(err), tc.class, tc.reason, tc.detail)
		}
	}
	src.Outage(corerest.Unavailable, 1)
	if _, err := c.ChainInfo(ctx); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("503: %v", err)
	}
	if _, err := NewClient(ClientConfig{URL: "http://h:1/x?y=1", Params: p}); err == nil {
		t.Error("a URL with a query was accepted")
	}
}

// sub is a client for the same server under a path prefix.
func sub(t *testing.T, c *Client, prefix string) *Client {
	t.Helper()
	s, err := NewClient(ClientConfig{URL: c.URL() + prefix, Params: c.params})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTimeoutRetried: a source slower than the request timeout is a
// timeout error, retried until it answers in time.
func TestTimeoutRetried(t *testing.T) {
	p := params.MainNet()
	src := corerest.New(p)
	if err := src.Add(mainnet(t, 50)...); err != nil {
		t.Fatal(err)
	}
	src.RevealAll()
	var slow atomic.Int32
	slow.Store(3)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/rest/block/") && slow.Add(-1) >= 0 {
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
				return
			}
		}
		src.ServeHTTP(w, r)
	})
	c := serve(t, h, p)
	c.timeout = 100 * time.Millisecond
	cs := newChainstate(t, p)
	f := newFollower(t, fastConfig(c, cs))
	if err := f.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if cs.Tip().Height != 50 {
		t.Fatalf("tip %d", cs.Tip().Height)
	}
	if got := value(f.m.errors.WithLabelValues("timeout")); got != 3 {
		t.Fatalf("errors{timeout} = %v, want 3", got)
	}
}
