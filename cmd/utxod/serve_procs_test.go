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

// TestServeAPIProcs: --api-procs N runs the server with GOMAXPROCS = cores
// + N unless GOMAXPROCS is set in the environment; a negative N is a usage
// error.
func TestServeAPIProcs(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"serve", "--api-procs", "-1"}, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "--api-procs") {
		t.Errorf("negative --api-procs: %d %s", code, stderr.String())
	}
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in the environment, which the flag leaves alone")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{}, 1)
	done := make(chan int, 1)
	go func() {
		done <- serve(ctx, []string{"--listen", "127.0.0.1:0", "--datadir", filepath.Join(t.TempDir(), "data"), "--network", "regtest",
			"--log-level", "warn", "--api-procs", "3"}, io.Discard, io.Discard, func(string, string) { ready <- struct{}{} })
	}()
	select {
	case <-ready:
	case code := <-done:
		t.Fatalf("serve exited %d", code)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	if got, want := runtime.GOMAXPROCS(0), runtime.NumCPU()+3; got != want {
		t.Errorf("GOMAXPROCS %d with --api-procs 3, want %d", got, want)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d", code)
	}
}
