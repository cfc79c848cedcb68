package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"utxod/backends"
	"utxod/scripthash"
	"utxod/store/kvstore"
	"utxod/testkit/chaingen"
	"utxod/utxo"
	"utxod/wire"
)

// writeIndexChain writes a generated regtest chain with reorgs in Core's
// block-file framing.
func writeIndexChain(t *testing.T) string {
	t.Helper()
	data, _, err := chaingen.Generate(chaingen.Config{Profile: chaingen.ProfileModern, Seed: 7, Blocks: 120, Reorgs: 2, MaxTxs: 30})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "chain.dat")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// datadirScripts returns the distinct output scripts of a closed datadir.
func datadirScripts(t *testing.T, dir string) [][]byte {
	t.Helper()
	kv, err := backends.Open("pebble", dir, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	seen := map[string]bool{}
	var out [][]byte
	if err := kvstore.ScanRecords(kv, nil, func(_ wire.Hash, outs []utxo.IndexedCoin) error {
		for _, o := range outs {
			if !seen[string(o.Coin.Script)] {
				seen[string(o.Coin.Script)] = true
				out = append(out, bytes.Clone(o.Coin.Script))
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// serveAnswers starts serve on dir (extra flags appended), asks the
// scripthash and scan routes about scripts and returns the bodies and
// serve's log.
func serveAnswers(t *testing.T, dir string, scripts [][]byte, extra ...string) ([]string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan int, 1)
	var stderr bytes.Buffer
	args := append([]string{"--listen", "127.0.0.1:0", "--datadir", dir, "--network", "regtest", "--utxos-limit", "0"}, extra...)
	go func() { done <- serve(ctx, args, io.Discard, &stderr, func(addr, _ string) { ready <- addr }) }()
	var addr string
	select {
	case addr = <-ready:
	case code := <-done:
		t.Fatalf("serve exited %d: %s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	var bodies []string
	do := func(req *http.Request) {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", req.Method, req.URL, resp.StatusCode, b)
		}
		bodies = append(bodies, string(b))
	}
	var descs []string
	for _, s := range scripts {
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/scripthash/"+scripthash.Of(s).String()+"/utxo", nil)
		do(req)
		req, _ = http.NewRequest("GET", "http://"+addr+"/v1/scripthash/"+scripthash.Of(s).String()+"/utxos?limit=2", nil)
		do(req)
		descs = append(descs, `"raw(`+hex.EncodeToString(s)+`)"`)
	}
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/scan", strings.NewReader(`{"action":"start","scanobjects":[`+strings.Join(descs, ",")+`]}`))
	req.Header.Set("Content-Type", "application/json")
	do(req)
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exit %d: %s", code, stderr.String())
	}
	return bodies, stderr.String()
}

// TestIndexCommands: import --index scripthash on a new datadir; the flag
// refused on an existing datadir without the index (naming the build
// command); utxod index build on it, refused a second time; serve answers
// the address routes from either index (without the flag: the datadir
// keeps it) exactly as a scan of a datadir without one; utxod index drop.
func TestIndexCommands(t *testing.T) {
	chain := writeIndexChain(t)
	root := t.TempDir()
	withIx, built, plain := filepath.Join(root, "with"), filepath.Join(root, "built"), filepath.Join(root, "plain")
	for _, c := range []struct {
		dir  string
		args []string
	}{{withIx, []string{"--index", "scripthash"}}, {built, nil}, {plain, nil}} {
		args := append([]string{"import", "--network", "regtest", "--datadir", c.dir, "--log-level", "warn"}, c.args...)
		if code, _, errs := runCLI(t, nil, append(args, chain)...); code != 0 {
			t.Fatalf("import %v: %d %s", c.args, code, errs)
		}
	}
	code, _, errs := runCLI(t, nil, "import", "--network", "regtest", "--datadir", built, "--index", "scripthash", chain)
	if code == 0 || !strings.Contains(errs, "utxod index build --datadir "+built) {
		t.Fatalf("--index on a datadir without it: %d %q", code, errs)
	}
	oneLine(t, errs)
	if code, out, errs := runCLI(t, nil, "index", "build", "--datadir", built, "--log-level", "warn"); code != 0 || !strings.Contains(out, "scripthash index built") {
		t.Fatalf("index build: %d %q %q", code, out, errs)
	}
	for _, dir := range []string{withIx, built} {
		if code, out, errs := runCLI(t, nil, "index", "verify", "--datadir", dir, "--log-level", "warn"); code != 0 || !strings.Contains(out, "scripthash index verified") {
			t.Fatalf("index verify %s: %d %q %q", dir, code, out, errs)
		}
	}
	if code, _, errs := runCLI(t, nil, "index", "verify", "--datadir", plain); code != 1 || !strings.Contains(errs, "no scripthash index") {
		t.Fatalf("verify without an index: %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, nil, "index", "build", "--datadir", built); code != 1 || !strings.Contains(errs, "already has a scripthash index") {
		t.Fatalf("second build: %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, nil, "index", "build", "--datadir", filepath.Join(root, "none")); code != 1 || !strings.Contains(errs, "no datadir") {
		t.Fatalf("build without a datadir: %d %q", code, errs)
	}
	for _, args := range [][]string{{"index", "build"}, {"index", "build", "--datadir", built, "extra"}, {"index", "drop", "--bogus"}, {"index", "frobnicate"}, {"index"}} {
		code, out, errs := runCLI(t, nil, args...)
		if code != 2 || out != "" {
			t.Errorf("%v: exit %d stdout %q", args, code, out)
		}
		oneLine(t, errs)
	}

	scripts := datadirScripts(t, plain)
	if len(scripts) < 10 {
		t.Fatalf("only %d scripts", len(scripts))
	}
	scripts = append(scripts[:20], []byte{0x6a, 0x42}) // and one no coin pays
	want, log := serveAnswers(t, plain, scripts)
	if strings.Contains(log, "scripthash index on") {
		t.Fatal("the plain datadir has an index")
	}
	for _, dir := range []string{withIx, built} {
		got, log := serveAnswers(t, dir, scripts, "--log-level", "info")
		if !strings.Contains(log, "scripthash index on") {
			t.Fatalf("%s: serve did not open the index: %s", dir, log)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: answer %d\n%s\nwant (scan)\n%s", dir, i, got[i], want[i])
			}
		}
	}
	if code, out, errs := runCLI(t, nil, "index", "drop", "--datadir", built, "--log-level", "warn"); code != 0 || !strings.Contains(out, "dropped") {
		t.Fatalf("drop: %d %q %q", code, out, errs)
	}
	if _, log := serveAnswers(t, built, scripts[:1], "--log-level", "info"); strings.Contains(log, "scripthash index on") {
		t.Fatal("the index is still on after drop")
	}
}
