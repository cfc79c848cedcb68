package api

import (
	"bytes"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"utxod/chainstate"
)

// Fuzz targets for the input parsing of every HTTP handler (issue 8). Each
// asserts: no panic (the recoverer would turn one into a 500), no 5xx
// (503 orphan-pool-full excepted: a fuzzer can fill the pool), and for
// anything but a successful POST an unchanged chainstate. "make test" runs
// them on their seed corpus; bench/results/reliability.md records longer
// runs (go test ./api -run '^$' -fuzz FuzzPostBlock -fuzztime 2m).

const fuzzHeight = 200

var (
	fuzzMu  sync.Mutex
	fuzzSrv *Server
	fuzzCS  *chainstate.Chainstate
)

// fuzzServer is a server over mainnet 0..fuzzHeight, rebuilt if a fuzz
// input managed to extend it.
func fuzzServer(t testing.TB) (*Server, *chainstate.Chainstate) {
	t.Helper()
	fuzzMu.Lock()
	defer fuzzMu.Unlock()
	if fuzzSrv == nil || fuzzCS.Tip().Height != fuzzHeight {
		fuzzSrv, fuzzCS, _ = mainnetServer(t, fuzzHeight)
	}
	return fuzzSrv, fuzzCS
}

// quickDigest is the tip and the muhash gettxoutsetinfo (no scan).
func quickDigest(t testing.TB, c Chain) string {
	t.Helper()
	info, err := c.Info(chainstate.HashTypeMuHash)
	if err != nil {
		t.Fatal(err)
	}
	return c.Tip().Hash.String() + " " + info.MuHash.String() + " " + info.BestBlock.String()
}

// fuzzDo serves one request with an arbitrary path and query (set on the
// URL directly: the fuzzer's strings need not be valid request targets).
func fuzzDo(s http.Handler, method, path, query string, body []byte, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "/", bytes.NewReader(body))
	req.URL.Path = path
	req.URL.RawPath = ""
	req.URL.RawQuery = query
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

func checkNo5xx(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 500 && !(rec.Code == 503 && strings.Contains(rec.Body.String(), "orphan-pool-full")) {
		t.Fatalf("%s: %d %s", what, rec.Code, rec.Body)
	}
	if rec.Code >= 400 && rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("%s: error %d with Content-Type %q", what, rec.Code, rec.Header().Get("Content-Type"))
	}
}

// FuzzPostBlock: POST /v1/blocks bodies, raw or hex, seeded with real
// mainnet blocks (valid duplicates, the next block, blocks far ahead).
func FuzzPostBlock(f *testing.F) {
	blocks := mainnetBlocks(f)
	for _, h := range []int{0, 1, 2, 100, 170, 181, fuzzHeight, fuzzHeight + 1, 546, 14131} {
		f.Add(blocks[h], uint8(0))
		f.Add([]byte(hex.EncodeToString(blocks[h])), uint8(1))
	}
	f.Add(blocks[170][:100], uint8(0))
	f.Add([]byte(" 0a \n"), uint8(1))
	f.Add([]byte{}, uint8(2))
	f.Fuzz(func(t *testing.T, body []byte, mode uint8) {
		s, cs := fuzzServer(t)
		ct := []string{"application/octet-stream", "text/plain", "", "text/plain; charset=utf-8", "application/x-www-form-urlencoded"}[int(mode)%5]
		hdr := []string{"Authorization", "Bearer " + testToken}
		if ct != "" {
			hdr = append(hdr, "Content-Type", ct)
		}
		before := quickDigest(t, cs)
		rec := fuzzDo(s, http.MethodPost, "/v1/blocks", "", body, hdr...)
		checkNo5xx(t, "POST /v1/blocks", rec)
		if rec.Code == 200 && strings.Contains(rec.Body.String(), `"status":"connected"`) {
			// The input was a valid next block: start over next time.
			fuzzMu.Lock()
			fuzzSrv = nil
			fuzzMu.Unlock()
			return
		}
		if after := quickDigest(t, cs); after != before {
			t.Fatalf("POST answered %d %s but the chainstate changed", rec.Code, rec.Body)
		}
	})
}

// FuzzGetRoutes: every GET route with fuzzed path parameters and query —
// /v1/utxos/{txid}/{vout}, /v1/blocks/{hash}, /v1/blocks/height/{h},
// /v1/chainstate?hash_type=..., /rest/getutxos/... outpoint lists and
// extensions, /rest/headers/..., /rest/blockhashbyheight/...
func FuzzGetRoutes(f *testing.F) {
	blocks := mainnetBlocks(f)
	_ = blocks
	tx170 := "f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16"
	h1 := "00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048"
	seeds := [][2]string{
		{"/v1/utxos/" + tx170 + "/0", ""},
		{"/v1/utxos/" + tx170 + "/1", ""},
		{"/v1/utxos/" + tx170 + "/4294967296", ""},
		{"/v1/utxos/" + tx170 + "/-1", ""},
		{"/v1/utxos/" + strings.ToUpper(tx170) + "/00", ""},
		{"/v1/blocks/" + h1, ""},
		{"/v1/blocks/" + h1[:63], ""},
		{"/v1/blocks/height/5", ""},
		{"/v1/blocks/height/2147483648", ""},
		{"/v1/blocks/height/+1", ""},
		{"/v1/tip", ""},
		{"/v1/chainstate", "hash_type=hash_serialized_3"},
		{"/v1/chainstate", "hash_type=muhash&hash_type=none"},
		{"/v1/chainstate", "hash_type=%zz"},
		{"/rest/chaininfo.json", ""},
		{"/rest/getutxos/checkmempool/" + tx170 + "-0.json", ""},
		{"/rest/getutxos/" + tx170 + "-0/" + tx170 + "-1.hex", ""},
		{"/rest/getutxos/" + tx170 + "-0-1.bin", ""},
		{"/rest/getutxos/" + strings.Repeat(tx170+"-0/", 16) + ".json", ""},
		{"/rest/getutxos/.json", ""},
		{"/rest/headers/5/" + h1 + ".json", ""},
		{"/rest/headers/" + h1 + ".hex", "count=2000"},
		{"/rest/headers/" + h1 + ".bin", "count=0"},
		{"/rest/blockhashbyheight/1.hex", ""},
		{"/rest/blockhashbyheight/-1.json", ""},
		{"/rest/blockhashbyheight/99999999999.bin", ""},
		{"/rest/block/" + h1 + ".json", ""},
		{"/metrics", ""},
		{"/healthz", ""},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, path, query string) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		if strings.HasPrefix(path, "/docs") || path == "/openapi.json" {
			return // static assets
		}
		s, cs := fuzzServer(t)
		before := quickDigest(t, cs)
		rec := fuzzDo(s, http.MethodGet, path, query, nil)
		checkNo5xx(t, "GET "+path+"?"+query, rec)
		if after := quickDigest(t, cs); after != before {
			t.Fatalf("GET %s changed the chainstate", path)
		}
	})
}

// FuzzRESTGetUTXOsBody: BIP64 request bodies (bin and hex) for POST
// /rest/getutxos.
func FuzzRESTGetUTXOsBody(f *testing.F) {
	req := []byte{1, 1}
	txid, _ := hex.DecodeString("169e1e83e930853391bc6f35f605c6754cfead57cf8387639d3b4096c54f18f4")
	req = append(req, txid...)
	req = append(req, 0, 0, 0, 0)
	f.Add(req, ".bin", "")
	f.Add([]byte(hex.EncodeToString(req)), ".hex", "")
	f.Add([]byte{0, 0xfe, 0xff, 0xff, 0xff, 0xff}, ".bin", "")
	f.Add([]byte{0, 0x10}, ".bin", "")
	f.Add(req, ".json", "/checkmempool")
	f.Add(req, ".bin", "/169e1e83e930853391bc6f35f605c6754cfead57cf8387639d3b4096c54f18f4-0")
	f.Fuzz(func(t *testing.T, body []byte, ext, prefix string) {
		s, cs := fuzzServer(t)
		before := quickDigest(t, cs)
		rec := fuzzDo(s, http.MethodPost, "/rest/getutxos"+prefix+ext, "", body)
		checkNo5xx(t, "POST /rest/getutxos"+prefix+ext, rec)
		if after := quickDigest(t, cs); after != before {
			t.Fatal("POST /rest/getutxos changed the chainstate")
		}
	})
}

// FuzzAuthHeader: the Authorization header of a write never panics and
// only the exact token passes.
func FuzzAuthHeader(f *testing.F) {
	for _, a := range []string{"", "Bearer " + testToken, "Bearer  " + testToken + " ", "bearer " + testToken, "Bearer x", "Basic Zm9vOmJhcg=="} {
		f.Add(a)
	}
	f.Fuzz(func(t *testing.T, auth string) {
		s, cs := fuzzServer(t)
		before := quickDigest(t, cs)
		rec := fuzzDo(s, http.MethodPost, "/v1/blocks", "", mainnetBlocks(t)[1], "Authorization", auth, "Content-Type", "application/octet-stream")
		checkNo5xx(t, "POST with Authorization "+auth, rec)
		if rec.Code != 401 && rec.Code != 200 {
			t.Fatalf("auth %q: %d", auth, rec.Code)
		}
		if rec.Code == 200 {
			scheme, tok, _ := strings.Cut(auth, " ")
			if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) != testToken {
				t.Fatalf("auth %q accepted", auth)
			}
		}
		if quickDigest(t, cs) != before {
			t.Fatal("state changed")
		}
	})
}
