package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestServeAPIProcs: the server runs with as many Go processors again as
// there are cores (GOMAXPROCS twice the cores) unless GOMAXPROCS is set in
// the environment; --api-procs, the experiment's knob, is gone.
func TestServeAPIProcs(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"serve", "--api-procs", "3"}, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "api-procs") {
		t.Errorf("--api-procs: %d %s", code, stderr.String())
	}
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in the environment, which serve leaves alone")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{}, 1)
	done := make(chan int, 1)
	go func() {
		done <- serve(ctx, []string{"--listen", "127.0.0.1:0", "--datadir", filepath.Join(t.TempDir(), "data"), "--network", "regtest",
			"--log-level", "warn"}, io.Discard, io.Discard, func(string, string) { ready <- struct{}{} })
	}()
	select {
	case <-ready:
	case code := <-done:
		t.Fatalf("serve exited %d", code)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	if got, want := runtime.GOMAXPROCS(0), 2*runtime.NumCPU(); got != want {
		t.Errorf("GOMAXPROCS %d, want %d", got, want)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d", code)
	}
}
