package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/address"
	"utxod/chainstate"
	"utxod/scripthash"
	"utxod/testkit/blockgen"
	"utxod/testkit/chaingen"
	"utxod/utxo"
	"utxod/wire"
)

var (
	pkhScript  = address.P2PKHScript(bytes.Repeat([]byte{0x11}, 20))
	wpkhScript = address.WitnessScript(0, bytes.Repeat([]byte{0x22}, 20))
	trScript   = address.WitnessScript(1, bytes.Repeat([]byte{0x33}, 32))
)

// outKey names an output in tests.
func outKey(txid string, vout uint32) string {
	return txid + ":" + strconv.FormatUint(uint64(vout), 10)
}

// expectedOuts lists the coinbase outputs of n paying script.
func expectedOuts(n *blockgen.Node, script []byte) map[string]EsploraUTXO {
	out := make(map[string]EsploraUTXO)
	cb := n.Block.Transactions[0]
	txid := wire.Hash(cb.TxHash()).String()
	for i, o := range cb.TxOut {
		if bytes.Equal(o.PkScript, script) {
			out[outKey(txid, uint32(i))] = EsploraUTXO{TxID: txid, Vout: uint32(i), Value: o.Value,
				Status: EsploraTxStatus{Confirmed: true, BlockHeight: uint32(n.Height), BlockHash: n.Hash.String(), BlockTime: n.Time()}}
		}
	}
	return out
}

func merge(ms ...map[string]EsploraUTXO) map[string]EsploraUTXO {
	out := make(map[string]EsploraUTXO)
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func asSet(t *testing.T, list []EsploraUTXO) map[string]EsploraUTXO {
	t.Helper()
	out := make(map[string]EsploraUTXO)
	for _, u := range list {
		k := outKey(u.TxID, u.Vout)
		if _, dup := out[k]; dup {
			t.Fatalf("%s listed twice", k)
		}
		out[k] = u
	}
	return out
}

func sameSet(a, b map[string]EsploraUTXO) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// addrChain: block 1 pays pkh 10 outputs, wpkh 1, anyone 5; blocks 2-5
// pay pkh 3 outputs each.
func addrChain(t *testing.T, cfg Config) (*regtest, map[string]EsploraUTXO) {
	r := newRegtest(t, cfg)
	var outs []payout
	for i := range 10 {
		outs = append(outs, payout{pkhScript, 1e8 + int64(i)})
	}
	outs = append(outs, payout{wpkhScript, 7e8})
	for i := range 5 {
		outs = append(outs, payout{anyoneScript, 2e8 + int64(i)})
	}
	b1 := r.mine(outs...)
	want := expectedOuts(b1, pkhScript)
	for h := 2; h <= 5; h++ {
		n := r.mine(payout{pkhScript, int64(h)}, payout{pkhScript, int64(h) * 10}, payout{pkhScript, int64(h) * 100})
		want = merge(want, expectedOuts(n, pkhScript))
	}
	if len(want) != 22 {
		t.Fatalf("%d pkh outputs", len(want))
	}
	return r, want
}

func TestEsploraAddressUTXO(t *testing.T) {
	r, want := addrChain(t, Config{UTXOLimit: 22})
	var got []EsploraUTXO
	if code := r.get("/api/address/"+r.addr(pkhScript)+"/utxo", &got); code != 200 || !sameSet(asSet(t, got), want) {
		t.Fatalf("%d: %d outputs, want %d", code, len(got), len(want))
	}
	// Scripthash route, same answer.
	if code := r.get("/api/scripthash/"+scripthash.Of(pkhScript).String()+"/utxo", &got); code != 200 || !sameSet(asSet(t, got), want) {
		t.Fatalf("scripthash: %d: %d outputs", code, len(got))
	}
	// One output under the limit of 21: electrs' 400 and the text wallets test.
	r2, _ := addrChain(t, Config{UTXOLimit: 21})
	rec := do(t, r2.srv, "GET", "/api/address/"+r2.addr(pkhScript)+"/utxo", nil)
	if rec.Code != 400 || rec.Header().Get("Content-Type") != "text/plain" ||
		!strings.HasPrefix(rec.Body.String(), "Too many unspent transaction outputs (>21). ") {
		t.Fatalf("over the limit: %d %q", rec.Code, rec.Body)
	}
}

// Paging with a cursor returns every output once; outputs created during
// the walk come at the end and spent ones never come (stable cursor).
func TestAddressPagingStable(t *testing.T) {
	r, want := addrChain(t, Config{})
	type pageT struct {
		UTXOs      []EsploraUTXO `json:"utxos"`
		NextCursor *string       `json:"next_cursor"`
		Height     uint32        `json:"height"`
		Scripthash string        `json:"scripthash"`
		Address    string        `json:"address"`
	}
	walk := func(base string, limit int, between func(int)) []EsploraUTXO {
		var all []EsploraUTXO
		cursor := ""
		for i := 0; i < 100; i++ {
			var p pageT
			target := base + "?limit=" + strconv.Itoa(limit)
			if cursor != "" {
				target += "&cursor=" + cursor
			}
			if code := r.get(target, &p); code != 200 {
				t.Fatalf("%s: %d", target, code)
			}
			if len(p.UTXOs) > limit {
				t.Fatalf("page of %d > limit %d", len(p.UTXOs), limit)
			}
			all = append(all, p.UTXOs...)
			if between != nil {
				between(i)
			}
			if p.NextCursor == nil {
				return all
			}
			cursor = *p.NextCursor
		}
		t.Fatal("paging does not end")
		return nil
	}
	got := walk("/v1/address/"+r.addr(pkhScript)+"/utxos", 5, nil)
	if !sameSet(asSet(t, got), want) {
		t.Fatalf("paged %d outputs, want %d", len(got), len(want))
	}
	// Index order: by height.
	if !sort.SliceIsSorted(got, func(i, j int) bool { return got[i].Status.BlockHeight < got[j].Status.BlockHeight }) {
		t.Error("pages not in height order")
	}

	// The anyone-can-spend outputs of block 1 mature; walk them two at a
	// time while a block spends one already returned and one not yet
	// returned, and pays a new one.
	r.mineN(100)
	b1 := r.gen.Node(mustAt(t, r.cs, 1).Hash)
	cb := b1.Block.Transactions[0]
	var anyoneOuts []uint32
	for i, o := range cb.TxOut {
		if bytes.Equal(o.PkScript, anyoneScript) {
			anyoneOuts = append(anyoneOuts, uint32(i))
		}
	}
	cbHash := cb.TxHash()
	var spend *btcwire.MsgTx
	got = walk("/v1/address/"+r.addr(anyoneScript)+"/utxos", 2, func(page int) {
		if page != 0 {
			return
		}
		// Page 0 returned outputs 0 and 1; spend 0 and 3.
		spend = spendAnyone([]btcwire.OutPoint{{Hash: cbHash, Index: anyoneOuts[0]}, {Hash: cbHash, Index: anyoneOuts[3]}},
			[]payout{{anyoneScript, 3e8}})
		r.mineOn(nil, nil, spend)
	})
	seen := asSet(t, got)
	txid := wire.Hash(cbHash).String()
	for i, v := range anyoneOuts {
		_, ok := seen[outKey(txid, v)]
		switch i {
		case 0, 1, 2, 4:
			if !ok {
				t.Errorf("output %d (unspent when the walk passed it) missing", i)
			}
		case 3:
			if ok {
				t.Errorf("output 3, spent before the walk reached it, was returned")
			}
		}
	}
	newOut := outKey(wire.Hash(spend.TxHash()).String(), 0)
	if _, ok := seen[newOut]; !ok || got[len(got)-1].TxID != wire.Hash(spend.TxHash()).String() {
		t.Errorf("the output created during the walk is not last: %v", got)
	}
}

func TestAddressSummaryAndBatch(t *testing.T) {
	r, want := addrChain(t, Config{})
	var sum int64
	for _, u := range want {
		sum += u.Value
	}
	var s struct {
		Address   string          `json:"address"`
		UTXOCount uint64          `json:"utxo_count"`
		UTXOSum   int64           `json:"utxo_sum"`
		Amount    json.Number     `json:"amount"`
		Height    uint32          `json:"height"`
		BestBlock string          `json:"bestblock"`
		Extra     json.RawMessage `json:"-"`
	}
	if code := r.get("/v1/address/"+r.addr(pkhScript)+"/summary", &s); code != 200 || s.UTXOCount != 22 || s.UTXOSum != sum ||
		s.Height != 5 || s.BestBlock != r.tip.Hash.String() || s.Amount.String() != utxoAmountString(sum) {
		t.Fatalf("summary %d %+v (sum %d)", code, s, sum)
	}
	if code := r.get("/v1/scripthash/"+scripthash.Of(trScript).String()+"/summary", &s); code != 200 || s.UTXOCount != 0 || s.UTXOSum != 0 {
		t.Fatalf("empty summary %d %+v", code, s)
	}

	body := fmt.Sprintf(`{"addresses":[%q,%q],"scripthashes":[%q,%q],"limit":3}`, r.addr(pkhScript), r.addr(wpkhScript),
		scripthash.Of(anyoneScript), scripthash.Of(trScript))
	rec := do(t, r.srv, "POST", "/v1/utxos/batch", []byte(body), "Content-Type", "application/json")
	var b UTXOBatch
	decodeJSON(t, rec, &b)
	if rec.Code != 200 || len(b.Results) != 4 || b.Height != 5 {
		t.Fatalf("batch %d %s", rec.Code, rec.Body)
	}
	pk, wp, any, tr := b.Results[0], b.Results[1], b.Results[2], b.Results[3]
	if pk.Address != r.addr(pkhScript) || pk.UTXOCount != 22 || pk.UTXOSum != sum || len(pk.UTXOs) != 3 || pk.NextCursor == nil {
		t.Errorf("pkh item %+v", pk)
	}
	if wp.UTXOCount != 1 || len(wp.UTXOs) != 1 || wp.NextCursor != nil || wp.UTXOs[0].Value != 7e8 {
		t.Errorf("wpkh item %+v", wp)
	}
	if any.Address != "" || any.Scripthash != scripthash.Of(anyoneScript).String() || any.UTXOCount != 5 || len(any.UTXOs) != 3 {
		t.Errorf("scripthash item %+v", any)
	}
	if tr.UTXOCount != 0 || tr.UTXOs == nil || len(tr.UTXOs) != 0 || tr.NextCursor != nil {
		t.Errorf("empty item %+v", tr)
	}
	// The batch cursor continues on the single-address route.
	var p struct {
		UTXOs []EsploraUTXO `json:"utxos"`
	}
	if code := r.get("/v1/address/"+r.addr(pkhScript)+"/utxos?limit=100&cursor="+*pk.NextCursor, &p); code != 200 ||
		!sameSet(asSet(t, append(p.UTXOs, pk.UTXOs...)), want) {
		t.Errorf("continuing the batch: %d, %d rows", code, len(p.UTXOs))
	}
	// Limit 0: summaries only.
	rec = do(t, r.srv, "POST", "/v1/utxos/batch", []byte(fmt.Sprintf(`{"addresses":[%q],"limit":0}`, r.addr(pkhScript))), "Content-Type", "application/json")
	decodeJSON(t, rec, &b)
	if rec.Code != 200 || b.Results[0].UTXOCount != 22 || len(b.Results[0].UTXOs) != 0 {
		t.Errorf("limit 0: %d %s", rec.Code, rec.Body)
	}
}

func utxoAmountString(sat int64) string {
	b, _ := json.Marshal(utxo.Amount(sat))
	return string(b)
}

// Every bad input of the /v1 address routes is a 4xx problem.
func TestAddressRoutesBadInput(t *testing.T) {
	r, _ := addrChain(t, Config{})
	pkh, wpkh := r.addr(pkhScript), r.addr(wpkhScript)
	var p struct {
		NextCursor *string `json:"next_cursor"`
	}
	r.get("/v1/address/"+pkh+"/utxos?limit=1", &p)
	if p.NextCursor == nil {
		t.Fatal("no cursor")
	}
	many := make([]string, MaxBatchItems+1)
	for i := range many {
		many[i] = strings.Repeat("0", 64)
	}
	manyJSON, _ := json.Marshal(map[string]any{"scripthashes": many})
	for _, tc := range []struct {
		method, target, body string
		code                 int
		reason               string
	}{
		{"GET", "/v1/address/" + pkh + "/utxos?limit=0", "", 400, "bad-limit"},
		{"GET", "/v1/address/" + pkh + "/utxos?limit=10001", "", 400, "bad-limit"},
		{"GET", "/v1/address/" + pkh + "/utxos?limit=x", "", 400, "bad-limit"},
		{"GET", "/v1/address/" + pkh + "/utxos?cursor=zz", "", 400, "bad-cursor"},
		{"GET", "/v1/address/" + pkh + "/utxos?cursor=" + (*p.NextCursor)[:20], "", 400, "bad-cursor"},
		{"GET", "/v1/address/" + wpkh + "/utxos?cursor=" + *p.NextCursor, "", 400, "bad-cursor"}, // another address's cursor
		{"GET", "/v1/scripthash/" + scripthash.Of(pkhScript).String() + "/utxos?cursor=" + strings.Repeat("A", 60), "", 400, "bad-cursor"},
		{"GET", "/v1/address/bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4/utxos", "", 400, "bad-address"},
		{"GET", "/v1/address/nope/summary", "", 400, "bad-address"},
		{"GET", "/v1/scripthash/12/utxos", "", 400, "bad-scripthash"},
		{"GET", "/v1/scripthash/" + strings.Repeat("g", 64) + "/summary", "", 400, "bad-scripthash"},
		{"POST", "/v1/utxos/batch", `{}`, 400, "empty-batch"},
		{"POST", "/v1/utxos/batch", `{"addresses":[]}`, 400, "empty-batch"},
		{"POST", "/v1/utxos/batch", string(manyJSON), 413, "batch-too-large"},
		{"POST", "/v1/utxos/batch", `{"addresses":["` + pkh + `","nope"]}`, 400, "bad-address"},
		{"POST", "/v1/utxos/batch", `{"scripthashes":["00"]}`, 400, "bad-scripthash"},
		{"POST", "/v1/utxos/batch", `{"addresses":["` + pkh + `"],"limit":-1}`, 400, "bad-limit"},
		{"POST", "/v1/utxos/batch", `{"addresses":["` + pkh + `"],"limit":10001}`, 400, "bad-limit"},
		{"POST", "/v1/utxos/batch", `{"addresses":"` + pkh + `"}`, 400, "bad-json"},
		{"POST", "/v1/utxos/batch", `{"address":["` + pkh + `"]}`, 400, "bad-json"}, // unknown field
		{"POST", "/v1/utxos/batch", `{"addresses":["` + pkh + `"]} {}`, 400, "bad-json"},
		{"POST", "/v1/utxos/batch", `[`, 400, "bad-json"},
		{"POST", "/v1/utxos/batch", `{"addresses":["` + strings.Repeat("1", maxBatchBody) + `"]}`, 413, "body-too-large"},
	} {
		rec := do(t, r.srv, tc.method, tc.target, []byte(tc.body), "Content-Type", "application/json")
		if rec.Code != tc.code {
			t.Errorf("%s %.90s: %d %s", tc.method, tc.target+" "+tc.body, rec.Code, rec.Body)
			continue
		}
		if pr := problemOf(t, rec); pr.Reason != tc.reason {
			t.Errorf("%s %.90s: reason %q, want %q (%s)", tc.method, tc.target+" "+tc.body, pr.Reason, tc.reason, pr.Detail)
		}
	}
}

// opaqueChain hides the chainstate's ScanCoins: no index, nothing to scan.
type opaqueChain struct{ Chain }

// fakeIndex answers from a function.
type fakeIndex struct {
	lookup func(ctx context.Context, qs []scripthash.Query) (scripthash.Result, error)
}

func (f fakeIndex) Lookup(ctx context.Context, qs []scripthash.Query) (scripthash.Result, error) {
	return f.lookup(ctx, qs)
}

func TestAddressRoutesWithoutScan(t *testing.T) {
	r, _ := addrChain(t, Config{})
	s := newServer(t, opaqueChain{r.cs}, r.p)
	for _, target := range []string{"/api/address/" + r.addr(pkhScript) + "/utxo", "/api/scripthash/" + strings.Repeat("0", 64) + "/utxo"} {
		rec := do(t, s, "GET", target, nil)
		if rec.Code != http.StatusNotImplemented || rec.Header().Get("Content-Type") != "text/plain" {
			t.Errorf("%s: %d %s", target, rec.Code, rec.Body)
		}
	}
	rec := do(t, s, "GET", "/v1/address/"+r.addr(pkhScript)+"/utxos", nil)
	if rec.Code != http.StatusNotImplemented || problemOf(t, rec).Reason != "no-scripthash-index" {
		t.Errorf("v1: %d %s", rec.Code, rec.Body)
	}
}

// An index is asked first; ErrNoIndex falls back to the scan; a tip that
// is not on the active chain (a reorganisation) is retried, then 503.
func TestAddressRoutesIndex(t *testing.T) {
	r, want := addrChain(t, Config{})
	tip := r.cs.Tip()
	calls := 0
	idx := fakeIndex{func(_ context.Context, qs []scripthash.Query) (scripthash.Result, error) {
		calls++
		res := scripthash.Result{Tip: scripthash.Tip{Height: uint32(tip.Height), Hash: tip.Hash}, Answers: make([]scripthash.Answer, len(qs))}
		res.Answers[0].UTXOs = []scripthash.UTXO{{Outpoint: utxo.Outpoint{Index: 7}, Value: 99, Height: 3}}
		return res, nil
	}}
	s, err := New(Config{Chain: r.cs, Params: r.p, Token: testToken, Index: idx})
	if err != nil {
		t.Fatal(err)
	}
	rec := do(t, s, "GET", "/api/address/"+r.addr(pkhScript)+"/utxo", nil)
	var got []EsploraUTXO
	decodeJSON(t, rec, &got)
	if calls != 1 || len(got) != 1 || got[0].Vout != 7 || got[0].Value != 99 || got[0].Status.BlockHash != mustAt(t, r.cs, 3).Hash.String() {
		t.Fatalf("index answer: %d calls, %s", calls, rec.Body)
	}

	noIndex := fakeIndex{func(context.Context, []scripthash.Query) (scripthash.Result, error) {
		return scripthash.Result{}, scripthash.ErrNoIndex
	}}
	s, _ = New(Config{Chain: r.cs, Params: r.p, Token: testToken, Index: noIndex})
	rec = do(t, s, "GET", "/api/address/"+r.addr(pkhScript)+"/utxo", nil)
	decodeJSON(t, rec, &got)
	if !sameSet(asSet(t, got), want) {
		t.Fatalf("fallback scan: %s", rec.Body)
	}

	stale := fakeIndex{func(_ context.Context, qs []scripthash.Query) (scripthash.Result, error) {
		calls++
		return scripthash.Result{Tip: scripthash.Tip{Height: 3, Hash: wire.Hash{1}}, Answers: make([]scripthash.Answer, len(qs))}, nil
	}}
	calls = 0
	s, _ = New(Config{Chain: r.cs, Params: r.p, Token: testToken, Index: stale})
	rec = do(t, s, "GET", "/v1/scripthash/"+strings.Repeat("0", 64)+"/utxos", nil)
	if rec.Code != http.StatusServiceUnavailable || calls != lookupRetries {
		t.Errorf("stale tip: %d after %d calls", rec.Code, calls)
	}
	failing := fakeIndex{func(context.Context, []scripthash.Query) (scripthash.Result, error) {
		return scripthash.Result{}, errors.New("disk on fire")
	}}
	s, _ = New(Config{Chain: r.cs, Params: r.p, Token: testToken, Index: failing})
	if rec := do(t, s, "GET", "/api/scripthash/"+strings.Repeat("0", 64)+"/utxo", nil); rec.Code != 500 {
		t.Errorf("failing index: %d", rec.Code)
	}
}

// laggingChain answers AtHeight from the chain before its tip block, as the
// chainstate's published chain does while the block that an index has
// already applied finishes connecting; Lookup waits for that hold, after
// which AtHeight has the tip.
type laggingChain struct {
	*chainstate.Chainstate
	behind  atomic.Bool
	lookups atomic.Int32
}

func (c *laggingChain) AtHeight(h int32) (chainstate.BlockInfo, bool) {
	if c.behind.Load() && h >= c.Chainstate.Tip().Height {
		return chainstate.BlockInfo{}, false
	}
	return c.Chainstate.AtHeight(h)
}

func (c *laggingChain) Lookup(hash wire.Hash) (chainstate.BlockInfo, bool) {
	c.lookups.Add(1)
	c.behind.Store(false)
	return c.Chainstate.Lookup(hash)
}

// An index ahead of the chain AtHeight reads is answered, by the address
// routes and by scantxoutset, once Lookup has waited for the chain: one
// index call, no retry. Lookup must place the tip at its height.
func TestAddressIndexAheadOfView(t *testing.T) {
	r, _ := addrChain(t, Config{})
	tip := r.cs.Tip()
	calls := 0
	ahead := fakeIndex{func(_ context.Context, qs []scripthash.Query) (scripthash.Result, error) {
		calls++
		res := scripthash.Result{Tip: scripthash.Tip{Height: uint32(tip.Height), Hash: tip.Hash}, Answers: make([]scripthash.Answer, len(qs))}
		res.Answers[0].UTXOs = []scripthash.UTXO{{Outpoint: utxo.Outpoint{Index: 7}, Value: 99, Height: uint32(tip.Height)}}
		return res, nil
	}}
	lag := &laggingChain{Chainstate: r.cs}
	lag.behind.Store(true)
	s, err := New(Config{Chain: lag, Params: r.p, Token: testToken, Index: ahead})
	if err != nil {
		t.Fatal(err)
	}
	rec := do(t, s, "GET", "/api/address/"+r.addr(pkhScript)+"/utxo", nil)
	var got []EsploraUTXO
	decodeJSON(t, rec, &got)
	if calls != 1 || lag.lookups.Load() != 1 || len(got) != 1 || got[0].Status.BlockHash != tip.Hash.String() || got[0].Status.BlockTime != tip.Header.Time {
		t.Fatalf("index ahead: %d index calls, %d lookups, %s", calls, lag.lookups.Load(), rec.Body)
	}
	lag.behind.Store(true)
	calls = 0
	rec = do(t, s, "POST", "/v1/scan", []byte(`{"action":"start","scanobjects":["addr(`+r.addr(pkhScript)+`)"]}`), "Content-Type", "application/json")
	if rec.Code != http.StatusOK || calls != 1 {
		t.Fatalf("scan with the index ahead: %d after %d calls: %s", rec.Code, calls, rec.Body)
	}
	// A tip whose height and hash disagree (the index's height counted, its
	// hash not yet set) is no tip of the chain.
	halfway := fakeIndex{func(_ context.Context, qs []scripthash.Query) (scripthash.Result, error) {
		calls++
		return scripthash.Result{Tip: scripthash.Tip{Height: uint32(tip.Height) + 1, Hash: tip.Hash}, Answers: make([]scripthash.Answer, len(qs))}, nil
	}}
	calls = 0
	s, _ = New(Config{Chain: lag, Params: r.p, Token: testToken, Index: halfway})
	if rec := do(t, s, "GET", "/api/address/"+r.addr(pkhScript)+"/utxo", nil); rec.Code != http.StatusServiceUnavailable || calls != lookupRetries {
		t.Fatalf("tip at the next height with the old hash: %d after %d calls", rec.Code, calls)
	}
}

// TestAddressBatchWholeSet asks, in batches, for every script of a
// generated chain's UTXO set and checks each count and sum against a walk
// of the chainstate's coins; together they cover the set exactly.
func TestAddressBatchWholeSet(t *testing.T) {
	data, _, err := chaingen.Generate(chaingen.Config{Profile: chaingen.ProfileModern, Seed: 11, Blocks: 150, MaxTxs: 20})
	if err != nil {
		t.Fatal(err)
	}
	r := newRegtest(t, Config{})
	rd := wire.NewBlockFileReader(bytes.NewReader(data), r.p.Magic)
	for {
		raw, _, err := rd.Next()
		if err != nil {
			break
		}
		if _, err := r.cs.ProcessBlock(bytes.Clone(raw)); err != nil {
			t.Fatal(err)
		}
	}
	type agg struct {
		count uint64
		sum   int64
	}
	want := make(map[scripthash.Hash]*agg)
	st, err := r.cs.ScanCoins(func(e utxo.Entry) error {
		h := scripthash.Of(e.Script)
		if want[h] == nil {
			want[h] = &agg{}
		}
		want[h].count++
		want[h].sum += e.Value
		return nil
	})
	if err != nil || len(want) < 50 {
		t.Fatalf("%d scripts, %v", len(want), err)
	}
	var hashes []string
	for h := range want {
		hashes = append(hashes, h.String())
	}
	var total uint64
	for len(hashes) > 0 {
		n := min(len(hashes), MaxBatchItems)
		body, _ := json.Marshal(map[string]any{"scripthashes": hashes[:n], "limit": 0})
		rec := do(t, r.srv, "POST", "/v1/utxos/batch", body, "Content-Type", "application/json")
		var b UTXOBatch
		decodeJSON(t, rec, &b)
		for i, item := range b.Results {
			h, _ := scripthash.Parse(hashes[i])
			if w := want[h]; item.UTXOCount != w.count || item.UTXOSum != w.sum {
				t.Fatalf("%s: %d/%d, want %d/%d", hashes[i], item.UTXOCount, item.UTXOSum, w.count, w.sum)
			}
			total += item.UTXOCount
		}
		hashes = hashes[n:]
	}
	if total != st.TxOuts {
		t.Fatalf("batches cover %d outputs, the set has %d", total, st.TxOuts)
	}
}
