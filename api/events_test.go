package api

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	btcwire "github.com/btcsuite/btcd/wire/v2"
	"github.com/coder/websocket"

	"utxod/address"
	"utxod/chainstate"
	"utxod/events"
	"utxod/params"
	"utxod/scripthash"
	"utxod/store"
	"utxod/testkit/blockgen"
	"utxod/testkit/btcdengine"
	"utxod/validate"
)

// eventsNet is a regtest node with the events hub, served over real HTTP.
type eventsNet struct {
	*regtest
	hub *events.Hub
	ts  *httptest.Server
}

func newEventsNet(t *testing.T, keep int32, hcfg events.Config) *eventsNet {
	t.Helper()
	p := params.RegTest()
	v := validate.New(p, btcdengine.New(), nil)
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: v, Store: store.NewMem(), KeepBlocks: keep})
	if err != nil {
		t.Fatal(err)
	}
	hcfg.Chain = cs
	hub := events.New(hcfg)
	t.Cleanup(hub.Close)
	cs.SetObserver(hub)
	g, err := blockgen.NewChain(p)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Chain: cs, Params: p, Token: testToken, Coins: cs, Events: hub})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &eventsNet{regtest: &regtest{t: t, p: p, cs: cs, gen: g, tip: g.Genesis, srv: srv}, hub: hub, ts: ts}
}

// waitHub waits until the hub has fanned out the chain's tip.
func (n *eventsNet) waitHub() {
	n.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for n.hub.Tip().Hash != n.cs.Tip().Hash {
		if time.Now().After(deadline) {
			n.t.Fatal("hub never reached the tip")
		}
		time.Sleep(time.Millisecond)
	}
}

type sseEvent struct {
	kind, id string
	data     map[string]any
}

// sseStream reads a real HTTP client's SSE stream on a goroutine.
type sseStream struct {
	t    *testing.T
	resp *http.Response
	ch   chan sseEvent
}

func openSSE(t *testing.T, target string, hdr http.Header) *sseStream {
	t.Helper()
	req, _ := http.NewRequest("GET", target, nil)
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b := new(bytes.Buffer)
		b.ReadFrom(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s: %d %s", target, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	s := &sseStream{t: t, resp: resp, ch: make(chan sseEvent, 100000)}
	t.Cleanup(s.close)
	go func() {
		defer close(s.ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.kind != "" {
					s.ch <- ev
				}
				ev = sseEvent{id: ev.id}
			case strings.HasPrefix(line, "event: "):
				ev.kind = line[7:]
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(line[6:]), &ev.data); err != nil {
					t.Errorf("data %q: %v", line, err)
				}
			}
		}
	}()
	return s
}

func (s *sseStream) close() { s.resp.Body.Close() }

func (s *sseStream) next() sseEvent {
	s.t.Helper()
	select {
	case ev, ok := <-s.ch:
		if !ok {
			s.t.Fatal("stream ended")
		}
		return ev
	case <-time.After(5 * time.Second):
		s.t.Fatal("no event within 5 s")
	}
	return sseEvent{}
}

// expect reads len(kinds) events and checks their kinds.
func (s *sseStream) expect(kinds ...string) []sseEvent {
	s.t.Helper()
	var got []sseEvent
	for _, k := range kinds {
		ev := s.next()
		got = append(got, ev)
		if ev.kind != k {
			s.t.Fatalf("event %d: %s %v, want %s (so far %v)", len(got)-1, ev.kind, ev.data, k, kindsOf(got))
		}
	}
	return got
}

func kindsOf(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.kind)
	}
	return out
}

func cursorOf(n *blockgen.Node) string { return fmt.Sprintf("%d:%s", n.Height, n.Hash) }

var watchedScript = func() []byte {
	h := sha256.Sum256([]byte{0x52})
	return address.WitnessScript(0, h[:])
}()

// TestEventsEndToEnd: every event kind through a real HTTP client, over
// SSE and WebSocket, the same stream.
func TestEventsEndToEnd(t *testing.T) {
	n := newEventsNet(t, 0, events.Config{})
	b1 := n.mine(payout{anyoneScript, 20e8}, payout{anyoneScript, 10e8})
	n.mineN(100)
	n.waitHub()
	cb := b1.Block.Transactions[0]
	cbHash := cb.TxHash()
	watchedOut := fmt.Sprintf("%s:1", cbHash)
	q := url.Values{"address": {n.addr(anyoneScript)}, "outpoint": {watchedOut}, "blocks": {"true"}}
	sse := openSSE(t, n.ts.URL+"/v1/events?"+q.Encode(), nil)
	wsURL := "ws" + strings.TrimPrefix(n.ts.URL, "http") + "/v1/events?" + q.Encode()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wc, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer wc.CloseNow()

	// A block paying the watched script, and one spending both outputs of
	// block 1 (the second a watched outpoint) to the watched script.
	b102 := n.mine(payout{anyoneScript, 50e8})
	spend := spendAnyone([]btcwire.OutPoint{{Hash: cbHash, Index: 0}, {Hash: cbHash, Index: 1}}, []payout{{anyoneScript, 29e8}})
	b103 := n.mineOn(nil, nil, spend)

	evs := sse.expect("output_created", "block_connected",
		"output_spent", "output_spent", "spent", "output_created", "block_connected")
	if evs[0].data["value"] != float64(50e8) || evs[0].data["height"] != float64(102) || evs[0].id != cursorOf(b102.Parent) {
		t.Errorf("output_created %v id %s", evs[0].data, evs[0].id)
	}
	if evs[1].id != cursorOf(b102) || evs[1].data["hash"] != b102.Hash.String() {
		t.Errorf("block_connected %v id %s", evs[1].data, evs[1].id)
	}
	txid := spend.TxHash().String()
	if evs[3].data["outpoint"] != watchedOut || evs[3].data["spending_txid"] != txid || evs[3].data["input_index"] != float64(1) || evs[3].data["value"] != float64(10e8) {
		t.Errorf("output_spent %v", evs[3].data)
	}
	if evs[4].data["outpoint"] != watchedOut || evs[4].data["spending_txid"] != txid || evs[4].data["height"] != float64(103) {
		t.Errorf("spent %v", evs[4].data)
	}
	if evs[5].data["outpoint"] != txid+":0" || evs[6].id != cursorOf(b103) {
		t.Errorf("output_created %v, block id %s", evs[5].data, evs[6].id)
	}
	sh := scripthash.Of(anyoneScript).String()
	if evs[0].data["scripthash"] != sh {
		t.Errorf("scripthash %v, want %s", evs[0].data["scripthash"], sh)
	}
	// The WebSocket stream carries the same events.
	for i, want := range evs {
		_, b, err := wc.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Event, ID string
			Data      map[string]any
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m.Event != want.kind || m.ID != want.id || fmt.Sprint(m.Data) != fmt.Sprint(want.data) {
			t.Errorf("ws message %d: %s", i, b)
		}
	}
	// /metrics: both streams open, their deliveries timed (2 blocks each).
	// A delivery is observed once its write returned, which may be after
	// the client read it: poll a little.
	wants := []string{"\nutxod_events_streams 2\n", "\nutxod_events_delivery_seconds_count 4\n", "\nutxod_events_cut_off_total 0\n"}
	var missing []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(n.ts.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		var m bytes.Buffer
		m.ReadFrom(resp.Body)
		resp.Body.Close()
		missing = missing[:0]
		for _, want := range wants {
			if !strings.Contains(m.String(), want) {
				missing = append(missing, strings.TrimSpace(want))
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, w := range missing {
		t.Errorf("/metrics lacks %q", w)
	}
}

// reorgNet mines a chain whose blocks pay the watched script, for reorgs.
func reorgTo(n *eventsNet, fork *blockgen.Node, blocks int) []*blockgen.Node {
	var out []*blockgen.Node
	p := fork
	for range blocks {
		p = n.mineOn(p, []payout{{watchedScript, 7e8}})
		out = append(out, p)
	}
	return out
}

// TestEventsReorg: depth 1 and 3; the reversals come first, newest
// block first, then the new branch.
func TestEventsReorg(t *testing.T) {
	for _, depth := range []int{1, 3} {
		t.Run(fmt.Sprint("depth", depth), func(t *testing.T) {
			n := newEventsNet(t, 0, events.Config{})
			n.mineN(5)
			fork := n.tip
			n.waitHub()
			q := url.Values{"address": {n.addr(watchedScript)}}
			sse := openSSE(t, n.ts.URL+"/v1/events?"+q.Encode(), nil)
			old := reorgTo(n, fork, depth)
			for range old {
				sse.expect("output_created", "block_connected")
			}
			neu := reorgTo(n, fork, depth+1)
			if n.cs.Tip().Hash != neu[depth].Hash {
				t.Fatal("no reorg")
			}
			for i := depth - 1; i >= 0; i-- {
				evs := sse.expect("output_removed", "block_disconnected")
				if evs[0].data["block"] != old[i].Hash.String() || evs[0].id != cursorOf(old[i]) {
					t.Errorf("reversal of %d: %v id %s", i, evs[0].data, evs[0].id)
				}
				if evs[1].id != cursorOf(old[i].Parent) {
					t.Errorf("block_disconnected id %s", evs[1].id)
				}
			}
			for _, b := range neu {
				evs := sse.expect("output_created", "block_connected")
				if evs[1].id != cursorOf(b) {
					t.Errorf("new branch: id %s, want %s", evs[1].id, cursorOf(b))
				}
			}
		})
	}
}

// TestEventsResume: Last-Event-ID and ?from give exactly what was missed;
// a cursor too old is 410, a stale one resumes at the fork.
func TestEventsResume(t *testing.T) {
	n := newEventsNet(t, 10, events.Config{Recent: 4})
	n.mineN(3)
	n.waitHub()
	q := url.Values{"address": {n.addr(watchedScript)}}
	target := n.ts.URL + "/v1/events?" + q.Encode()
	sse := openSSE(t, target, nil)
	a := reorgTo(n, n.tip, 2)
	sse.expect("output_created", "block_connected", "output_created")
	sse.close()
	// Cut off inside block a[1]: its first event's id is a[0].
	missed := append([]*blockgen.Node{a[1]}, reorgTo(n, n.tip, 2)...)
	n.waitHub()
	for _, how := range []string{"header", "query"} {
		var s *sseStream
		if how == "header" {
			s = openSSE(t, target, http.Header{"Last-Event-ID": {cursorOf(a[0])}})
		} else {
			s = openSSE(t, target+"&from="+url.QueryEscape(cursorOf(a[0])), nil)
		}
		for _, b := range missed {
			evs := s.expect("output_created", "block_connected")
			if evs[1].id != cursorOf(b) {
				t.Errorf("%s: replayed %s, want %s", how, evs[1].id, cursorOf(b))
			}
		}
		// Live after the replay.
		live := n.mine(payout{watchedScript, 1e8})
		if evs := s.expect("output_created", "block_connected"); evs[1].id != cursorOf(live) {
			t.Errorf("%s: live %s", how, evs[1].id)
		}
		missed = append(missed, live)
		s.close()
	}

	t.Run("too old", func(t *testing.T) {
		n.mineN(12) // block 1's successors leave the 10 kept
		n.waitHub()
		b1 := mustAt(t, n.cs, 1)
		for cur, want := range map[string]int{
			fmt.Sprintf("1:%s", b1.Hash):    410,
			fmt.Sprintf("5:%s", b1.Hash):    400,
			"7:" + strings.Repeat("ab", 32): 410,
			"nonsense":                      400,
		} {
			req, _ := http.NewRequest("GET", target, nil)
			req.Header.Set("Last-Event-ID", cur)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want || (want != 200 && resp.Header.Get("Content-Type") != "application/problem+json") {
				t.Errorf("cursor %s: %d %s, want %d", cur, resp.StatusCode, resp.Header.Get("Content-Type"), want)
			}
		}
	})

	t.Run("stale cursor", func(t *testing.T) {
		fork := n.tip
		stale := reorgTo(n, fork, 1)[0]
		n.waitHub()
		// The node leaves stale's branch while the client is away.
		neu := reorgTo(n, fork, 2)
		n.waitHub()
		// The hub still holds stale's data: its reversal, then the branch.
		s := openSSE(t, target, http.Header{"Last-Event-ID": {cursorOf(stale)}})
		evs := s.expect("output_removed", "block_disconnected", "output_created", "block_connected", "output_created", "block_connected")
		if evs[1].id != cursorOf(fork) || evs[5].id != cursorOf(neu[1]) {
			t.Errorf("stale resume: %v %v", evs[1].id, evs[5].id)
		}
		s.close()
		// Once the hub forgot it (Recent: 4) the undo data is gone: reset.
		n.mineN(4)
		n.waitHub()
		s = openSSE(t, target, http.Header{"Last-Event-ID": {cursorOf(stale)}})
		evs = s.expect("reset", "output_created", "block_connected", "output_created", "block_connected")
		if evs[0].id != cursorOf(fork) || evs[0].data["hash"] != fork.Hash.String() {
			t.Errorf("reset %v id %s", evs[0].data, evs[0].id)
		}
	})
}

// TestEventsSlowClientCutOff: a client that stops reading is cut off
// while a reading one gets every block at once and the node never waits.
func TestEventsSlowClientCutOff(t *testing.T) {
	n := newEventsNet(t, 0, events.Config{Buffer: 1000})
	n.waitHub()
	q := url.Values{"address": {n.addr(watchedScript)}, "blocks": {"true"}}
	target := n.ts.URL + "/v1/events?" + q.Encode()
	// The stalled client: a tiny receive window, and it never reads.
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
	}}
	slow := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	resp, err := slow.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	fast := openSSE(t, target, nil)
	outs := make([]payout, 400)
	for i := range outs {
		outs[i] = payout{watchedScript, 1e6}
	}
	var worst time.Duration
	for i := range 30 {
		start := time.Now()
		b := n.mine(outs...)
		mined := time.Since(start)
		for range outs {
			fast.next()
		}
		ev := fast.next()
		if ev.kind != "block_connected" || ev.id != cursorOf(b) {
			t.Fatalf("block %d: %s %s", i, ev.kind, ev.id)
		}
		worst = max(worst, mined)
	}
	if got := n.hub.Stats().CutOff.Load(); got != 1 {
		t.Errorf("%d streams cut off, want 1 (the stalled one)", got)
	}
	if _, streams := n.hub.Watched(); streams != 1 {
		t.Errorf("%d streams open, want 1", streams)
	}
	t.Logf("slowest block connect with a stalled client: %v", worst)
}

// TestEventsSubscriptions: POST /v1/subscriptions, then the stream by id;
// bad subscriptions are 4xx problems.
func TestEventsSubscriptions(t *testing.T) {
	n := newEventsNet(t, 0, events.Config{})
	n.waitHub()
	post := func(body string) (*http.Response, Subscription) {
		resp, err := http.Post(n.ts.URL+"/v1/subscriptions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var s Subscription
		if resp.StatusCode == 201 {
			json.NewDecoder(resp.Body).Decode(&s)
		}
		return resp, s
	}
	xpub := "tpubD6NzVbkrYhZ4WaWSyoBvQwbpLkojyoTZPRsgXELWz3Popb3qkjcJyJUGLnL4qHHoQvao8ESaAstxYSnhyswJ76uZPStJRJCTKvosUCJZL5B"
	body := fmt.Sprintf(`{"addresses":[%q],"descriptors":[{"desc":"wpkh(%s/0/*)","range":[0,9]}],"blocks":true}`, n.addr(watchedScript), xpub)
	resp, sub := post(body)
	if resp.StatusCode != 201 || sub.Scripts != 11 || !sub.Blocks {
		t.Fatalf("POST: %d %+v", resp.StatusCode, sub)
	}
	if _, again := post(body); again.ID != sub.ID {
		t.Errorf("same body, id %s then %s", sub.ID, again.ID)
	}
	s := openSSE(t, n.ts.URL+sub.Events, nil)
	n.mine(payout{watchedScript, 3e8})
	s.expect("output_created", "block_connected")

	many := make([]string, MaxQueryWatches+1)
	for i := range many {
		many[i] = "outpoint=" + strings.Repeat("00", 32) + ":" + fmt.Sprint(i)
	}
	for _, c := range []struct {
		query string
		want  int
	}{
		{"address=1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", 400}, // mainnet
		{"scripthash=xyz", 400},
		{"outpoint=abc", 400},
		{"descriptor=wpkh(nonsense)", 400},
		{"blocks=maybe", 400},
		{"", 400},
		{strings.Join(many, "&"), 413},
		{"subscription=00ff", 404},
	} {
		resp, err := http.Get(n.ts.URL + "/v1/events?" + c.query)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%.60s: %d %s, want %d", c.query, resp.StatusCode, resp.Header.Get("Content-Type"), c.want)
		}
	}
	for body, want := range map[string]int{
		`{"descriptors":[{"desc":"wpkh(` + xpub + `/0/*)","range":[0,200000]}]}`: 413,
		`{"addresses":["nope"]}`: 400,
		`{"unknown":1}`:          400,
		`{}`:                     400,
	} {
		if resp, _ := post(body); resp.StatusCode != want {
			t.Errorf("POST %.50s: %d, want %d", body, resp.StatusCode, want)
		}
	}
}
