package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"utxod/internal/cli/clitest"
	"utxod/params"
	"utxod/testkit/chaingen"
	"utxod/wire"
)

func TestCLI(t *testing.T) {
	data, sum, err := chaingen.Generate(chaingen.Config{Profile: chaingen.ProfileEarly, Seed: 5, Blocks: 120, MaxTxs: 5})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.dat")
	if err := os.WriteFile(good, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The default datadir is a temporary directory removed at exit.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--network", "regtest", "--json", good}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var s map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	for _, k := range []string{"blocks", "txs", "inputs", "height", "tip", "wall_seconds"} {
		if _, ok := s[k]; !ok {
			t.Fatalf("no %q in %s", k, stdout.String())
		}
	}
	if s["tip"] != sum.Tip.String() || int64(s["blocks"].(float64)) != sum.Blocks || int64(s["inputs"].(float64)) != sum.Inputs {
		t.Fatalf("summary %v, generator %+v", s, sum)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("temporary datadir left behind: %v", left)
	}

	// A transaction byte flipped in the last block: btcd rejects it (bad
	// merkle root), exit 1 with the block's hash and btcd's error.
	blocks, err := wire.ReadAllBlocks(bytes.NewReader(data), params.RegTest().Magic)
	if err != nil {
		t.Fatal(err)
	}
	last := blocks[len(blocks)-1]
	last[len(last)-10] ^= 0xff
	var bad bytes.Buffer
	magic := params.RegTest().Magic
	for _, raw := range blocks {
		bad.Write(magic[:])
		bad.Write([]byte{byte(len(raw)), byte(len(raw) >> 8), byte(len(raw) >> 16), byte(len(raw) >> 24)})
		bad.Write(raw)
	}
	badPath := filepath.Join(dir, "bad.dat")
	if err := os.WriteFile(badPath, bad.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	code := run(context.Background(), []string{"--network", "regtest", "--datadir", filepath.Join(dir, "d"), badPath}, &stdout, &stderr)
	hash := wire.DoubleSHA256(last[:wire.HeaderSize]).String()
	if code != 1 || !strings.Contains(stderr.String(), "block "+hash) || !strings.Contains(stderr.String(), "rejected by btcd: ") ||
		!strings.Contains(stderr.String(), "merkle") {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}

	if code := run(context.Background(), []string{"--network", "nonet", good}, &stdout, &stderr); code != 2 {
		t.Fatalf("unknown network: exit %d", code)
	}
	if code := run(context.Background(), nil, &stdout, &stderr); code != 2 {
		t.Fatalf("no files: exit %d", code)
	}
	// --checkpoint at the tip: the summary names it.
	stdout.Reset()
	if code := run(context.Background(), []string{"--network", "regtest", "--json", "--checkpoint", fmt.Sprintf("%d:%s", sum.Height, sum.Tip), good}, &stdout, &stderr); code != 0 {
		t.Fatalf("--checkpoint: exit %d: %s", code, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if s["checkpoints"] != 1.0 || s["checkpoint_height"] != float64(sum.Height) || s["checkpoint_hash"] != sum.Tip.String() {
		t.Fatalf("summary %v", s)
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"--network", "regtest", "--checkpoint", "12", good}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--checkpoint") {
		t.Fatalf("bad --checkpoint: exit %d: %s", code, stderr.String())
	}
}

func TestConventions(t *testing.T) {
	clitest.Conventions(t, "btcdreplay", run)
}
