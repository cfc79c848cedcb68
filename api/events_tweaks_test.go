package api

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"utxod/chainstate"
	"utxod/events"
	"utxod/params"
	"utxod/script"
	"utxod/store/kvstore/spindex"
	"utxod/testkit/chaingen"
	"utxod/testkit/testchain"
	"utxod/validate"
)

// TestEventsTweaks: a stream with tweaks=true gets, for every connected
// block, a tweaks event (before its block_connected) whose rows are the
// tweak index's for that block (txid, tweak, largest taproot value), and
// on a reorganisation only block_disconnected for the blocks that leave;
// resuming replays the tweaks events; POST /v1/subscriptions keeps
// "tweaks": true; a node without the index answers 501.
func TestEventsTweaks(t *testing.T) {
	p := params.RegTest()
	raws := testchain.Generated(t, chaingen.ProfileModern, 150, 3)
	kv := testchain.OpenKV(t, "pebble", filepath.Join(t.TempDir(), "pebble"))
	t.Cleanup(func() { kv.Close() })
	ix, err := spindex.Create(kv, p.GenesisHash)
	if err != nil {
		t.Fatal(err)
	}
	st := openIndexedStore(t, kv, 1<<20, ix)
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	hub := events.New(events.Config{Chain: cs})
	t.Cleanup(hub.Close)
	cs.SetObserver(hub)
	srv, err := New(Config{Chain: cs, Params: p, Token: testToken, Events: hub, SilentPayments: ix})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	waitHub := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for hub.Tip().Hash != cs.Tip().Hash {
			if time.Now().After(deadline) {
				t.Fatal("hub never reached the tip")
			}
			time.Sleep(time.Millisecond)
		}
	}
	half := len(raws) / 2
	for i, raw := range raws[:half] {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
	}
	waitHub()
	start := cs.Tip()

	resp, err := http.Post(ts.URL+"/v1/subscriptions", "application/json", bytes.NewReader([]byte(`{"tweaks": true}`)))
	if err != nil {
		t.Fatal(err)
	}
	var sub Subscription
	if err := json.NewDecoder(resp.Body).Decode(&sub); err != nil || resp.StatusCode != http.StatusCreated || !sub.Tweaks {
		t.Fatalf("POST tweaks subscription: %d %+v %v", resp.StatusCode, sub, err)
	}
	resp.Body.Close()
	sse := openSSE(t, ts.URL+sub.Events, nil)
	for i, raw := range raws[half:] {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatalf("block %d: %v", half+i, err)
		}
	}
	waitHub()
	final := cs.Tip()

	// The live stream, up to the final tip's block_connected.
	seen := map[string][]any{} // block hash → its tweaks event's rows
	connects, disconnects, tweakRows := 0, 0, 0
	var prev sseEvent
	for {
		ev := sse.next()
		switch ev.kind {
		case events.KindTweaks:
			rows, _ := ev.data["tweaks"].([]any)
			seen[ev.data["hash"].(string)] = rows
			tweakRows += len(rows)
		case events.KindBlockConnected:
			connects++
			if prev.kind != events.KindTweaks || prev.data["hash"] != ev.data["hash"] || prev.id != fmt.Sprintf("%v:%v", ev.data["height"].(float64)-1, ev.data["prev_hash"]) {
				t.Fatalf("block_connected %v after %s %v (id %s)", ev.data, prev.kind, prev.data, prev.id)
			}
		case events.KindBlockDisconnected:
			disconnects++
			if prev.kind == events.KindTweaks {
				t.Fatalf("block_disconnected %v right after a tweaks event", ev.data)
			}
		default:
			t.Fatalf("unexpected %s %v", ev.kind, ev.data)
		}
		prev = ev
		if ev.kind == events.KindBlockConnected && ev.data["hash"] == final.Hash.String() {
			break
		}
	}
	if disconnects == 0 {
		t.Fatal("the chain made no reorganisation after the stream opened")
	}

	// Every block of the active chain above start: its tweaks event is the
	// index's rows.
	check := func(seen map[string][]any) int {
		t.Helper()
		_, blocks, err := ix.Blocks(context.Background(), start.Height+1, int(final.Height-start.Height))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, b := range blocks {
			rows, ok := seen[b.Hash.String()]
			if !ok {
				t.Fatalf("no tweaks event for block %d %s", b.Height, b.Hash)
			}
			want := map[string]string{}
			for _, r := range b.Rows {
				want[r.Txid.String()] = fmt.Sprintf("%s/%d", hex.EncodeToString(r.Tweak[:]), r.MaxValue)
			}
			if len(rows) != len(want) {
				t.Fatalf("block %d: %d tweaks in the event, %d rows in the index", b.Height, len(rows), len(want))
			}
			for _, r := range rows {
				m := r.(map[string]any)
				if got := fmt.Sprintf("%s/%.0f", m["tweak"], m["max_taproot_value"]); want[m["txid"].(string)] != got {
					t.Fatalf("block %d tx %s: event %s, index %s", b.Height, m["txid"], got, want[m["txid"].(string)])
				}
				n++
			}
		}
		return n
	}
	n := check(seen)
	if n == 0 {
		t.Fatal("no tweak compared")
	}

	// A resume from start replays the active chain's tweaks events.
	replay := openSSE(t, ts.URL+"/v1/events?tweaks=true&from="+fmt.Sprintf("%d:%s", start.Height, start.Hash), nil)
	again := map[string][]any{}
	for {
		ev := replay.next()
		if ev.kind == events.KindTweaks {
			rows, _ := ev.data["tweaks"].([]any)
			again[ev.data["hash"].(string)] = rows
		}
		if ev.kind == events.KindBlockConnected && ev.data["hash"] == final.Hash.String() {
			break
		}
	}
	if m := check(again); m != n {
		t.Fatalf("replay compared %d tweaks, live %d", m, n)
	}
	t.Logf("%d blocks connected and %d disconnected on the stream, %d tweaks (%d on the final chain) equal to the index's", connects, disconnects, tweakRows, n)

	// Without the index: 501 on both ways to ask.
	plain, err := New(Config{Chain: cs, Params: p, Token: testToken, Events: hub})
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []*http.Request{
		httptest.NewRequest("GET", "/v1/events?tweaks=true", nil),
		httptest.NewRequest("POST", "/v1/subscriptions", bytes.NewReader([]byte(`{"tweaks": true}`))),
	} {
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		plain.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotImplemented || !bytes.Contains(rec.Body.Bytes(), []byte("no-silentpayments-index")) {
			t.Errorf("%s %s without the index: %d %s", req.Method, req.URL, rec.Code, rec.Body)
		}
	}
}
