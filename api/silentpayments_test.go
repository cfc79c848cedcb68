package api

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"

	_ "utxod/backends/all"
	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/silentpayments"
	"utxod/store/kvstore/spindex"
	"utxod/testkit/chaingen"
	"utxod/testkit/testchain"
	"utxod/validate"
)

// spServer serves a generated regtest chain (taproot-rich, with reorgs)
// whose store keeps the tweak index.
func spServer(t *testing.T) (*Server, *chainstate.Chainstate, *spindex.Index) {
	t.Helper()
	raws := testchain.Generated(t, chaingen.ProfileModern, 160, 1)
	kv := testchain.OpenKV(t, "pebble", filepath.Join(t.TempDir(), "pebble"))
	t.Cleanup(func() { kv.Close() })
	ix, err := spindex.Create(kv, params.RegTest().GenesisHash)
	if err != nil {
		t.Fatal(err)
	}
	st := openIndexedStore(t, kv, 1<<20, ix)
	p := params.RegTest()
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	for i, raw := range raws {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
	}
	s, err := New(Config{Chain: cs, Params: p, Token: testToken, SilentPayments: ix})
	if err != nil {
		t.Fatal(err)
	}
	return s, cs, ix
}

func hexTweaks(rows []silentpayments.TweakRow, keep func(*silentpayments.TweakRow) bool) []string {
	out := []string{}
	for i := range rows {
		if keep(&rows[i]) {
			out = append(out, hex.EncodeToString(rows[i].Tweak[:]))
		}
	}
	return out
}

func TestSilentPaymentsRoutes(t *testing.T) {
	s, cs, ix := spServer(t)
	tip := cs.Tip()
	_, blocks, err := ix.Blocks(context.Background(), 0, int(tip.Height)+1)
	if err != nil {
		t.Fatal(err)
	}
	// The block with most rows, some of them spent.
	var b silentpayments.BlockTweaks
	for _, c := range blocks {
		spent := slices.ContainsFunc(c.Rows, func(r silentpayments.TweakRow) bool { return r.Unspent == 0 })
		if spent && len(c.Rows) > len(b.Rows) {
			b = c
		}
	}
	if len(b.Rows) < 3 {
		t.Fatalf("no block with rows and spent ones: %+v", b)
	}
	values := []int64{}
	for _, r := range b.Rows {
		values = append(values, r.MaxValue)
	}
	slices.Sort(values)
	dust := values[len(values)/2] // keeps about half

	var info SPInfo
	decodeJSON(t, do(t, s, "GET", "/getinfo", nil), &info)
	if info != (SPInfo{Version: "1.0.0", Network: "regtest", BlockHeight: tip.Height, FilterSpent: "optional"}) {
		t.Errorf("getinfo %+v", info)
	}

	for _, c := range []struct {
		query string
		dust  int64
		spent bool
	}{
		{"", 0, false},
		{fmt.Sprintf("?dust_limit=%d", dust), dust, false},
		{"?filter_spent=1", 0, true},
		{fmt.Sprintf("?dustLimit=%d&filterSpent=true", dust), dust, true},
		{"?filter_spent=0&dust_limit=0", 0, false},
	} {
		var got SPBlockTweaks
		decodeJSON(t, do(t, s, "GET", fmt.Sprintf("/tweaks/%d%s", b.Height, c.query), nil), &got)
		want := SPBlockTweaks{Height: b.Height, Hash: b.Hash.String(), DustLimit: c.dust,
			Tweaks: hexTweaks(b.Rows, func(r *silentpayments.TweakRow) bool { return r.MaxValue >= c.dust && (!c.spent || r.Unspent > 0) })}
		if c.spent {
			want.FilterSpent = 1
		}
		if !equalJSON(got, want) {
			t.Errorf("/tweaks%s:\n got %+v\nwant %+v", c.query, got, want)
		}
		if len(want.Tweaks) == len(b.Rows) && c.query != "" && c.query != "?filter_spent=0&dust_limit=0" {
			t.Errorf("/tweaks%s filters nothing", c.query)
		}
	}

	// The range route: every block, hashes of the active chain.
	var rng SPTweakRange
	decodeJSON(t, do(t, s, "GET", fmt.Sprintf("/v1/silentpayments/tweaks?from=0&count=%d", MaxTweakBlocks), nil), &rng)
	if rng.TipHeight != tip.Height || rng.TipHash != tip.Hash.String() || rng.IndexedFrom != 1 || len(rng.Blocks) != min(MaxTweakBlocks-1, int(tip.Height)) {
		t.Fatalf("range: tip %d %s from %d, %d blocks", rng.TipHeight, rng.TipHash, rng.IndexedFrom, len(rng.Blocks))
	}
	for i, rb := range rng.Blocks {
		if rb.Height != int32(i+1) || rb.Hash != mustAt(t, cs, rb.Height).Hash.String() || len(rb.Tweaks) != len(blocks[i].Rows) {
			t.Fatalf("range block %d: %d %s %d tweaks", i, rb.Height, rb.Hash, len(rb.Tweaks))
		}
	}
	decodeJSON(t, do(t, s, "GET", fmt.Sprintf("/v1/silentpayments/tweaks?from=%d&filter_spent=1&dust_limit=%d", b.Height, dust), nil), &rng)
	if len(rng.Blocks) != 1 || rng.DustLimit != dust || rng.FilterSpent != 1 {
		t.Fatalf("range of one: %+v", rng)
	}
	for _, tw := range rng.Blocks[0].Tweaks {
		if tw.Unspent == 0 || tw.MaxValue < dust || len(tw.Outputs) < int(tw.Unspent) {
			t.Errorf("filtered range kept %+v", tw)
		}
	}
	decodeJSON(t, do(t, s, "GET", fmt.Sprintf("/v1/silentpayments/tweaks?from=%d&count=5", tip.Height+1), nil), &rng)
	if len(rng.Blocks) != 0 {
		t.Errorf("blocks past the tip: %+v", rng.Blocks)
	}

	// BlindBit.
	var bbInfo BlindBitInfo
	decodeJSON(t, do(t, s, "GET", "/blindbit/info", nil), &bbInfo)
	if bbInfo.Network != "regtest" || bbInfo.Height != tip.Height || !bbInfo.TweaksFullBasic || !bbInfo.TweaksCutThroughWithDustFilter {
		t.Errorf("blindbit info %+v", bbInfo)
	}
	var bbHeight BlindBitHeight
	decodeJSON(t, do(t, s, "GET", "/blindbit/block-height", nil), &bbHeight)
	var bbHash BlindBitHash
	decodeJSON(t, do(t, s, "GET", fmt.Sprintf("/blindbit/block-hash/%d", b.Height), nil), &bbHash)
	if bbHeight.BlockHeight != tip.Height || bbHash.BlockHash != b.Hash.String() {
		t.Errorf("blindbit height %+v hash %+v", bbHeight, bbHash)
	}
	var list []string
	decodeJSON(t, do(t, s, "GET", fmt.Sprintf("/blindbit/tweaks/%d?dustLimit=%d", b.Height, dust), nil), &list)
	if want := hexTweaks(b.Rows, func(r *silentpayments.TweakRow) bool { return r.MaxValue >= dust && r.Unspent > 0 }); !slices.Equal(list, want) {
		t.Errorf("blindbit tweaks %v, want %v", list, want)
	}
	decodeJSON(t, do(t, s, "GET", fmt.Sprintf("/blindbit/tweak-index/%d", b.Height), nil), &list)
	if want := hexTweaks(b.Rows, func(*silentpayments.TweakRow) bool { return true }); !slices.Equal(list, want) {
		t.Errorf("blindbit tweak-index %v, want %v", list, want)
	}
	var utxos []BlindBitUTXO
	decodeJSON(t, do(t, s, "GET", fmt.Sprintf("/blindbit/utxos/%d", b.Height), nil), &utxos)
	n := 0
	for _, r := range b.Rows {
		n += int(r.Unspent)
	}
	if len(utxos) != n || n == 0 {
		t.Fatalf("blindbit utxos: %d, the rows count %d unspent", len(utxos), n)
	}
	for _, u := range utxos {
		if len(u.ScriptPubKey) != 68 || u.ScriptPubKey[:4] != "5120" || u.Spent || u.BlockHash != b.Hash.String() || u.BlockHeight != b.Height || u.Timestamp == 0 || u.Value <= 0 {
			t.Errorf("blindbit utxo %+v", u)
		}
	}

	// Bad input and heights the index does not cover.
	for target, want := range map[string]int{
		"/tweaks/abc":                              http.StatusBadRequest,
		"/tweaks/-1":                               http.StatusBadRequest,
		"/tweaks/1?dust_limit=-5":                  http.StatusBadRequest,
		"/tweaks/1?dust_limit=x":                   http.StatusBadRequest,
		"/tweaks/1?filter_spent=2":                 http.StatusBadRequest,
		"/tweaks/1?filterSpent=yes":                http.StatusBadRequest,
		"/tweaks/99999":                            http.StatusNotFound,
		"/tweaks/0":                                http.StatusNotFound,
		"/v1/silentpayments/tweaks":                http.StatusBadRequest,
		"/v1/silentpayments/tweaks?from=1&count=0": http.StatusBadRequest,
		fmt.Sprintf("/v1/silentpayments/tweaks?from=1&count=%d", MaxTweakBlocks+1): http.StatusBadRequest,
		"/v1/silentpayments/tweaks?from=x":                                         http.StatusBadRequest,
		"/blindbit/tweaks/1?dustLimit=1.5":                                         http.StatusBadRequest,
		"/blindbit/utxos/99999":                                                    http.StatusNotFound,
		"/blindbit/block-hash/z":                                                   http.StatusBadRequest,
	} {
		rec := do(t, s, "GET", target, nil)
		if rec.Code != want {
			t.Errorf("%s: %d, want %d (%s)", target, rec.Code, want, rec.Body)
			continue
		}
		problemOf(t, rec)
	}

	// Without the index every route says so.
	bare := newServer(t, cs, params.RegTest())
	for _, target := range []string{"/getinfo", "/tweaks/1", "/v1/silentpayments/tweaks?from=1", "/blindbit/info",
		"/blindbit/block-height", "/blindbit/block-hash/1", "/blindbit/tweaks/1", "/blindbit/tweak-index/1", "/blindbit/utxos/1"} {
		rec := do(t, bare, "GET", target, nil)
		if rec.Code != http.StatusNotImplemented || problemOf(t, rec).Reason != "no-silentpayments-index" {
			t.Errorf("%s without the index: %d %s", target, rec.Code, rec.Body)
		}
	}
}

func equalJSON(a, b SPBlockTweaks) bool {
	return a.Height == b.Height && a.Hash == b.Hash && a.DustLimit == b.DustLimit && a.FilterSpent == b.FilterSpent && slices.Equal(a.Tweaks, b.Tweaks)
}
