package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"utxod/internal/cli/clitest"
)

// A tiny generated chain connected into a fresh pebble store: each
// subcommand prints one JSON object; bad invocations exit 2.
func TestCLI(t *testing.T) {
	dir := t.TempDir()
	chain := filepath.Join(dir, "g.dat")
	run1 := func(args ...string) map[string]any {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
			t.Fatalf("%q: %v: %s", args, err, stdout.String())
		}
		return m
	}
	gen := run1("gen", "--blocks", "120", "--txs-per-block", "5", "--seed", "1", "--out", chain)
	conn := run1("connect", "--backend", "pebble", "--datadir", filepath.Join(dir, "d"), "--cache-mb", "16", chain)
	// The generator's tip is the one the store connected up to.
	if gen["blocks"].(float64) != 120 || conn["height"].(float64) != 120 || gen["utxos"] != conn["utxos"] {
		t.Fatalf("gen %v\nconnect %v", gen, conn)
	}
	for _, args := range [][]string{nil, {"nosuch"}, {"size", "--nosuchflag"}, {"connect", "--log-level", "loud"}} {
		var stderr bytes.Buffer
		if code := run(context.Background(), args, &bytes.Buffer{}, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

func TestConventions(t *testing.T) {
	for _, sub := range []string{"gen", "connect", "sample", "read", "size"} {
		clitest.Conventions(t, "storebench", run, sub)
	}
	clitest.Conventions(t, "storebench", run)
}
