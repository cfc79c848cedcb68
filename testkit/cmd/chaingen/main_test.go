package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"utxod/internal/cli/clitest"
)

func TestRunCLI(t *testing.T) {
	dir := t.TempDir()
	gen := func(name string, extra ...string) ([]byte, map[string]any) {
		out := filepath.Join(dir, name)
		args := append([]string{"--profile", "modern", "--blocks", "130", "--seed", "3", "--max-txs", "8", "--reorgs", "1", "--out", out, "--json"}, extra...)
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		if !strings.Contains(stderr.String(), "inputs/s") {
			t.Fatalf("no summary on stderr: %q", stderr.String())
		}
		var s map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if int(s["bytes"].(float64)) != len(data) || !bytes.Equal(data[:4], []byte{0xfa, 0xbf, 0xb5, 0xda}) {
			t.Fatalf("summary %v, file %d bytes starting %x", s, len(data), data[:4])
		}
		return data, s
	}
	a, sa := gen("a.dat")
	b, sb := gen("b.dat", "--workers", "1")
	if !bytes.Equal(a, b) || sa["tip"] != sb["tip"] {
		t.Fatal("same flags, different output")
	}
	if sa["height"].(float64) != 130 || sa["reorgs"].(float64) != 1 || sa["stale_blocks"].(float64) < 1 {
		t.Fatalf("summary %v", sa)
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"--profile", "early", "--blocks", "5", "--out", filepath.Join(dir, "x"), "--network", "main"}, &bytes.Buffer{}, &stderr); code != 2 {
		t.Fatalf("mainnet accepted (exit %d)", code)
	}
	if code := run(context.Background(), []string{"--profile", "early", "--out", filepath.Join(dir, "x")}, &bytes.Buffer{}, &stderr); code != 2 {
		t.Fatalf("no --blocks/--target-inputs accepted (exit %d)", code)
	}
}

func TestConventions(t *testing.T) {
	clitest.Conventions(t, "chaingen", run)
}
