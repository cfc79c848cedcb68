package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The address routes through the real serve: Esplora's tip on a fresh
// regtest datadir, a scan over the (empty) coin set, and --utxos-limit.
func TestServeAddressRoutes(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"serve", "--utxos-limit", "-1"}, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "--utxos-limit") {
		t.Errorf("negative limit: %d %s", code, stderr.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan int, 1)
	stderr.Reset()
	go func() {
		done <- serve(ctx, []string{"--listen", "127.0.0.1:0", "--datadir", filepath.Join(t.TempDir(), "data"), "--network", "regtest",
			"--log-level", "warn", "--utxos-limit", "3"}, io.Discard, &stderr, func(addr, _ string) { ready <- addr })
	}()
	var addr string
	select {
	case addr = <-ready:
	case code := <-done:
		t.Fatalf("serve exited %d: %s", code, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/api/blocks/tip/height"); code != 200 || body != "0" {
		t.Errorf("tip height: %d %q", code, body)
	}
	// Regtest's genesis hash (Core's chainparams).
	if code, body := get("/api/block-height/0"); code != 200 || body != "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206" {
		t.Errorf("block-height/0: %d %q", code, body)
	}
	if code, body := get("/api/address/bcrt1pfeesnyr2tx/utxo"); code != 200 || body != "[]" {
		t.Errorf("address: %d %q", code, body)
	}
	resp, err := http.Post("http://"+addr+"/v1/scan", "application/json", strings.NewReader(`{"action":"start","scanobjects":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"success":true,"txouts":0,"height":0`) {
		t.Errorf("scan: %d %s", resp.StatusCode, b)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}
