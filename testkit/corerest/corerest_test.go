package corerest

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"utxod/params"
	"utxod/testkit/blockgen"
	"utxod/wire"
)

// branches builds on regtest genesis a chain a1..a3 and a branch b2..b4
// from a1: b2-b3 ties with a2-a3 (first seen stays), b4 has more work.
func branches(t *testing.T) (a, b []*blockgen.Node) {
	t.Helper()
	c, err := blockgen.NewChain(params.RegTest())
	if err != nil {
		t.Fatal(err)
	}
	n := c.Genesis
	for range 3 {
		n = c.Template(n, nil).Finish()
		a = append(a, n)
	}
	n = a[0]
	for range 3 {
		tpl := c.Template(n, nil)
		tpl.Coinbase().TxOut[0].Value-- // differ from the a chain
		n = tpl.Finish()
		b = append(b, n)
	}
	return a, b
}

func get(t *testing.T, h http.Handler, target string) (int, string, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, rec.Header().Get("Content-Type"), string(body)
}

func TestChainSelection(t *testing.T) {
	a, b := branches(t)
	s := New(params.RegTest())
	for _, n := range []*blockgen.Node{a[0], a[1], a[2], b[0], b[1], b[2]} {
		if err := s.Add(n.Raw); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		reveal int
		tip    wire.Hash
		height int32
	}{
		{1, params.RegTest().GenesisHash, 0},
		{4, a[2].Hash, 3},
		{6, a[2].Hash, 3}, // b3 ties with a3: the first seen stays
		{7, b[2].Hash, 4}, // b4 has more work
	} {
		s.Reveal(tc.reveal)
		if tip, h := s.Tip(); tip != tc.tip || h != tc.height {
			t.Fatalf("reveal %d: tip %s %d, want %s %d", tc.reveal, tip, h, tc.tip, tc.height)
		}
	}
	// The abandoned branch is still served as a block, not as headers.
	if code, _, body := get(t, s, "/rest/headers/"+a[2].Hash.String()+".bin"); code != 200 || body != "" {
		t.Fatalf("headers of a stale block: %d %q", code, body)
	}
	if code, _, body := get(t, s, "/rest/block/"+a[2].Hash.String()+".bin"); code != 200 || body != string(a[2].Raw) {
		t.Fatalf("stale block: %d", code)
	}
	if err := s.Add([]byte("short")); err == nil {
		t.Fatal("garbage accepted")
	}
}

// TestShapes checks the answers against Core's rest.cpp: bin bodies raw,
// hex plus "\n", JSON plus "\n", errors text/plain with CRLF.
func TestShapes(t *testing.T) {
	a, _ := branches(t)
	s := New(params.RegTest())
	for _, n := range a {
		s.Add(n.Raw)
	}
	s.RevealAll()
	for _, tc := range []struct {
		target string
		code   int
		ctype  string
		body   string
	}{
		{"/rest/blockhashbyheight/2.bin", 200, "application/octet-stream", string(a[1].Hash[:])},
		{"/rest/blockhashbyheight/2.hex", 200, "text/plain", a[1].Hash.String() + "\n"},
		{"/rest/blockhashbyheight/2.json", 200, "application/json", `{"blockhash":"` + a[1].Hash.String() + `"}` + "\n"},
		{"/rest/blockhashbyheight/4.bin", 404, "text/plain", "Block height out of range\r\n"},
		{"/rest/blockhashbyheight/+1.bin", 400, "text/plain", "Invalid height: +1\r\n"},
		{"/rest/headers/" + a[0].Hash.String() + ".bin?count=2", 200, "application/octet-stream", string(a[0].Raw[:80]) + string(a[1].Raw[:80])},
		{"/rest/headers/2/" + a[0].Hash.String() + ".hex", 200, "text/plain", hex.EncodeToString(append(a[0].Raw[:80:80], a[1].Raw[:80]...)) + "\n"},
		{"/rest/headers/" + a[0].Hash.String() + ".bin?count=2001", 400, "text/plain", "Header count is invalid or out of acceptable range (1-2000): 2001\r\n"},
		{"/rest/block/" + a[2].Hash.String() + ".bin", 200, "application/octet-stream", string(a[2].Raw)},
		{"/rest/block/" + a[2].Hash.String() + ".hex", 200, "text/plain", hex.EncodeToString(a[2].Raw) + "\n"},
		{"/rest/block/" + strings.Repeat("0", 64) + ".bin", 404, "text/plain", strings.Repeat("0", 64) + " not found\r\n"},
		{"/rest/block/" + a[2].Hash.String(), 404, "text/plain", "output format not found (available: .bin, .hex, .json)\r\n"},
		{"/rest/chaininfo.bin", 404, "text/plain", "output format not found (available: json)\r\n"},
	} {
		code, ctype, body := get(t, s, tc.target)
		if code != tc.code || ctype != tc.ctype || body != tc.body {
			t.Errorf("%s: %d %q %q", tc.target, code, ctype, body)
		}
	}
	if code, ctype, body := get(t, s, "/rest/chaininfo.json"); code != 200 || ctype != "application/json" ||
		!strings.HasPrefix(body, `{"chain":"regtest","blocks":3,"headers":3,"bestblockhash":"`+a[2].Hash.String()+`"`) || !strings.HasSuffix(body, "}\n") {
		t.Errorf("chaininfo %d %q %s", code, ctype, body)
	}
}

func TestFaultsOnce(t *testing.T) {
	a, _ := branches(t)
	s := New(params.RegTest())
	for _, n := range a {
		s.Add(n.Raw)
	}
	s.RevealAll()
	target := "/rest/block/" + a[1].Hash.String() + ".bin"
	s.BlockFault(a[1].Hash, WrongBlock, 1)
	if _, _, body := get(t, s, target); body != string(a[0].Raw) {
		t.Fatal("WrongBlock did not send the parent")
	}
	s.BlockFault(a[1].Hash, Corrupt, 1)
	if _, _, body := get(t, s, target); body == string(a[1].Raw) || len(body) != len(a[1].Raw) || body[:80] != string(a[1].Raw[:80]) {
		t.Fatal("Corrupt did not change the body only")
	}
	s.BlockFault(a[1].Hash, Truncate, 1)
	if _, _, body := get(t, s, target); body != string(a[1].Raw[:len(a[1].Raw)/2]) {
		t.Fatal("Truncate")
	}
	if _, _, body := get(t, s, target); body != string(a[1].Raw) {
		t.Fatal("the fault outlived its count")
	}
	s.Outage(Unavailable, 2)
	for i, want := range []int{503, 503, 200} {
		if code, _, _ := get(t, s, "/rest/chaininfo.json"); code != want {
			t.Fatalf("request %d: %d", i, code)
		}
	}
	if n := s.Requests("block"); n != 4 {
		t.Fatalf("%d block requests counted", n)
	}
}
