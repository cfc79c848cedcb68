package api

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"utxod/backends"
	_ "utxod/backends/all"
	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/snapshot"
	"utxod/store/kvstore"
	"utxod/utxo"
	"utxod/validate"
)

// TestSnapshotStream: GET /v1/snapshot streams the set at the tip of a
// running server over a persistent store, while blocks keep connecting:
// a block posted after the response started does not enter the file, whose
// digests are those of the tip the request saw. A chainstate loaded from
// the file answers /v1/chainstate with the snapshot base and refuses blocks
// without headers (409 need-headers).
func TestSnapshotStream(t *testing.T) {
	p := params.MainNet()
	blocks := mainnetBlocks(t)
	kv, err := backends.Open("pebble", t.TempDir(), backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	store, err := kvstore.Open(kv, kvstore.Options{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: store})
	if err != nil {
		t.Fatal(err)
	}
	const height = 2000
	for h := 1; h <= height; h++ {
		if _, err := cs.ProcessBlock(blocks[h]); err != nil {
			t.Fatal(err)
		}
	}
	want, err := cs.Info(chainstate.HashTypeHashSerialized3)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newServer(t, cs, p))
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/v1/snapshot")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/octet-stream" ||
		resp.Header.Get("X-Utxod-Snapshot-Base-Hash") != want.BestBlock.String() ||
		resp.Header.Get("X-Utxod-Snapshot-Base-Height") != strconv.Itoa(height) ||
		resp.Header.Get("X-Utxod-Snapshot-Coins") != strconv.FormatUint(want.TxOuts, 10) {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	// The service goes on while the response is open.
	post := func(raw []byte) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/blocks", bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/octet-stream")
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r.StatusCode
	}
	if code := post(blocks[height+1]); code != 200 {
		t.Fatalf("POST during the stream: %d", code)
	}
	file, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := snapshot.Verify(bytes.NewReader(file), snapshot.VerifyOptions{Network: p, Height: height})
	if err != nil {
		t.Fatal(err)
	}
	if sum.HashSerialized3 != *want.HashSerialized3 || sum.Stats.TxOuts != want.TxOuts || sum.Metadata.BaseHash != want.BestBlock || sum.NonCanonical != "" {
		t.Fatalf("streamed %s (%d coins, base %s), tip had %s (%d)", sum.HashSerialized3, sum.Stats.TxOuts, sum.Metadata.BaseHash, want.HashSerialized3, want.TxOuts)
	}
	if tip := cs.Tip(); tip.Height != height+1 {
		t.Fatalf("tip %d", tip.Height)
	}

	// Load it without headers and serve the loaded state.
	dir := t.TempDir() + "/loaded"
	h := sum.HashSerialized3
	if _, err := snapshot.Load(context.Background(), bytes.NewReader(file), snapshot.LoadConfig{Backend: "pebble", Datadir: dir,
		ExpectHash: &h, Height: height, Now: func() time.Time { return time.Unix(1_800_000_000, 0) }}); err != nil {
		t.Fatal(err)
	}
	kv2, err := backends.Open("pebble", dir, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv2.Close()
	store2, err := kvstore.Open(kv2, kvstore.Options{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer store2.Close()
	cs2, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: store2})
	if err != nil {
		t.Fatal(err)
	}
	s2 := newServer(t, cs2, p)
	var got utxo.ChainstateInfo
	decodeJSON(t, do(t, s2, http.MethodGet, "/v1/chainstate?hash_type=hash_serialized_3", nil), &got)
	if got.SnapshotBase == nil || *got.SnapshotBase != want.BestBlock || got.SnapshotBaseHeight == nil || *got.SnapshotBaseHeight != height ||
		*got.HashSerialized3 != *want.HashSerialized3 || *got.MuHash != *want.MuHash || got.TxOuts != want.TxOuts {
		t.Fatalf("loaded chainstate: %+v", got)
	}
	var plain map[string]any
	decodeJSON(t, do(t, s2, http.MethodGet, "/v1/chainstate", nil), &plain)
	if plain["snapshot_base"] != want.BestBlock.String() {
		t.Fatalf("/v1/chainstate: %v", plain)
	}
	rec := postBlock(t, s2, blocks[height+1])
	if rec.Code != http.StatusConflict || problemOf(t, rec).Reason != "need-headers" {
		t.Fatalf("POST on a header-less snapshot state: %d %s", rec.Code, rec.Body)
	}
	// Reads that need the base's header still answer; those that need its
	// ancestors find none.
	base := want.BestBlock.String()
	for _, path := range []string{"/v1/tip", "/healthz", "/rest/chaininfo.json", "/v1/blocks/" + base,
		"/api/blocks/tip/height", "/api/blocks/tip/hash", "/api/block/" + base + "/status", "/v1/blocks/height/2000",
		"/api/block-height/2000", "/rest/headers/1/" + base + ".hex", "/rest/blockhashbyheight/2000.hex"} {
		if rec := do(t, s2, http.MethodGet, path, nil); rec.Code != 200 {
			t.Errorf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
	}
	for _, path := range []string{"/v1/blocks/height/5", "/api/block-height/5"} {
		if rec := do(t, s2, http.MethodGet, path, nil); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
	}
	// A chainstate built block by block has no snapshot fields.
	var built map[string]any
	decodeJSON(t, do(t, newServer(t, cs, p), http.MethodGet, "/v1/chainstate", nil), &built)
	if _, ok := built["snapshot_base"]; ok {
		t.Fatal("snapshot_base on a chainstate built block by block")
	}
}
