package events

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/address"
	"utxod/chainstate"
	"utxod/params"
	"utxod/scripthash"
	"utxod/store"
	"utxod/testkit/blockgen"
	"utxod/testkit/btcdengine"
	"utxod/validate"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

// whScript is the script the filtered hooks watch.
var whScript = func() []byte {
	h := sha256.Sum256([]byte{0x52})
	return address.WitnessScript(0, h[:])
}()

// whNet is a regtest chainstate with a Hub, fed with blockgen blocks.
type whNet struct {
	t     *testing.T
	cs    *chainstate.Chainstate
	hub   *Hub
	gen   *blockgen.Chain
	tip   *blockgen.Node
	nonce int
}

func newWHNet(t *testing.T, keep int32, hcfg Config) *whNet {
	t.Helper()
	p := params.RegTest()
	v := validate.New(p, btcdengine.New(), nil)
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: v, Store: store.NewMem(), KeepBlocks: keep})
	if err != nil {
		t.Fatal(err)
	}
	hcfg.Chain = cs
	hub := New(hcfg)
	t.Cleanup(hub.Close)
	cs.SetObserver(hub)
	g, err := blockgen.NewChain(p)
	if err != nil {
		t.Fatal(err)
	}
	return &whNet{t: t, cs: cs, hub: hub, gen: g, tip: g.Genesis}
}

// mineOn connects a block on parent (nil: the tip) whose coinbase pays
// script (nil: OP_TRUE).
func (n *whNet) mineOn(parent *blockgen.Node, script []byte) *blockgen.Node {
	n.t.Helper()
	if parent == nil {
		parent = n.tip
	}
	tpl := n.gen.Template(parent, nil)
	if script != nil {
		cb := tpl.Coinbase()
		cb.TxOut = []*btcwire.TxOut{{Value: 7e8, PkScript: script}}
	}
	n.nonce++
	tpl.Coinbase().TxIn[0].SignatureScript = blockgen.CoinbaseScript(tpl.Height, []byte{byte(n.nonce), byte(n.nonce >> 8)})
	b := tpl.Finish()
	res, err := n.cs.ProcessBlock(b.Raw)
	if err != nil {
		n.t.Fatalf("block %d: %v", b.Height, err)
	}
	if res.Status == chainstate.StatusConnected || n.cs.Tip().Hash == b.Hash {
		n.tip = b
	}
	return b
}

func (n *whNet) mineN(k int, script []byte) []*blockgen.Node {
	var out []*blockgen.Node
	for range k {
		out = append(out, n.mineOn(nil, script))
	}
	return out
}

func (n *whNet) waitHub() {
	n.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for n.hub.Tip().Hash != n.cs.Tip().Hash {
		if time.Now().After(deadline) {
			n.t.Fatal("hub never reached the tip")
		}
		time.Sleep(time.Millisecond)
	}
}

func cur(b *blockgen.Node) string { return fmt.Sprintf("%d:%s", b.Height, b.Hash) }

// receiver is a webhook endpoint: it checks every request's signature and
// headers, answers 503 while down or for its next fail requests, and keeps
// the bodies it acknowledged, checking they chain (Previous is the last
// acknowledged Cursor).
type receiver struct {
	t  *testing.T
	ts *httptest.Server

	mu       sync.Mutex
	down     bool
	fail     int
	attempts []time.Time
	acked    []WebhookBody
	notify   chan struct{}
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t, notify: make(chan struct{}, 1)}
	r.ts = httptest.NewServer(r)
	t.Cleanup(r.ts.Close)
	return r
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	raw, _ := io.ReadAll(req.Body)
	h := req.Header
	if err := VerifySignature(testSecret, h.Get(HeaderTimestamp), h.Get(HeaderSignature), raw, time.Now(), 5*time.Minute); err != nil {
		r.t.Errorf("request %s: %v", raw, err)
	}
	if VerifySignature([]byte("another secret"), h.Get(HeaderTimestamp), h.Get(HeaderSignature), raw, time.Now(), time.Minute) == nil {
		r.t.Error("the signature verifies with another secret")
	}
	var b WebhookBody
	if err := json.Unmarshal(raw, &b); err != nil {
		r.t.Errorf("body %s: %v", raw, err)
	}
	if h.Get(HeaderCursor) != b.Cursor || h.Get(HeaderPrevious) != b.Previous || h.Get(HeaderHook) != b.Hook || req.Method != "POST" ||
		h.Get("Content-Type") != "application/json" {
		r.t.Errorf("%s headers %v, body %s", req.Method, h, raw)
	}
	if len(b.Events) == 0 || b.Events[len(b.Events)-1].ID != b.Cursor {
		r.t.Errorf("the last event's id is not the cursor: %s", raw)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts = append(r.attempts, time.Now())
	if r.down || r.fail > 0 {
		if r.fail > 0 {
			r.fail--
		}
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	if n := len(r.acked); n > 0 && b.Previous != r.acked[n-1].Cursor {
		r.t.Errorf("delivery %d: previous %s, the last acknowledged cursor was %s", n, b.Previous, r.acked[n-1].Cursor)
	}
	r.acked = append(r.acked, b)
	select {
	case r.notify <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) setDown(down bool) {
	r.mu.Lock()
	r.down = down
	r.mu.Unlock()
}

// wait waits for n acknowledged bodies and returns them all.
func (r *receiver) wait(n int) []WebhookBody {
	r.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		r.mu.Lock()
		got := append([]WebhookBody(nil), r.acked...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-r.notify:
		case <-time.After(5 * time.Millisecond):
		case <-deadline:
			r.t.Fatalf("%d deliveries acknowledged, want %d", len(got), n)
		}
	}
}

func kinds(b WebhookBody) string {
	var k []string
	for _, e := range b.Events {
		k = append(k, e.Event)
	}
	return strings.Join(k, ",")
}

func startHooks(t *testing.T, n *whNet, dir string, hooks ...Hook) *Webhooks {
	t.Helper()
	w, err := StartWebhooks(WebhookConfig{Hub: n.hub, Dir: dir, Secret: testSecret, Hooks: hooks,
		MinBackoff: 5 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

func watchFilter(t *testing.T) *Filter {
	f, err := Compile(t.Context(), Spec{Scripthashes: []string{scripthash.Of(whScript).String()}}, params.RegTest(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestWebhookSignedInOrder: a filtered hook gets the blocks with its events,
// one signed request per block, in order; the others only move its cursor.
// A blocks hook gets every block.
func TestWebhookSignedInOrder(t *testing.T) {
	n := newWHNet(t, 0, Config{})
	n.mineN(2, nil)
	n.waitHub()
	start := n.hub.Tip()
	watched, blocks := newReceiver(t), newReceiver(t)
	startHooks(t, n, t.TempDir(), Hook{URL: watched.ts.URL + "/w", Filter: watchFilter(t)}, Hook{URL: blocks.ts.URL})
	a := n.mineOn(nil, whScript)
	n.mineOn(nil, nil)
	c := n.mineOn(nil, whScript)
	got := watched.wait(2)
	if got[0].Previous != start.String() || got[0].Cursor != cur(a) || got[1].Previous != cur(a) || got[1].Cursor != cur(c) {
		t.Errorf("cursors %+v", got)
	}
	for i, b := range []*blockgen.Node{a, c} {
		if kinds(got[i]) != "output_created,block_connected" || got[i].Events[0].ID != cur(b.Parent) {
			t.Errorf("delivery %d: %+v", i, got[i])
		}
		var oc OutputCreated
		if err := json.Unmarshal(got[i].Events[0].Data, &oc); err != nil || oc.Block != b.Hash.String() || oc.Value != 7e8 || oc.Scripthash != scripthash.Of(whScript).String() {
			t.Errorf("output_created %s: %v", got[i].Events[0].Data, err)
		}
		if got[i].Hook != HookID(watched.ts.URL+"/w") {
			t.Errorf("hook %s", got[i].Hook)
		}
	}
	all := blocks.wait(3)
	for i, b := range all {
		if kinds(b) != "block_connected" || !strings.HasPrefix(b.Cursor, fmt.Sprintf("%d:", 3+i)) {
			t.Errorf("blocks hook %d: %+v", i, b)
		}
	}
	if all[2].Cursor != cur(c) {
		t.Errorf("blocks hook: last %s, want %s", all[2].Cursor, cur(c))
	}
}

// TestWebhookRetries: a receiver failing 4 times then answering: the block
// is retried with a growing, bounded wait, and the blocks keep their order,
// each acknowledged once.
func TestWebhookRetries(t *testing.T) {
	n := newWHNet(t, 0, Config{})
	n.waitHub()
	r := newReceiver(t)
	r.fail = 4
	startHooks(t, n, t.TempDir(), Hook{URL: r.ts.URL})
	bs := n.mineN(3, nil)
	got := r.wait(3)
	for i, b := range bs {
		if got[i].Cursor != cur(b) {
			t.Errorf("delivery %d: %s, want %s", i, got[i].Cursor, cur(b))
		}
	}
	r.mu.Lock()
	at := r.attempts
	r.mu.Unlock()
	if len(at) != 7 {
		t.Fatalf("%d attempts, want 4 failures and 3 deliveries", len(at))
	}
	// Waits: 5 ms·2^k drawn in [half, all], capped at 40 ms.
	for k := range 4 {
		gap := at[k+1].Sub(at[k])
		lo := min(5*time.Millisecond<<k, 40*time.Millisecond) / 2
		if gap < lo || gap > 2*time.Second {
			t.Errorf("retry %d after %v, want at least %v", k+1, gap, lo)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if got := r.wait(3); len(got) != 3 {
		t.Errorf("%d deliveries acknowledged, want 3", len(got))
	}
}

// TestWebhookCatchUp: a receiver down while many blocks connect: the node
// never waits (the hook's stream is cut off), and once it is back the hook
// catches up by replaying from its cursor, every block once, in order.
func TestWebhookCatchUp(t *testing.T) {
	n := newWHNet(t, 0, Config{Buffer: 4})
	n.waitHub()
	r, other := newReceiver(t), newReceiver(t)
	r.setDown(true)
	startHooks(t, n, t.TempDir(), Hook{URL: r.ts.URL}, Hook{URL: other.ts.URL})
	// One block first, until the down hook has tried it: its stream is
	// then live, so the next blocks can only reach it through its queue.
	bs := n.mineN(1, nil)
	other.wait(1)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		r.mu.Lock()
		tried := len(r.attempts) > 0
		r.mu.Unlock()
		if tried {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the down hook never tried its first block")
		}
	}
	bs = append(bs, n.mineN(99, nil)...)
	// The other hook is not held back.
	other.wait(100)
	if n.hub.Stats().CutOff.Load() == 0 {
		t.Error("the down hook's stream was never cut off")
	}
	r.setDown(false)
	got := r.wait(100)
	if len(got) != 100 {
		t.Fatalf("%d deliveries", len(got))
	}
	for i, b := range bs {
		if got[i].Cursor != cur(b) || kinds(got[i]) != "block_connected" {
			t.Fatalf("delivery %d: %+v, want %s", i, got[i], cur(b))
		}
	}
}

// TestWebhookRestart: a hook stopped and started again (the node
// restarted) resumes exactly after the last acknowledged block, from its
// cursor file; the block in flight at the stop is delivered again.
func TestWebhookRestart(t *testing.T) {
	n := newWHNet(t, 0, Config{})
	n.waitHub()
	dir := t.TempDir()
	r := newReceiver(t)
	w := startHooks(t, n, dir, Hook{URL: r.ts.URL})
	first := n.mineN(3, nil)
	r.wait(3)
	r.setDown(true)
	inFlight := n.mineOn(nil, nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		tried := len(r.attempts) > 3
		r.mu.Unlock()
		if tried {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("block 4 never attempted")
		}
		time.Sleep(time.Millisecond)
	}
	w.Close()
	raw, err := os.ReadFile(filepath.Join(dir, HookID(r.ts.URL)+".json"))
	if err != nil || !strings.Contains(string(raw), `"cursor":"`+cur(first[2])+`"`) {
		t.Fatalf("cursor file %s: %v", raw, err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.tmp*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
	later := n.mineN(2, nil)
	r.setDown(false)
	startHooks(t, n, dir, Hook{URL: r.ts.URL})
	got := r.wait(6)
	for i, b := range append([]*blockgen.Node{inFlight}, later...) {
		if got[3+i].Cursor != cur(b) {
			t.Errorf("after the restart, delivery %d: %s, want %s", i, got[3+i].Cursor, cur(b))
		}
	}
	if got[3].Previous != cur(first[2]) {
		t.Errorf("first delivery after the restart: previous %s", got[3].Previous)
	}
}

// TestWebhookReorg: a reorganisation is delivered as the reversals of the
// branch left (newest first), then the new branch, live and in a catch-up
// (the receiver down during the reorganisation, the hook's stream cut off).
func TestWebhookReorg(t *testing.T) {
	for _, down := range []bool{false, true} {
		t.Run(fmt.Sprint("down=", down), func(t *testing.T) {
			cfg := Config{}
			if down { // the hook's stream is cut off: the catch-up replays
				cfg.Buffer = 1
			}
			n := newWHNet(t, 0, cfg)
			n.mineN(3, nil)
			fork := n.tip
			n.waitHub()
			r := newReceiver(t)
			startHooks(t, n, t.TempDir(), Hook{URL: r.ts.URL, Filter: watchFilter(t)})
			old := []*blockgen.Node{n.mineOn(fork, whScript)}
			old = append(old, n.mineOn(old[0], whScript))
			r.wait(2)
			r.setDown(down)
			neu := []*blockgen.Node{n.mineOn(fork, whScript)}
			for range 2 {
				neu = append(neu, n.mineOn(neu[len(neu)-1], whScript))
			}
			if n.cs.Tip().Hash != neu[2].Hash {
				t.Fatal("no reorg")
			}
			n.waitHub()
			if down && n.hub.Stats().CutOff.Load() == 0 {
				t.Error("the hook's stream was not cut off")
			}
			r.setDown(false)
			got := r.wait(7)[2:]
			for i, b := range []*blockgen.Node{old[1], old[0]} {
				if kinds(got[i]) != "output_removed,block_disconnected" || got[i].Cursor != cur(b.Parent) || got[i].Events[0].ID != cur(b) {
					t.Errorf("reversal %d: %+v", i, got[i])
				}
			}
			for i, b := range neu {
				if kinds(got[2+i]) != "output_created,block_connected" || got[2+i].Cursor != cur(b) {
					t.Errorf("new branch %d: %+v", i, got[2+i])
				}
			}
		})
	}
}

// TestWebhookCursorTooOld: a cursor older than the blocks the node keeps
// gets a reset at the tip, and the hook continues from there.
func TestWebhookCursorTooOld(t *testing.T) {
	n := newWHNet(t, 10, Config{})
	bs := n.mineN(20, nil)
	n.waitHub()
	dir := t.TempDir()
	r := newReceiver(t)
	f := cursorFile{dir: dir, id: HookID(r.ts.URL), url: r.ts.URL}
	old := Cursor{Height: bs[0].Height, Hash: bs[0].Hash}
	if err := f.save(hookPosition{old, old}); err != nil {
		t.Fatal(err)
	}
	startHooks(t, n, dir, Hook{URL: r.ts.URL})
	got := r.wait(1)
	var reset Reset
	if kinds(got[0]) != "reset" || got[0].Cursor != cur(n.tip) || got[0].Previous != old.String() ||
		json.Unmarshal(got[0].Events[0].Data, &reset) != nil || reset.Hash != n.tip.Hash.String() || !strings.Contains(reset.Reason, "older") {
		t.Fatalf("reset: %+v %+v", got[0], reset)
	}
	b := n.mineOn(nil, nil)
	if got := r.wait(2); got[1].Cursor != cur(b) || got[1].Previous != cur(b.Parent) {
		t.Errorf("after the reset: %+v", got[1])
	}
}

// TestWebhookConfigErrors: what StartWebhooks refuses.
func TestWebhookConfigErrors(t *testing.T) {
	n := newWHNet(t, 0, Config{})
	dir := t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad")
	os.MkdirAll(bad, 0o700)
	os.WriteFile(filepath.Join(bad, HookID("http://h/x")+".json"), []byte(`{"cursor":"nonsense"}`), 0o600)
	for _, tc := range []struct {
		cfg  WebhookConfig
		want string
	}{
		{WebhookConfig{Hub: n.hub, Dir: dir, Hooks: []Hook{{URL: "http://h/"}}}, "secret"},
		{WebhookConfig{Hub: n.hub, Secret: testSecret}, "directory"},
		{WebhookConfig{Hub: n.hub, Dir: dir, Secret: testSecret, Hooks: []Hook{{URL: "ftp://h/"}}}, "want http"},
		{WebhookConfig{Hub: n.hub, Dir: dir, Secret: testSecret, Hooks: []Hook{{URL: "http:///x"}}}, "want http"},
		{WebhookConfig{Hub: n.hub, Dir: dir, Secret: testSecret, Hooks: []Hook{{URL: "http://u:p@h/"}}}, "credentials"},
		{WebhookConfig{Hub: n.hub, Dir: dir, Secret: testSecret, Hooks: []Hook{{URL: "http://h/"}, {URL: "http://h/"}}}, "twice"},
		{WebhookConfig{Hub: n.hub, Dir: bad, Secret: testSecret, Hooks: []Hook{{URL: "http://h/x"}}}, "remove the file"},
	} {
		w, err := StartWebhooks(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			w.Close()
			t.Errorf("%+v: %v, want %q", tc.cfg.Hooks, err, tc.want)
		}
	}
}

// TestSignKnownAnswer pins the signature scheme docs/webhooks.md documents.
func TestSignKnownAnswer(t *testing.T) {
	got := Sign([]byte("secret"), "1700000000", []byte(`{"a":1}`))
	// printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret
	const want = "sha256=" + "49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686"
	if got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
	if err := VerifySignature([]byte("secret"), "1700000000", got, []byte(`{"a":1}`), time.Unix(1700000100, 0), time.Minute); err == nil {
		t.Error("a stale timestamp verifies")
	}
}
