package api

import (
	"strings"
	"testing"
)

// Fuzz targets for the address routes: whatever the path segment, query or
// body, never a 5xx (501/503 cannot happen here: the chainstate is
// scannable and one request runs at a time) and the chain is unchanged.

func FuzzAddressRoutes(f *testing.F) {
	for _, s := range []string{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
		"tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", strings.Repeat("0", 64), "%zz", ""} {
		f.Add(s, "limit=2&cursor=AQ")
	}
	f.Fuzz(func(t *testing.T, seg, query string) {
		s, cs := fuzzServer(t)
		before := quickDigest(t, cs)
		for _, path := range []string{"/api/address/" + seg + "/utxo", "/api/scripthash/" + seg + "/utxo",
			"/api/block/" + seg + "/status", "/api/block-height/" + seg, "/v1/address/" + seg + "/utxos",
			"/v1/scripthash/" + seg + "/summary"} {
			if rec := fuzzDo(s, "GET", path, query, nil); rec.Code >= 500 {
				t.Fatalf("GET %q ?%q: %d %s", path, query, rec.Code, rec.Body)
			}
		}
		if after := quickDigest(t, cs); after != before {
			t.Fatal("chainstate changed")
		}
	})
}

func FuzzScanAndBatch(f *testing.F) {
	for _, s := range []string{`{"action":"start","scanobjects":["raw(00)"]}`,
		`{"action":"start","scanobjects":[{"desc":"pkh(tpubD6NzVbkrYhZ4WaWSyoBvQwbpLkojyoTZPRsgXELWz3Popb3qkjcJyJUGLnL4qHHoQvao8ESaAstxYSnhyswJ76uZPStJRJCTKvosUCJZL5B/*)","range":[1,3]}]}`,
		`{"action":"status"}`, `{"addresses":["1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"],"limit":1}`, `[]`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		s, cs := fuzzServer(t)
		before := quickDigest(t, cs)
		for _, path := range []string{"/v1/scan", "/v1/utxos/batch"} {
			if rec := fuzzDo(s, "POST", path, "", body, "Content-Type", "application/json"); rec.Code >= 500 {
				t.Fatalf("POST %s %q: %d %s", path, body, rec.Code, rec.Body)
			}
		}
		if after := quickDigest(t, cs); after != before {
			t.Fatal("chainstate changed")
		}
	})
}
