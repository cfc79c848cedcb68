package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"utxod/bench"
	"utxod/bench/gate"
	"utxod/internal/cli/clitest"
)

// The command end to end on the first 2,001 mainnet blocks: flags, custody,
// report and chart files, a store the binary lacks, pinning, exit statuses.
func TestCLI(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the gate measures Linux rusage")
	}
	if testing.Short() {
		t.Skip("builds utxod and imports 2,001 blocks four times")
	}
	dir := t.TempDir()
	corpus := filepath.Join(dir, "tiny.dat")
	if _, err := bench.WritePrefix("../../../testdata/mainnet/blk_0_to_14131.dat", "main", 2001, corpus); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "utxod")
	if out, err := exec.Command("go", "build", "-o", bin, "utxod/cmd/utxod").CombinedOutput(); err != nil {
		t.Fatalf("go build utxod/cmd/utxod: %v\n%s", err, out)
	}
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, bin) // a relative --control-bin resolves against the gate's directory
	if err != nil || !strings.Contains(rel, "/") {
		rel = bin
	}
	out := filepath.Join(dir, "g", "custody.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--corpus", corpus, "--backends", "pebble, nosuchstore", "--pairs", "1", "--control-bin", rel,
		"--cooldown", "0s", "--pin", "0", "--workdir", dir, "--out", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "verdict: ") || !strings.Contains(stderr.String(), "store=pebble") {
		t.Errorf("stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	}
	var c gate.Custody
	b, _ := os.ReadFile(out)
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Identity.Binaries[gate.Control].SHA256 != c.Identity.Binaries[gate.Candidate].SHA256 || !filepath.IsAbs(c.Identity.Binaries[gate.Control].Path) {
		t.Errorf("binaries %+v", c.Identity.Binaries)
	}
	if c.Harness.Pin.CPUs != "0" || c.Harness.Pin.Method == "none" || c.Stores[0].Status != gate.StoreMeasured || c.Stores[1].Status != gate.StoreUnavailable {
		t.Errorf("harness %+v stores %+v", c.Harness.Pin, c.Stores)
	}
	for _, f := range []string{"custody.md", "custody.svg"} {
		if _, err := os.Stat(filepath.Join(dir, "g", f)); err != nil {
			t.Error(err)
		}
	}
	for _, args := range [][]string{
		{"--corpus", corpus}, // no --out
		{"--corpus", corpus, "--out", out, "--control", "{bin} import {corpus}"}, // no {datadir}
		{"--corpus", corpus, "--out", out, "extra"},
		{"--corpus", corpus, "--out", out, "--env", "GOMEMLIMIT"}, // not KEY=VALUE
	} {
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

func TestConventions(t *testing.T) {
	clitest.Conventions(t, "gate", run)
}
