package torture

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAccess checks the binary's access rules: writes without or with a
// wrong token are 401 and change nothing; the cookie file is mode 0600;
// a non-loopback --listen is refused without --allow-remote; no answer —
// errors included — reveals the datadir path or panics.
func TestAccess(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin, _ := binary(t)
	c := testCorpus(t)
	dir := filepath.Join(t.TempDir(), "secret-datadir-name")
	srv, err := StartServer(bin, dir, serveArgs("pebble")...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if !srv.Exited() {
			srv.Kill()
		}
	}()
	ctx := context.Background()
	client := newClient()
	for i := 0; i < 20; i++ {
		if r, err := srv.Post(ctx, client, c.Blocks[i]); err != nil || r.Status != 200 {
			t.Fatalf("POST %d: %v %d %s", i, err, r.Status, r.Body)
		}
	}
	st, err := os.Stat(filepath.Join(dir, ".cookie"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("cookie mode %v, want 0600", st.Mode().Perm())
	}
	state := func() string {
		r, err := srv.Get(ctx, client, "/v1/chainstate?hash_type=hash_serialized_3")
		if err != nil || r.Status != 200 {
			t.Fatalf("chainstate: %v %d", err, r.Status)
		}
		return string(r.Body)
	}
	before := state()
	var bodies [][]byte
	for _, tok := range []string{"", "wrong", srv.Token[:len(srv.Token)-1], srv.Token + "x", strings.ToUpper(srv.Token)} {
		r, err := srv.Do(ctx, client, http.MethodPost, "/v1/blocks", c.Blocks[20], "application/octet-stream", tok)
		if err != nil || r.Status != http.StatusUnauthorized {
			t.Fatalf("token %q: %v %d %s", tok, err, r.Status, r.Body)
		}
		bodies = append(bodies, r.Body)
	}
	// The token in a query string or a cookie header is not accepted either.
	r, err := srv.Do(ctx, client, http.MethodPost, "/v1/blocks?token="+srv.Token, c.Blocks[20], "application/octet-stream", "")
	if err != nil || r.Status != http.StatusUnauthorized {
		t.Fatalf("token in query: %v %d", err, r.Status)
	}
	if state() != before {
		t.Fatal("unauthorized POSTs changed the chainstate")
	}

	// Every route with good and bad inputs: no 5xx, no path in any body.
	bad := bytes.Clone(c.Blocks[20])
	bad[100] ^= 1
	paths := []string{
		"/", "/healthz", "/metrics", "/openapi.json", "/docs", "/docs/index.html", "/v1/tip", "/v1/chainstate",
		"/v1/chainstate?hash_type=bogus", "/v1/blocks/zz", "/v1/blocks/" + c.Hashes[3].String(),
		"/v1/blocks/" + strings.Repeat("0", 64), "/v1/blocks/height/-1", "/v1/blocks/height/99999", "/v1/blocks/height/3",
		"/v1/utxos/xyz/0", "/v1/utxos/" + strings.Repeat("0", 64) + "/0", "/v1/utxos/" + strings.Repeat("0", 64) + "/x",
		"/rest/chaininfo.json", "/rest/chaininfo.bin", "/rest/getutxos/.json", "/rest/getutxos/zz-0.json",
		"/rest/headers/" + c.Hashes[1].String() + ".json", "/rest/headers/0/" + c.Hashes[1].String() + ".bin",
		"/rest/blockhashbyheight/1.json", "/rest/blockhashbyheight/x.json", "/rest/tx/00.json", "/../../etc/passwd",
		"/v1/../" + dir, "/%2e%2e/.cookie", "/.cookie", "/v1/.cookie",
	}
	for _, p := range paths {
		r, err := srv.Get(ctx, client, p)
		if err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		if r.Status >= 500 {
			t.Fatalf("GET %s: %d %s", p, r.Status, r.Body)
		}
		bodies = append(bodies, r.Body)
	}
	for _, body := range [][]byte{bad, c.Blocks[20][:50], []byte("zz"), bytes.Repeat([]byte{0xff}, 1000)} {
		for _, ct := range []string{"application/octet-stream", "text/plain", "application/json"} {
			r, err := srv.Do(ctx, client, http.MethodPost, "/v1/blocks", body, ct, srv.Token)
			if err != nil || r.Status >= 500 || r.Status == 200 {
				t.Fatalf("POST bad body (%s): %v %d %s", ct, err, r.Status, r.Body)
			}
			bodies = append(bodies, r.Body)
		}
	}
	if state() != before {
		t.Fatal("bad inputs changed the chainstate")
	}
	for _, b := range bodies {
		for _, leak := range []string{dir, filepath.Base(dir), os.TempDir() + "/", srv.Token} {
			if bytes.Contains(b, []byte(leak)) {
				t.Fatalf("an answer reveals %q: %.300s", leak, b)
			}
		}
	}
	if strings.Contains(srv.Stderr.String(), "panic") {
		t.Fatalf("server log mentions a panic:\n%s", srv.Stderr)
	}
	if err := srv.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".cookie")); !os.IsNotExist(err) {
		t.Fatalf("cookie left after a clean stop: %v", err)
	}

	// Non-loopback listen addresses are refused without --allow-remote.
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.0.2.1:8335", "example.com:8335"} {
		cmd := exec.Command(bin, "serve", "--network", "regtest", "--datadir", dir, "--listen", addr)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "--allow-remote") {
			t.Fatalf("--listen %s: %v\n%s", addr, err, out)
		}
	}
	// With the opt-in it starts (on an unspecified address; stopped at once).
	srv, err = StartServer(bin, dir, "--network", "regtest", "--listen", "0.0.0.0:0", "--allow-remote", "--log-level", "warn")
	if err != nil {
		t.Fatalf("--allow-remote: %v", err)
	}
	if err := srv.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
}
