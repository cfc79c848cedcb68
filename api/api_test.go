package api

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"utxod/chainstate"
	"utxod/params"
	"utxod/store"
	"utxod/testkit/blockgen"
	"utxod/testkit/btcdengine"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

func TestPostBlockAuth(t *testing.T) {
	s, cs, blocks := mainnetServer(t, 0)
	for _, tc := range []struct {
		name, auth, detail string
	}{
		{"missing", "", "missing bearer token"},
		{"wrong token", "Bearer " + strings.Repeat("0", 64), "invalid bearer token"},
		{"wrong scheme", "Basic " + testToken, "invalid bearer token"},
		{"prefix of token", "Bearer " + testToken[:32], "invalid bearer token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, s, http.MethodPost, "/v1/blocks", blocks[1], "Authorization", tc.auth, "Content-Type", "application/octet-stream")
			if rec.Code != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", rec.Code)
			}
			p := problemOf(t, rec)
			if p.Reason != "unauthorized" || !strings.Contains(p.Detail, tc.detail) {
				t.Fatalf("problem %+v", p)
			}
			if rec.Header().Get("WWW-Authenticate") == "" {
				t.Fatal("no WWW-Authenticate")
			}
			if cs.Tip().Height != 0 {
				t.Fatal("state changed")
			}
		})
	}
	// The scheme is case-insensitive (RFC 7235).
	rec := do(t, s, http.MethodPost, "/v1/blocks", blocks[1], "Authorization", "bearer "+testToken)
	if rec.Code != http.StatusOK {
		t.Fatalf("lower-case scheme: %d %s", rec.Code, rec.Body)
	}
}

func TestPostBlockBodies(t *testing.T) {
	s, cs, blocks := mainnetServer(t, 0)
	auth := "Bearer " + testToken
	hex2 := hex.EncodeToString(blocks[2])
	wrapped := ""
	for i := 0; i < len(hex2); i += 64 {
		wrapped += hex2[i:min(i+64, len(hex2))] + "\r\n"
	}
	oversizeRaw := make([]byte, MaxBlockBytes+1)
	oversizeHex := []byte(strings.Repeat("00", MaxBlockBytes+1))
	for _, tc := range []struct {
		name        string
		ctype       string
		body        []byte
		code        int
		reason      string
		status      string
		height      int32
		tipAfter    int32
		skipPreload bool
	}{
		{name: "raw block 1", ctype: "application/octet-stream", body: blocks[1], code: 200, status: "connected", height: 1, tipAfter: 1},
		{name: "duplicate", ctype: "application/octet-stream", body: blocks[1], code: 200, status: "duplicate", height: 1, tipAfter: 1},
		{name: "hex block 2 with line breaks", ctype: "text/plain; charset=utf-8", body: []byte(wrapped), code: 200, status: "connected", height: 2, tipAfter: 2},
		{name: "no content type means raw", ctype: "", body: blocks[3], code: 200, status: "connected", height: 3, tipAfter: 3},
		{name: "empty", ctype: "application/octet-stream", body: nil, code: 400, reason: "empty-body", tipAfter: 3},
		{name: "garbage raw", ctype: "application/octet-stream", body: []byte("not a block"), code: 400, reason: "block-decode-failed", tipAfter: 3},
		{name: "truncated block", ctype: "application/octet-stream", body: blocks[4][:len(blocks[4])-1], code: 400, reason: "block-decode-failed", tipAfter: 3},
		{name: "odd hex", ctype: "text/plain", body: []byte("abc"), code: 400, reason: "bad-hex", tipAfter: 3},
		{name: "non-hex", ctype: "text/plain", body: []byte("zz"), code: 400, reason: "bad-hex", tipAfter: 3},
		{name: "form content type", ctype: "application/x-www-form-urlencoded", body: blocks[4], code: 415, reason: "unsupported-media-type", tipAfter: 3},
		{name: "json content type", ctype: "application/json", body: []byte(`{}`), code: 415, reason: "unsupported-media-type", tipAfter: 3},
		{name: "oversize raw", ctype: "application/octet-stream", body: oversizeRaw, code: 413, reason: "body-too-large", tipAfter: 3},
		{name: "oversize hex", ctype: "text/plain", body: oversizeHex, code: 413, reason: "body-too-large", tipAfter: 3},
		{name: "bad merkle root", ctype: "application/octet-stream", body: corrupt(blocks[4], len(blocks[4])-10), code: 422, reason: "bad-txnmrklroot", tipAfter: 3},
		{name: "bad proof of work", ctype: "application/octet-stream", body: corrupt(blocks[4], 79), code: 422, reason: "high-hash", tipAfter: 3},
		{name: "block 4 after all", ctype: "application/octet-stream", body: blocks[4], code: 200, status: "connected", height: 4, tipAfter: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := []string{"Authorization", auth}
			if tc.ctype != "" {
				hdr = append(hdr, "Content-Type", tc.ctype)
			}
			rec := do(t, s, http.MethodPost, "/v1/blocks", tc.body, hdr...)
			if rec.Code != tc.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.code, rec.Body)
			}
			if tc.code == 200 {
				var r BlockResult
				decodeJSON(t, rec, &r)
				if r.Status != tc.status || r.Height != tc.height {
					t.Fatalf("result %+v", r)
				}
			} else if p := problemOf(t, rec); p.Reason != tc.reason {
				t.Fatalf("reason %q, want %q (%s)", p.Reason, tc.reason, p.Detail)
			}
			if h := cs.Tip().Height; h != tc.tipAfter {
				t.Fatalf("tip %d, want %d", h, tc.tipAfter)
			}
		})
	}
}

// corrupt flips one byte of a copy of raw.
func corrupt(raw []byte, at int) []byte {
	b := append([]byte(nil), raw...)
	b[at] ^= 0x01
	return b
}

func TestPostBlockInvalidDetail(t *testing.T) {
	// A regtest block paying itself one satoshi too much: Core's
	// bad-cb-amount, with the detail naming the amounts; the block is then
	// reported invalid with that reason.
	p := params.RegTest()
	cs := newChainstate(t, p)
	s := newServer(t, cs, p)
	c, err := blockgen.NewChain(p)
	if err != nil {
		t.Fatal(err)
	}
	good := c.Template(nil, nil).Finish()
	tmpl := c.Template(good, nil)
	tmpl.Coinbase().TxOut[0].Value++
	bad := tmpl.Finish()
	if rec := postBlock(t, s, good.Raw); rec.Code != 200 {
		t.Fatalf("good block: %d %s", rec.Code, rec.Body)
	}
	rec := postBlock(t, s, bad.Raw)
	if rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	pr := problemOf(t, rec)
	if pr.Reason != "bad-cb-amount" || !strings.Contains(pr.Detail, bad.Hash.String()) || pr.Type != problemBase+"bad-cb-amount" {
		t.Fatalf("problem %+v", pr)
	}
	rec = do(t, s, http.MethodGet, "/v1/blocks/"+bad.Hash.String(), nil)
	var bi BlockInfo
	decodeJSON(t, rec, &bi)
	if bi.Status != "invalid" || bi.RejectReason != "bad-cb-amount" || bi.InActiveChain || bi.Height != 2 {
		t.Fatalf("block info %+v", bi)
	}
	// Resubmitting an invalid block: Core's submitblock says "duplicate-invalid".
	if pr := problemOf(t, postBlock(t, s, bad.Raw)); pr.Reason != "duplicate-invalid" || !strings.Contains(pr.Detail, "bad-cb-amount") {
		t.Fatalf("resubmit: %+v", pr)
	}
	// A child of the invalid block is invalid too.
	child := c.Template(bad, nil).Finish()
	if rec := postBlock(t, s, child.Raw); rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("child: %d %s", rec.Code, rec.Body)
	}
	// Metrics count rejects by reason.
	m := do(t, s, http.MethodGet, "/metrics", nil).Body.String()
	if !strings.Contains(m, `utxod_blocks_rejected_total{reason="bad-cb-amount"} 1`) ||
		!strings.Contains(m, `utxod_blocks_processed_total{status="connected"} 1`) ||
		!strings.Contains(m, "utxod_block_validation_seconds_count 4") {
		t.Fatalf("metrics:\n%s", grepLines(m, "utxod_"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestOrphansAndBlockInfo(t *testing.T) {
	s, _, blocks := mainnetServer(t, 2)
	h := func(i int) string { return wire.DoubleSHA256(blocks[i][:80]).String() }
	// 5 and 4 before 3: orphans until 3 arrives.
	for _, i := range []int{5, 4} {
		var r BlockResult
		decodeJSON(t, postBlock(t, s, blocks[i]), &r)
		if r.Status != "orphan" || r.Height != -1 {
			t.Fatalf("block %d: %+v", i, r)
		}
	}
	var bi BlockInfo
	decodeJSON(t, do(t, s, http.MethodGet, "/v1/blocks/"+h(5), nil), &bi)
	if bi.Status != "orphan" || bi.PreviousBlockHash != h(4) || bi.Height != -1 {
		t.Fatalf("orphan info %+v", bi)
	}
	var r BlockResult
	decodeJSON(t, postBlock(t, s, blocks[3]), &r)
	if r.Status != "connected" || r.Height != 3 {
		t.Fatalf("block 3: %+v", r)
	}
	for _, tc := range []struct {
		target string
		code   int
		reason string
		hash   string
		height int32
		next   string
	}{
		{target: "/v1/tip", code: 200, hash: h(5), height: 5},
		{target: "/v1/blocks/" + h(5), code: 200, hash: h(5), height: 5},
		{target: "/v1/blocks/" + h(3), code: 200, hash: h(3), height: 3, next: h(4)},
		{target: "/v1/blocks/height/0", code: 200, hash: h(0), height: 0, next: h(1)},
		{target: "/v1/blocks/height/4", code: 200, hash: h(4), height: 4, next: h(5)},
		{target: "/v1/blocks/height/6", code: 404, reason: "height-out-of-range"},
		{target: "/v1/blocks/height/-1", code: 400, reason: "bad-height"},
		{target: "/v1/blocks/height/x", code: 400, reason: "bad-height"},
		{target: "/v1/blocks/height/99999999999", code: 400, reason: "bad-height"},
		{target: "/v1/blocks/" + strings.Repeat("ab", 32), code: 404, reason: "block-not-found"},
		{target: "/v1/blocks/" + strings.Repeat("ab", 31), code: 400, reason: "bad-hash"},
		{target: "/v1/blocks/" + strings.Repeat("zz", 32), code: 400, reason: "bad-hash"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			rec := do(t, s, http.MethodGet, tc.target, nil)
			if rec.Code != tc.code {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if tc.code != 200 {
				if p := problemOf(t, rec); p.Reason != tc.reason {
					t.Fatalf("problem %+v", p)
				}
				return
			}
			var bi BlockInfo
			decodeJSON(t, rec, &bi)
			if bi.Hash != tc.hash || bi.Height != tc.height || bi.Status != "valid" || !bi.InActiveChain ||
				bi.NextBlockHash != tc.next || bi.Confirmations != 5-tc.height+1 || len(bi.ChainWork) != 64 {
				t.Fatalf("info %+v", bi)
			}
		})
	}
}

func TestSideBranchAndReorg(t *testing.T) {
	p := params.RegTest()
	cs := newChainstate(t, p)
	s := newServer(t, cs, p)
	c, err := blockgen.NewChain(p)
	if err != nil {
		t.Fatal(err)
	}
	a1 := c.Template(nil, nil).Finish()
	b1 := c.Template(nil, []byte{0x51, 0x51, 0x75}).Finish() // different coinbase: a fork at height 1
	b2 := c.Template(b1, nil).Finish()
	for _, step := range []struct {
		n      *blockgen.Node
		status string
	}{{a1, "connected"}, {b1, "side-branch"}, {b2, "connected"}} {
		var r BlockResult
		decodeJSON(t, postBlock(t, s, step.n.Raw), &r)
		if r.Status != step.status {
			t.Fatalf("%s: %+v, want %s", step.n.Hash, r, step.status)
		}
	}
	var bi BlockInfo
	decodeJSON(t, do(t, s, http.MethodGet, "/v1/blocks/"+a1.Hash.String(), nil), &bi)
	if bi.InActiveChain || bi.Confirmations != -1 || bi.Status != "valid" {
		t.Fatalf("reorged-out block: %+v", bi)
	}
	decodeJSON(t, do(t, s, http.MethodGet, "/v1/tip", nil), &bi)
	if bi.Hash != b2.Hash.String() {
		t.Fatalf("tip %+v", bi)
	}
}

func TestChainstateAndUTXO(t *testing.T) {
	s, cs, blocks := mainnetServer(t, 170)
	var muhash, hs3, none map[string]any
	decodeJSON(t, do(t, s, http.MethodGet, "/v1/chainstate", nil), &muhash)
	decodeJSON(t, do(t, s, http.MethodGet, "/v1/chainstate?hash_type=hash_serialized_3", nil), &hs3)
	decodeJSON(t, do(t, s, http.MethodGet, "/v1/chainstate?hash_type=none", nil), &none)
	// Reference values at height 170 (testdata/mainnet/reference-digests.jsonl).
	want := map[string]any{
		"height": 170.0, "bestblock": "00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee",
		"txouts": 171.0, "bogosize": 20007.0, "transactions": 170.0, "total_amount": 8500.0, "total_amount_sat": 850000000000.0,
		"muhash": "b497ee695f714fb45632085fda981c5828816d0e181d55be45227654db948e30",
	}
	for k, v := range want {
		if muhash[k] != v || hs3[k] != v {
			t.Errorf("%s: got %v / %v, want %v", k, muhash[k], hs3[k], v)
		}
		if k != "muhash" && none[k] != v {
			t.Errorf("none %s: %v", k, none[k])
		}
	}
	if hs3["hash_serialized_3"] != "7105b60f83d299f471759ec2c7900a2f15b61573b94dea3c94060e925fcf1417" {
		t.Errorf("hash_serialized_3 %v", hs3["hash_serialized_3"])
	}
	if _, ok := muhash["hash_serialized_3"]; ok {
		t.Error("muhash answer has hash_serialized_3")
	}
	if _, ok := none["muhash"]; ok {
		t.Error("none answer has muhash")
	}
	// Core writes amounts with eight decimals.
	if body := do(t, s, http.MethodGet, "/v1/chainstate", nil).Body.String(); !strings.Contains(body, `"total_amount":8500.00000000,`) {
		t.Errorf("amount format: %s", body)
	}
	rec := do(t, s, http.MethodGet, "/v1/chainstate?hash_type=sha1", nil)
	if rec.Code != 400 || problemOf(t, rec).Reason != "bad-hash-type" {
		t.Fatalf("bad hash_type: %d %s", rec.Code, rec.Body)
	}

	// Block 170's transaction: the first bitcoin transaction (10 BTC to
	// Hal Finney, 40 back); its input, block 9's coinbase, is spent.
	b170, _ := wire.ParseBlock(blocks[170])
	tx := b170.Txs[1]
	txid := tx.TxID.String()
	b9, _ := wire.ParseBlock(blocks[9])
	cb9 := b9.Txs[0].TxID.String()
	_ = cs
	for _, tc := range []struct {
		target string
		code   int
		reason string
		value  string
	}{
		{target: "/v1/utxos/" + txid + "/0", code: 200, value: `"value":10.00000000,"value_sat":1000000000,"height":170,"coinbase":false`},
		{target: "/v1/utxos/" + txid + "/1", code: 200, value: `"value":40.00000000,"value_sat":4000000000,"height":170,"coinbase":false`},
		{target: "/v1/utxos/" + txid + "/2", code: 404, reason: "utxo-not-found"},
		{target: "/v1/utxos/" + cb9 + "/0", code: 404, reason: "utxo-not-found"},
		{target: "/v1/utxos/" + txid + "/-1", code: 400, reason: "bad-vout"},
		{target: "/v1/utxos/" + txid + "/4294967296", code: 400, reason: "bad-vout"},
		{target: "/v1/utxos/" + txid + "/+1", code: 400, reason: "bad-vout"},
		{target: "/v1/utxos/" + txid[:63] + "/0", code: 400, reason: "bad-txid"},
		{target: "/v1/utxos/" + strings.Repeat("g", 64) + "/0", code: 400, reason: "bad-txid"},
	} {
		t.Run(tc.target[9:], func(t *testing.T) {
			rec := do(t, s, http.MethodGet, tc.target, nil)
			if rec.Code != tc.code {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if tc.code != 200 {
				if p := problemOf(t, rec); p.Reason != tc.reason {
					t.Fatalf("problem %+v", p)
				}
				return
			}
			if !strings.Contains(rec.Body.String(), tc.value) || !strings.Contains(rec.Body.String(), `"txid":"`+txid+`"`) {
				t.Fatalf("body %s", rec.Body)
			}
			var u UTXO
			decodeJSON(t, rec, &u)
			if !strings.HasSuffix(u.ScriptPubKey, "ac") {
				t.Fatalf("script %s", u.ScriptPubKey)
			}
		})
	}
}

func TestHealthDocsAndMisc(t *testing.T) {
	s, _, _ := mainnetServer(t, 1)
	for _, tc := range []struct {
		method, target string
		code           int
		ctype          string
		contains       string
	}{
		{"GET", "/healthz", 200, "application/json", `"status":"ok","height":1`},
		{"GET", "/openapi.json", 200, "application/json", `"swagger": "2.0"`},
		{"GET", "/docs", 302, "", ""},
		{"GET", "/docs/index.html", 200, "text/html", "swagger"},
		{"GET", "/metrics", 200, "text/plain", "utxod_tip_height 1"},
		{"GET", "/nope", 404, "application/problem+json", `"reason":"not-found"`},
		{"DELETE", "/v1/tip", 405, "application/problem+json", `"reason":"method-not-allowed"`},
		{"GET", "/v1/blocks", 405, "application/problem+json", `"reason":"method-not-allowed"`},
	} {
		t.Run(tc.method+tc.target, func(t *testing.T) {
			rec := do(t, s, tc.method, tc.target, nil)
			if rec.Code != tc.code || !strings.HasPrefix(rec.Header().Get("Content-Type"), tc.ctype) || !strings.Contains(rec.Body.String(), tc.contains) {
				t.Fatalf("%d %q %.300s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
			}
		})
	}
	// After Close, block submissions are refused and health reports it.
	s.Close()
	if rec := postBlock(t, s, mainnetBlocks(t)[2]); rec.Code != 503 || problemOf(t, rec).Reason != "shutting-down" {
		t.Fatalf("after Close: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, s, "GET", "/healthz", nil); rec.Code != 503 {
		t.Fatalf("healthz after Close: %d", rec.Code)
	}
}

func TestNewValidatesConfig(t *testing.T) {
	cs := newChainstate(t, params.RegTest())
	for _, cfg := range []Config{
		{Params: params.RegTest(), Token: testToken},
		{Chain: cs, Token: testToken},
		{Chain: cs, Params: params.RegTest(), Token: "short"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

// panicChain panics or fails on demand.
type panicChain struct {
	Chain
	fail error
}

func (p panicChain) Coin(utxo.Outpoint) (utxo.Coin, bool, error) { panic("boom") }
func (p panicChain) Coins([]utxo.Outpoint) ([]bool, []utxo.Coin, chainstate.BlockInfo, error) {
	panic("boom")
}
func (p panicChain) Info(string) (utxo.ChainstateInfo, error) {
	return utxo.ChainstateInfo{}, p.fail
}
func (p panicChain) SubmitWith(context.Context, []byte, chainstate.SubmitOptions) (chainstate.Result, error) {
	return chainstate.Result{}, p.fail
}

func TestPanicsAndStoreErrorsAre500(t *testing.T) {
	cs := newChainstate(t, params.MainNet())
	s := newServer(t, panicChain{Chain: cs, fail: errors.New("disk on fire at /secret/path")}, params.MainNet())
	for _, tc := range []struct {
		method, target string
		body           []byte
	}{
		{"GET", "/v1/utxos/" + strings.Repeat("00", 32) + "/0", nil},
		{"GET", "/rest/getutxos/" + strings.Repeat("00", 32) + "-0.json", nil},
		{"GET", "/v1/chainstate", nil},
		{"POST", "/v1/blocks", mainnetBlocks(t)[1]},
	} {
		rec := do(t, s, tc.method, tc.target, tc.body, "Authorization", "Bearer "+testToken)
		if rec.Code != 500 {
			t.Fatalf("%s: %d %s", tc.target, rec.Code, rec.Body)
		}
		if p := problemOf(t, rec); p.Reason != "internal" || strings.Contains(rec.Body.String(), "/secret") || strings.Contains(rec.Body.String(), "boom") {
			t.Fatalf("%s leaks: %s", tc.target, rec.Body)
		}
	}
	// The server still answers after the panics.
	if rec := do(t, s, "GET", "/healthz", nil); rec.Code != 200 {
		t.Fatalf("healthz: %d", rec.Code)
	}
}

// TestOrphanPoolFullIs503: with room for one orphan, a second one is
// refused with 503 and the first still connects once its parent arrives.
func TestOrphanPoolFullIs503(t *testing.T) {
	p := params.MainNet()
	blocks := mainnetBlocks(t)
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, btcdengine.New(), nil),
		Store: store.NewMem(), MaxOrphanBytes: len(blocks[2]) + len(blocks[3]) - 1})
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, cs, p)
	if rec := postBlock(t, s, blocks[2]); rec.Code != 200 {
		t.Fatalf("first orphan: %d %s", rec.Code, rec.Body)
	}
	rec := postBlock(t, s, blocks[3])
	if rec.Code != 503 || problemOf(t, rec).Reason != "orphan-pool-full" {
		t.Fatalf("second orphan: %d %s", rec.Code, rec.Body)
	}
	if rec := postBlock(t, s, blocks[1]); rec.Code != 200 {
		t.Fatalf("parent: %d %s", rec.Code, rec.Body)
	}
	if h := cs.Tip().Height; h != 2 {
		t.Fatalf("tip %d, want 2 (the held orphan connected)", h)
	}
}

// TestConcurrentPosts submits blocks 1-200 from 8 goroutines in random
// order while readers query; every block ends up connected.
func TestConcurrentPosts(t *testing.T) {
	s, cs, blocks := mainnetServer(t, 0)
	const n = 200
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := n; i >= 1; i-- { // reverse order: many orphans
		next <- i
	}
	close(next)
	for w := 0; w < 8; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range next {
				if rec := postBlock(t, s, blocks[i]); rec.Code != 200 {
					t.Errorf("block %d: %d %s", i, rec.Code, rec.Body)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				for _, target := range []string{"/v1/tip", "/v1/chainstate", "/rest/chaininfo.json", "/v1/blocks/height/0"} {
					if rec := do(t, s, "GET", target, nil); rec.Code != 200 {
						t.Errorf("%s: %d", target, rec.Code)
					}
				}
			}
		}()
	}
	wg.Wait()
	if h := cs.Tip().Height; h != n {
		t.Fatalf("tip %d, want %d", h, n)
	}
}

var _ = json.Marshal
var _ = validate.Reason
