package main

import (
	"bytes"
	"context"
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

	"utxod/events"
	"utxod/params"
	"utxod/scripthash"
	"utxod/testkit/blockgen"
)

const testWebhookSecret = "a-webhook-secret-of-32-bytes-abc"

func writeSecret(t *testing.T, mode os.FileMode, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return p
}

// TestServeWebhookFlags: bad webhook configurations exit 2 with one line
// saying what is wrong, before anything is opened.
func TestServeWebhookFlags(t *testing.T) {
	dd := filepath.Join(t.TempDir(), "data")
	good := writeSecret(t, 0o600, testWebhookSecret+"\n")
	file := func(content string) string {
		p := filepath.Join(t.TempDir(), "hooks.json")
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--webhook", "http://127.0.0.1:1/h", "--webhook-secret-file", good}, "need --datadir"},
		{[]string{"--datadir", dd, "--webhook", "http://127.0.0.1:1/h"}, "need --webhook-secret-file"},
		{[]string{"--datadir", dd, "--webhook-secret-file", good}, "without --webhook"},
		{[]string{"--datadir", dd, "--webhook", "ftp://x/", "--webhook-secret-file", good}, "want http"},
		{[]string{"--datadir", dd, "--webhook", "http://x/", "--webhook", "http://x/", "--webhook-secret-file", good}, "twice"},
		{[]string{"--datadir", dd, "--webhook", "http://x/", "--webhook-secret-file", filepath.Join(dd, "missing")}, "no such file"},
		{[]string{"--datadir", dd, "--webhook", "http://x/", "--webhook-secret-file", writeSecret(t, 0o600, " \n")}, "is empty"},
		{[]string{"--datadir", dd, "--webhook", "http://x/", "--webhook-secret-file", writeSecret(t, 0o600, "short")}, "at least 16"},
		{[]string{"--datadir", dd, "--webhook", "http://x/", "--webhook-secret-file", writeSecret(t, 0o644, testWebhookSecret)}, "chmod 600"},
		{[]string{"--datadir", dd, "--webhook", "http://x/", "--webhook-secret-file", t.TempDir()}, "not a regular file"},
		{[]string{"--datadir", dd, "--webhooks", file(`{"hooks": [{"url": "http://x/", "subscriptions": {}}]}`), "--webhook-secret-file", good}, "unknown field"},
		{[]string{"--datadir", dd, "--webhooks", file(`{"hooks": []}`), "--webhook-secret-file", good}, "no hooks"},
		{[]string{"--datadir", dd, "--webhooks", file(`{"hooks": [{"url": "http://x/", "subscription": {"addresses": ["bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"]}}]}`), "--webhook-secret-file", good}, "this node is on regtest"},
		{[]string{"--datadir", dd, "--webhooks", file(`{"hooks": [{"url": "http://x/", "subscription": {}}]}`), "--webhook-secret-file", good}, "nothing to watch"},
		{[]string{"--datadir", dd, "--webhooks", filepath.Join(dd, "none.json"), "--webhook-secret-file", good}, "no such file"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"serve", "--network", "regtest"}, tc.args...)
		code := run(args, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, stderr.String(), tc.want)
			continue
		}
		oneLine(t, stderr.String())
	}
	if _, err := os.Stat(dd); err == nil {
		t.Error("a refused configuration created the datadir")
	}
}

// hookReceiver acknowledges webhook requests whose signature verifies.
type hookReceiver struct {
	t      *testing.T
	mu     sync.Mutex
	bodies []events.WebhookBody
}

func (r *hookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	raw, _ := io.ReadAll(req.Body)
	h := req.Header
	if err := events.VerifySignature([]byte(testWebhookSecret), h.Get(events.HeaderTimestamp), h.Get(events.HeaderSignature), raw, time.Now(), 5*time.Minute); err != nil {
		r.t.Errorf("%v: %s", err, raw)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var b events.WebhookBody
	if err := json.Unmarshal(raw, &b); err != nil {
		r.t.Error(err)
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, b)
	r.mu.Unlock()
}

func (r *hookReceiver) wait(n int) []events.WebhookBody {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		got := append([]events.WebhookBody(nil), r.bodies...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%d webhook requests, want %d", len(got), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestServeWebhook: utxod serve with a --webhook and a --webhooks hook:
// blocks POSTed to the API reach both, signed; after a restart the hooks
// resume exactly after the last block acknowledged.
func TestServeWebhook(t *testing.T) {
	dd := filepath.Join(t.TempDir(), "data")
	secret := writeSecret(t, 0o600, testWebhookSecret+"\n")
	blocksHook := &hookReceiver{t: t}
	watchHook := &hookReceiver{t: t}
	ts1, ts2 := httptest.NewServer(blocksHook), httptest.NewServer(watchHook)
	defer ts1.Close()
	defer ts2.Close()
	g, err := blockgen.NewChain(params.RegTest())
	if err != nil {
		t.Fatal(err)
	}
	payTo := []byte{0x00, 0x14, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	hooks := filepath.Join(t.TempDir(), "hooks.json")
	os.WriteFile(hooks, fmt.Appendf(nil, `{"hooks": [{"url": %q, "subscription": {"scripthashes": [%q]}}]}`, ts2.URL, scripthash.Of(payTo)), 0o600)

	start := func() (base, token string, stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		type started struct{ addr, cookie string }
		ready := make(chan started, 1)
		done := make(chan int, 1)
		var stderr bytes.Buffer
		go func() {
			done <- serve(ctx, []string{"--listen", "127.0.0.1:0", "--network", "regtest", "--datadir", dd, "--log-level", "warn",
				"--webhook", ts1.URL + "/blocks", "--webhooks", hooks, "--webhook-secret-file", secret},
				io.Discard, &stderr, func(addr, cookie string) { ready <- started{addr, cookie} })
		}()
		var st started
		select {
		case st = <-ready:
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not start")
		}
		tok, err := os.ReadFile(st.cookie)
		if err != nil {
			t.Fatal(err)
		}
		return "http://" + st.addr, string(tok), func() {
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("serve exited %d: %s", code, stderr.String())
			}
		}
	}
	post := func(base, token string, b *blockgen.Node) {
		req, _ := http.NewRequest("POST", base+"/v1/blocks", bytes.NewReader(b.Raw))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST block %d: %d", b.Height, resp.StatusCode)
		}
	}
	mine := func(parent *blockgen.Node, pay bool) *blockgen.Node {
		var script []byte
		if pay {
			script = payTo
		}
		return g.Template(parent, script).Finish()
	}
	cursor := func(b *blockgen.Node) string { return fmt.Sprintf("%d:%s", b.Height, b.Hash) }

	base, token, stop := start()
	b1 := mine(g.Genesis, false)
	b2 := mine(b1, true)
	post(base, token, b1)
	post(base, token, b2)
	got := blocksHook.wait(2)
	if got[0].Cursor != cursor(b1) || got[1].Cursor != cursor(b2) || got[1].Previous != cursor(b1) || got[0].Events[0].Event != "block_connected" {
		t.Errorf("blocks hook: %+v", got)
	}
	w := watchHook.wait(1)
	if w[0].Cursor != cursor(b2) || len(w[0].Events) != 2 || w[0].Events[0].Event != "output_created" {
		t.Errorf("watch hook: %+v", w)
	}
	stop()
	for _, u := range []string{ts1.URL + "/blocks", ts2.URL} {
		raw, err := os.ReadFile(filepath.Join(dd, "webhooks", events.HookID(u)+".json"))
		if err != nil || !strings.Contains(string(raw), cursor(b2)) {
			t.Errorf("cursor file of %s: %s %v", u, raw, err)
		}
	}

	base, token, stop = start()
	defer stop()
	b3 := mine(b2, true)
	post(base, token, b3)
	got = blocksHook.wait(3)
	if len(got) != 3 || got[2].Cursor != cursor(b3) || got[2].Previous != cursor(b2) {
		t.Errorf("blocks hook after the restart: %+v", got)
	}
	w = watchHook.wait(2)
	if len(w) != 2 || w[1].Cursor != cursor(b3) || w[1].Previous != cursor(b2) {
		t.Errorf("watch hook after the restart: %+v", w)
	}
}
