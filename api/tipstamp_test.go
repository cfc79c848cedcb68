package api

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Every answer, success or error, of every route family names the tip.
func TestTipHeadersOnEveryRoute(t *testing.T) {
	r := newRegtest(t, Config{})
	b1 := r.mine(payout{pkhScript, 5e8})
	r.mineN(7)
	tip := r.cs.Tip()
	cb := b1.Block.Transactions[0].TxHash().String()
	h1 := b1.Hash.String()
	zero := strings.Repeat("0", 64)
	for _, target := range []string{
		"/healthz", "/metrics", "/openapi.json", "/v1/tip", "/v1/chainstate", "/v1/blocks/" + h1, "/v1/blocks/" + zero,
		"/v1/blocks/height/1", "/v1/utxos/" + cb + "/0", "/v1/utxos/" + cb + "/9", "/v1/address/" + r.addr(pkhScript) + "/utxos",
		"/v1/scripthash/" + zero + "/summary", "/v1/nothing", "/rest/chaininfo.json", "/rest/headers/" + h1 + ".bin",
		"/rest/block/" + h1 + ".bin", "/rest/block/" + zero + ".bin", "/rest/blockhashbyheight/1.hex", "/rest/getutxos/" + cb + "-0.json",
		"/rest/spenttxouts/" + h1 + ".json", "/rest/blockpart/" + h1 + ".bin?offset=0&size=80", "/api/blocks/tip/hash", "/api/blocks",
		"/api/block/" + h1, "/api/block/" + zero, "/api/block-height/1", "/api/scripthash/" + zero + "/utxo", "/api/nothing",
	} {
		rec := do(t, r.srv, "GET", target, nil)
		if rec.Header().Get(HeaderTipHash) != tip.Hash.String() || rec.Header().Get(HeaderTipHeight) != strconv.Itoa(int(tip.Height)) {
			t.Errorf("%s (%d): tip headers %q %q", target, rec.Code, rec.Header().Get(HeaderTipHash), rec.Header().Get(HeaderTipHeight))
		}
		if rec.Code == 200 && !strings.HasPrefix(rec.Header().Get("ETag"), `"`) {
			t.Errorf("%s: ETag %q", target, rec.Header().Get("ETag"))
		}
	}
	// The /v1 bodies that had no tip carry it, equal to the headers.
	for _, target := range []string{"/v1/tip", "/v1/blocks/" + h1, "/v1/blocks/height/1", "/v1/utxos/" + cb + "/0"} {
		var v struct{ Tip TipRef }
		if r.get(target, &v) != 200 || v.Tip != tipRef(tip.Hash, tip.Height) {
			t.Errorf("%s: tip %+v", target, v.Tip)
		}
	}
	rec := postBlock(t, r.srv, []byte{1})
	if rec.Code != http.StatusBadRequest || rec.Header().Get(HeaderTipHash) != tip.Hash.String() {
		t.Errorf("POST /v1/blocks: %d %q", rec.Code, rec.Header().Get(HeaderTipHash))
	}
}

// ETags: the same answer at the same tip is 304 for If-None-Match; a new
// block changes the tip-derived ones and leaves a block's bytes' alone.
func TestETags(t *testing.T) {
	r := newRegtest(t, Config{})
	b1 := r.mine(payout{pkhScript, 5e8})
	r.mineN(2)
	cb := b1.Block.Transactions[0].TxHash().String()
	routes := []string{"/v1/utxos/" + cb + "/0", "/v1/chainstate?hash_type=none", "/api/blocks/tip/hash",
		"/rest/block/" + b1.Hash.String() + ".bin", "/api/block/" + b1.Hash.String() + "/raw", "/v1/tip"}
	etags := map[string]string{}
	for _, target := range routes {
		rec := do(t, r.srv, "GET", target, nil)
		etag := rec.Header().Get("ETag")
		if rec.Code != 200 || len(etag) != 34 {
			t.Fatalf("%s: %d ETag %q", target, rec.Code, etag)
		}
		etags[target] = etag
		for _, inm := range []string{etag, "W/" + etag, `"x", ` + etag, "*"} {
			nm := do(t, r.srv, "GET", target, nil, "If-None-Match", inm)
			if nm.Code != http.StatusNotModified || nm.Body.Len() != 0 || nm.Header().Get("ETag") != etag || nm.Header().Get(HeaderTipHash) == "" {
				t.Errorf("%s If-None-Match %s: %d %q", target, inm, nm.Code, nm.Body)
			}
		}
		if re := do(t, r.srv, "GET", target, nil, "If-None-Match", `"other"`); re.Code != 200 || re.Body.Len() == 0 {
			t.Errorf("%s with another tag: %d", target, re.Code)
		}
	}
	// ?at= naming the tip does not change the ETag.
	tip := r.cs.Tip().Hash.String()
	if e := do(t, r.srv, "GET", "/v1/utxos/"+cb+"/0?at="+tip, nil).Header().Get("ETag"); e != etags[routes[0]] {
		t.Errorf("at= changed the ETag: %s vs %s", e, etags[routes[0]])
	}
	r.mineN(1)
	for _, target := range routes {
		rec := do(t, r.srv, "GET", target, nil, "If-None-Match", etags[target])
		perBlock := strings.Contains(target, b1.Hash.String())
		if perBlock && rec.Code != http.StatusNotModified || !perBlock && rec.Code != 200 {
			t.Errorf("%s after a block: %d", target, rec.Code)
		}
	}
}

// ?at=: answered while the block is the tip, 409 once it is not, 400 when
// malformed; the snapshot stream settles it before its first byte.
func TestAtTip(t *testing.T) {
	r := newRegtest(t, Config{})
	b1 := r.mine(payout{pkhScript, 5e8})
	cb := b1.Block.Transactions[0].TxHash().String()
	old := r.cs.Tip().Hash.String()
	targets := []string{"/v1/utxos/" + cb + "/0", "/api/blocks/tip/height", "/api/address/" + r.addr(pkhScript) + "/utxo",
		"/rest/getutxos/" + cb + "-0.bin", "/v1/snapshot", "/v1/blocks/" + b1.Hash.String()}
	for _, target := range targets {
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		if rec := do(t, r.srv, "GET", target+sep+"at="+old, nil); rec.Code != 200 {
			t.Errorf("%s at the tip: %d %s", target, rec.Code, rec.Body)
		}
	}
	r.mineN(1)
	for _, target := range targets {
		rec := do(t, r.srv, "GET", target+"?at="+old, nil)
		p := problemOf(t, rec)
		if rec.Code != http.StatusConflict || p.Reason != "tip-moved" || rec.Header().Get(HeaderTipHash) != r.cs.Tip().Hash.String() ||
			rec.Header().Get("Cache-Control") != "" || rec.Header().Get("X-Utxod-Snapshot-Coins") != "" {
			t.Errorf("%s at an old tip: %d %+v", target, rec.Code, p)
		}
		rec = do(t, r.srv, "GET", target+"?at=nope", nil)
		if p := problemOf(t, rec); rec.Code != http.StatusBadRequest || p.Reason != "bad-at" {
			t.Errorf("%s at=nope: %d %+v", target, rec.Code, p)
		}
	}
	snap := do(t, r.srv, "GET", "/v1/snapshot", nil)
	if rec := do(t, r.srv, "GET", "/v1/snapshot", nil, "If-None-Match", snap.Header().Get("ETag")); rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("snapshot If-None-Match: %d, %d bytes", rec.Code, rec.Body.Len())
	}
}

// Per-block answers are immutable once the block is buried.
func TestBlockCacheControl(t *testing.T) {
	r := newRegtest(t, Config{})
	b1 := r.mine()
	r.mineN(BuriedConfirmations - 2) // b1 has BuriedConfirmations-1 confirmations
	h1 := b1.Hash.String()
	routes := []string{"/v1/blocks/" + h1, "/rest/block/" + h1 + ".bin", "/rest/block/notxdetails/" + h1 + ".json",
		"/rest/spenttxouts/" + h1 + ".bin", "/rest/blockpart/" + h1 + ".bin?offset=0&size=1", "/rest/headers/" + h1 + ".bin?count=1",
		"/api/block/" + h1, "/api/block/" + h1 + "/header", "/api/block/" + h1 + "/raw", "/api/block/" + h1 + "/txids", "/api/block/" + h1 + "/txid/0"}
	check := func(want string) {
		t.Helper()
		for _, target := range routes {
			rec := do(t, r.srv, "GET", target, nil)
			if rec.Code != 200 || rec.Header().Get("Cache-Control") != want {
				t.Errorf("%s: %d %q, want %q", target, rec.Code, rec.Header().Get("Cache-Control"), want)
			}
		}
	}
	check("public, max-age=10")
	r.mineN(1)
	check("public, max-age=157784630, immutable")
	// Headers past the tip may still come: not final.
	if cc := do(t, r.srv, "GET", "/rest/headers/"+h1+".bin?count=100", nil).Header().Get("Cache-Control"); cc != "public, max-age=10" {
		t.Errorf("headers to the tip: %q", cc)
	}
}
