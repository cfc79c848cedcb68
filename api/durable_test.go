package api

import (
	"net/http"
	"strings"
	"testing"

	"utxod/backends"
	"utxod/chainstate"
	"utxod/params"
	"utxod/testkit/btcdengine"
	"utxod/validate"
)

// TestPostBlockDurable: POST answers carry the flushed tip and durable;
// ?durable=1 and Prefer: durable answer after a flush with durable true;
// /v1/tip and /healthz report the flushed tip; a malformed durable is 400.
func TestPostBlockDurable(t *testing.T) {
	kv, err := backends.Open("pebble", t.TempDir(), backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	p := params.MainNet()
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, btcdengine.New(), nil), Store: openIndexedStore(t, kv, 64<<20)})
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, cs, p)
	blocks := mainnetBlocks(t)
	post := func(target string, raw []byte, hdr ...string) (BlockResult, http.Header) {
		t.Helper()
		rec := do(t, s, http.MethodPost, target, raw, append([]string{"Authorization", "Bearer " + testToken}, hdr...)...)
		if rec.Code != http.StatusOK {
			t.Fatalf("POST %s: %d %s", target, rec.Code, rec.Body)
		}
		var r BlockResult
		decodeJSON(t, rec, &r)
		return r, rec.Header()
	}
	flushedAt := func(height int32, hash string) {
		t.Helper()
		var tip TipInfo
		decodeJSON(t, do(t, s, "GET", "/v1/tip", nil), &tip)
		var h Health
		decodeJSON(t, do(t, s, "GET", "/healthz", nil), &h)
		if tip.FlushedHeight != height || tip.FlushedHash != hash || h.FlushedHeight != height || h.FlushedHash != hash {
			t.Fatalf("flushed at %d %s: /v1/tip %+v, /healthz %+v", height, hash, tip, h)
		}
	}
	genesis := p.GenesisHash.String()
	r, _ := post("/v1/blocks", blocks[1])
	if r.Status != "connected" || r.Durable || r.FlushedHeight != 0 || r.FlushedHash != genesis {
		t.Fatalf("block 1: %+v", r)
	}
	flushedAt(0, genesis)
	r, hdr := post("/v1/blocks?durable=1", blocks[2])
	if r.Status != "connected" || !r.Durable || r.FlushedHeight != 2 || r.FlushedHash != r.Hash || hdr.Get("Preference-Applied") != "" {
		t.Fatalf("block 2 durable=1: %+v %v", r, hdr)
	}
	flushedAt(2, r.Hash)
	r, _ = post("/v1/blocks?durable=false", blocks[3], "Prefer", "durable")
	if r.Durable || r.FlushedHeight != 2 {
		t.Fatalf("block 3 durable=false (it wins over the header): %+v", r)
	}
	r, hdr = post("/v1/blocks", blocks[4], "Prefer", "respond-async, Durable")
	if !r.Durable || r.FlushedHeight != 4 || hdr.Get("Preference-Applied") != "durable" {
		t.Fatalf("block 4 Prefer: durable: %+v %v", r, hdr)
	}
	flushedAt(4, r.Hash)
	if r, _ = post("/v1/blocks", blocks[3]); r.Status != "duplicate" || !r.Durable {
		t.Fatalf("block 3 again, below the flushed tip: %+v", r)
	}
	rec := do(t, s, http.MethodPost, "/v1/blocks?durable=maybe", blocks[5], "Authorization", "Bearer "+testToken)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "bad-durable") || cs.Tip().Height != 4 {
		t.Fatalf("durable=maybe: %d %s", rec.Code, rec.Body)
	}
}
