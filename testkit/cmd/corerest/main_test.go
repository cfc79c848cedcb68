package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"utxod/internal/cli/clitest"
)

func TestConventions(t *testing.T) {
	clitest.Conventions(t, "corerest", run)
}

// TestServes starts corerest on the mainnet sample and reads its chaininfo.
func TestServes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--blocks", "../../../testdata/mainnet/blk_0_to_14131.dat", "--listen", "127.0.0.1:0", "--reveal", "101", "--log-level", "warn"}, io.Discard, pw)
		pw.Close()
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "listening on "); ok {
				a, _, _ := strings.Cut(rest, " ")
				addr <- a
			}
		}
	}()
	var base string
	select {
	case base = <-addr:
	case code := <-done:
		t.Fatalf("exit %d", code)
	case <-time.After(30 * time.Second):
		t.Fatal("no address")
	}
	resp, err := http.Get(base + "/rest/chaininfo.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"chain":"main","blocks":100,`) {
		t.Fatalf("chaininfo %s", b)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d after cancel", code)
	}
	if code := run(context.Background(), []string{"--listen", "127.0.0.1:0"}, io.Discard, io.Discard); code != 2 {
		t.Fatalf("no --blocks: exit %d", code)
	}
}
