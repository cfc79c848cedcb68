package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"utxod/chainstate"
	"utxod/params"
	"utxod/store"
	"utxod/testkit/btcdengine"
	"utxod/validate"
	"utxod/wire"
)

const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

var (
	mainnetOnce sync.Once
	mainnetRaw  [][]byte
	mainnetErr  error
)

// mainnetBlocks returns the raw blocks of the bundled mainnet sample
// (heights 0-14131 in order).
func mainnetBlocks(t testing.TB) [][]byte {
	t.Helper()
	mainnetOnce.Do(func() {
		f, err := os.Open("../testdata/mainnet/blk_0_to_14131.dat")
		if err != nil {
			mainnetErr = err
			return
		}
		defer f.Close()
		r := wire.NewBlockFileReader(f, params.MainNet().Magic)
		for {
			raw, _, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				mainnetErr = err
				return
			}
			mainnetRaw = append(mainnetRaw, bytes.Clone(raw))
		}
	})
	if mainnetErr != nil {
		t.Fatal(mainnetErr)
	}
	return mainnetRaw
}

// newChainstate returns an in-memory chainstate for p.
func newChainstate(t testing.TB, p *params.Params) *chainstate.Chainstate {
	t.Helper()
	v := validate.New(p, btcdengine.New(), nil)
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: v, Store: store.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// mainnetServer returns a server whose chainstate holds mainnet blocks
// 0..height, connected directly (not over HTTP).
func mainnetServer(t testing.TB, height int) (*Server, *chainstate.Chainstate, [][]byte) {
	t.Helper()
	blocks := mainnetBlocks(t)
	cs := newChainstate(t, params.MainNet())
	for h := 1; h <= height; h++ {
		if _, err := cs.ProcessBlock(blocks[h]); err != nil {
			t.Fatalf("block %d: %v", h, err)
		}
	}
	return newServer(t, cs, params.MainNet()), cs, blocks
}

func newServer(t testing.TB, c Chain, p *params.Params) *Server {
	t.Helper()
	s, err := New(Config{Chain: c, Params: p, Token: testToken,
		Now: func() time.Time { return time.Unix(1_800_000_000, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// do runs one request against h and returns the recorder.
func do(t testing.TB, h http.Handler, method, target string, body []byte, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// postBlock submits raw with the test token.
func postBlock(t testing.TB, h http.Handler, raw []byte) *httptest.ResponseRecorder {
	t.Helper()
	return do(t, h, http.MethodPost, "/v1/blocks", raw, "Authorization", "Bearer "+testToken, "Content-Type", "application/octet-stream")
}

// problemOf decodes a problem+json body, failing on the wrong content type.
func problemOf(t testing.TB, rec *httptest.ResponseRecorder) Problem {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json; body %s", ct, rec.Body)
	}
	var p Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("problem body %q: %v", rec.Body, err)
	}
	if p.Status != rec.Code || p.Type == "" || p.Title == "" || p.Reason == "" {
		t.Fatalf("incomplete problem %+v for status %d", p, rec.Code)
	}
	return p
}

func decodeJSON(t testing.TB, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q; body %s", ct, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
}

// prunedMainnet connects mainnet blocks 1..tip on an in-memory chainstate
// that keeps the data of the last keep blocks only.
func prunedMainnet(t testing.TB, tip int, keep int32) *chainstate.Chainstate {
	t.Helper()
	blocks := mainnetBlocks(t)
	p := params.MainNet()
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, btcdengine.New(), nil), Store: store.NewMem(), KeepBlocks: keep})
	if err != nil {
		t.Fatal(err)
	}
	for h := 1; h <= tip; h++ {
		if _, err := cs.ProcessBlock(blocks[h]); err != nil {
			t.Fatal(err)
		}
	}
	return cs
}
