package mainnetgen

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// buildUtxod compiles cmd/utxod (pure Go stores) into dir.
func buildUtxod(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		t.Fatal("not inside the utxod module")
	}
	bin := filepath.Join(dir, "utxod")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/utxod")
	cmd.Dir = filepath.Dir(mod)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/utxod: %v\n%s", err, out)
	}
	return bin
}

// runJSON runs bin with args and decodes its JSON answer.
func runJSON(t *testing.T, bin string, args ...string) map[string]any {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("utxod %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	var m map[string]any
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("utxod %s: %v\n%s", strings.Join(args, " "), err, stdout.String())
	}
	return m
}

// compareDigests checks every digest utxod printed against expect.json.
func compareDigests(t *testing.T, what string, got map[string]any, e *Expect, baseKey, heightKey string) {
	t.Helper()
	want := map[string]string{
		baseKey:             e.BaseHash,
		heightKey:           strconv.Itoa(int(e.Height)),
		"txouts":            strconv.FormatUint(e.TxOuts, 10),
		"transactions":      strconv.FormatUint(e.Transactions, 10),
		"bogosize":          strconv.FormatUint(e.BogoSize, 10),
		"total_amount_sat":  strconv.FormatUint(e.TotalAmount, 10),
		"total_amount":      e.TotalBTC,
		"hash_serialized_3": e.HashSerialized3,
		"muhash":            e.MuHash,
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: no %s in %v", what, k, got)
			continue
		}
		if s := strings.TrimSpace(toString(g)); s != w {
			t.Errorf("%s: %s = %s, expect.json %s", what, k, s, w)
		}
	}
}

func toString(v any) string {
	switch x := v.(type) {
	case json.Number:
		return x.String()
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestUtxodAgrees builds utxod and runs it over the generated 200k-coin
// set: snapshot verify (--expect-hash), snapshot load into a pebble datadir
// with the header chain, then chainstate --hash-type hash_serialized_3;
// every figure must equal expect.json's, computed by the generator alone.
// A mainnet-magic file is verified too (its height given with --height).
func TestUtxodAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("builds utxod")
	}
	dir, e := shared(t)
	tmp := t.TempDir()
	bin := buildUtxod(t, tmp)
	snap, headers := filepath.Join(dir, SnapshotFile), filepath.Join(dir, HeadersFile)

	v := runJSON(t, bin, "snapshot", "verify", snap, "--expect-hash", e.HashSerialized3, "--height", strconv.Itoa(int(e.Height)), "--json")
	compareDigests(t, "snapshot verify", v, e, "base_hash", "base_height")
	if toString(v["matches"]) != "true" || toString(v["canonical"]) != "true" || toString(v["coins_count"]) != strconv.FormatUint(e.Coins, 10) {
		t.Errorf("snapshot verify: matches %v, canonical %v (%v), coins_count %v", v["matches"], v["canonical"], v["non_canonical"], v["coins_count"])
	}

	datadir := filepath.Join(tmp, "datadir")
	l := runJSON(t, bin, "snapshot", "load", snap, "--datadir", datadir, "--backend", "pebble", "--network", "regtest",
		"--expect-hash", e.HashSerialized3, "--headers", headers, "--json", "--log-level", "warn")
	compareDigests(t, "snapshot load", l, e, "base_hash", "base_height")

	c := runJSON(t, bin, "chainstate", "--datadir", datadir, "--backend", "pebble", "--network", "regtest",
		"--hash-type", "hash_serialized_3", "--json", "--log-level", "warn")
	compareDigests(t, "chainstate", c, e, "bestblock", "height")

	mainDir := filepath.Join(tmp, "main")
	me, err := Generate(Config{Coins: 50_000, Seed: 11, Network: "main", Height: 880_000}, mainDir)
	if err != nil {
		t.Fatal(err)
	}
	mv := runJSON(t, bin, "snapshot", "verify", filepath.Join(mainDir, SnapshotFile), "--expect-hash", me.HashSerialized3,
		"--height", "880000", "--json")
	compareDigests(t, "snapshot verify (main)", mv, me, "base_hash", "base_height")
	if toString(mv["network"]) != "main" {
		t.Errorf("network %v", mv["network"])
	}
}
