package mainnetgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	btcwire "github.com/btcsuite/btcd/wire/v2"
)

var (
	utxodOnce sync.Once
	utxodBin  string
	utxodErr  error
)

// buildUtxod compiles cmd/utxod (pure Go stores) once per test run, into
// the shared set's directory.
func buildUtxod(t *testing.T) string {
	t.Helper()
	dir, _ := shared(t)
	utxodOnce.Do(func() { utxodBin, utxodErr = compileUtxod(filepath.Join(dir, "bin")) })
	if utxodErr != nil {
		t.Fatal(utxodErr)
	}
	return utxodBin
}

func compileUtxod(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the utxod module")
	}
	bin := filepath.Join(dir, "utxod")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/utxod")
	cmd.Dir = filepath.Dir(mod)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/utxod: %w\n%s", err, out)
	}
	return bin, nil
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
	bin := buildUtxod(t)
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

// TestBlocksConnect: the generated blocks, real signatures over old and
// recent coins, connect through utxod import on the loaded snapshot with
// every script verified (regtest has no assume-valid; the JSON says none
// was assumed), and the chainstate after them equals the generator's own
// figures (expect.json "blocks.after", computed from a second pass over the
// set, not by the product). A copy with one corrupted signature in its
// second block is refused there, the first block connected.
func TestBlocksConnect(t *testing.T) {
	if testing.Short() {
		t.Skip("builds utxod")
	}
	tmp := t.TempDir()
	bin := buildUtxod(t)
	cfg := Config{Coins: 30_000, Seed: 5, Height: 3_000, Blocks: BlockConfig{Old: 2, Recent: 2, Txs: 150}}
	dir := filepath.Join(tmp, "gen")
	e, err := Generate(cfg, dir)
	if err != nil {
		t.Fatal(err)
	}
	b := e.Blocks
	if b == nil || len(b.List) != 4 || b.TipHeight != 3_004 {
		t.Fatalf("blocks: %+v", b)
	}
	for i, bl := range b.List {
		if bl.Txs != 151 || bl.Inputs != 300 {
			t.Errorf("block %d: %d txs, %d inputs", i, bl.Txs, bl.Inputs)
		}
		if (bl.Kind == "old") != (bl.OldInputs == bl.Inputs) || bl.Kind == "recent" && bl.OldInputs > bl.Inputs/3 {
			t.Errorf("block %d (%s): %d of %d inputs old", i, bl.Kind, bl.OldInputs, bl.Inputs)
		}
	}
	checkSpends(t, dir, b)
	load := func(datadir string) {
		runJSON(t, bin, "snapshot", "load", filepath.Join(dir, SnapshotFile), "--datadir", datadir, "--backend", "pebble",
			"--network", "regtest", "--expect-hash", e.HashSerialized3, "--headers", filepath.Join(dir, HeadersFile), "--json", "--log-level", "warn")
	}
	datadir := filepath.Join(tmp, "datadir")
	load(datadir)
	got := runJSON(t, bin, "import", "--network", "regtest", "--datadir", datadir, "--json", "--log-level", "warn", filepath.Join(dir, BlocksFile))
	after := *e
	after.Digests, after.BaseHash, after.Height = b.After, b.TipHash, b.TipHeight
	after.TotalBTC = fmt.Sprintf("%d.%08d", b.After.TotalAmount/100_000_000, b.After.TotalAmount%100_000_000)
	compareDigests(t, "import blocks.dat", got, &after, "bestblock", "height")
	if got["assumed_valid_height"] != nil {
		t.Errorf("scripts assumed valid up to %v", got["assumed_valid_height"])
	}
	if e.Blocks.After.TxOuts == e.TxOuts && e.Blocks.After.HashSerialized3 == e.HashSerialized3 {
		t.Error("the blocks left the set as it was")
	}

	cfg.Blocks.badSig = 2
	badDir := filepath.Join(tmp, "bad")
	be, err := Generate(cfg, badDir)
	if err != nil {
		t.Fatal(err)
	}
	if be.HashSerialized3 != e.HashSerialized3 || be.Blocks.List[0].Hash != b.List[0].Hash || be.Blocks.List[1].Hash == b.List[1].Hash {
		t.Fatal("the corrupted copy should differ from the second block on")
	}
	badData := filepath.Join(tmp, "bad-datadir")
	dir = badDir
	load(badData)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "import", "--network", "regtest", "--datadir", badData, "--json", "--log-level", "warn", filepath.Join(badDir, BlocksFile))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("import with a bad signature: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	msg := stderr.String()
	if !strings.Contains(msg, be.Blocks.List[1].Hash) || !strings.Contains(msg, "block-script-verify-flag-failed") {
		t.Errorf("the refusal names neither the block nor the script failure:\n%s", msg)
	}
	c := runJSON(t, bin, "chainstate", "--datadir", badData, "--network", "regtest", "--json", "--log-level", "warn")
	if toString(c["height"]) != strconv.Itoa(int(be.Blocks.List[0].Height)) || toString(c["bestblock"]) != be.Blocks.List[0].Hash {
		t.Errorf("after the refusal the tip is %v at %v, want the first block", c["bestblock"], c["height"])
	}
}

// checkSpends reads blocks.dat: old blocks spend coins spread over the
// whole txid space (about half below its middle), recent blocks mostly
// outputs of the blocks before them.
func checkSpends(t *testing.T, dir string, b *BlocksExpect) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, BlocksFile))
	if err != nil {
		t.Fatal(err)
	}
	made := map[[32]byte]bool{}
	for _, info := range b.List {
		var blk btcwire.MsgBlock
		if err := blk.Deserialize(bytes.NewReader(raw[info.Offset : info.Offset+int64(info.Bytes)])); err != nil {
			t.Fatal(err)
		}
		if got := blk.BlockHash().String(); got != info.Hash {
			t.Fatalf("block at %d: hash %s, expect.json %s", info.Offset, got, info.Hash)
		}
		var low, fromBlocks, n int
		for _, tx := range blk.Transactions[1:] {
			for _, in := range tx.TxIn {
				n++
				if in.PreviousOutPoint.Hash[0] < 0x80 {
					low++
				}
				if made[in.PreviousOutPoint.Hash] {
					fromBlocks++
				}
			}
		}
		switch {
		case info.Kind == "old" && (fromBlocks != 0 || low*100 < n*35 || low*100 > n*65):
			t.Errorf("old block %d: %d of %d inputs below the middle of the txid space, %d from the blocks", info.Height, low, n, fromBlocks)
		case info.Kind == "recent" && fromBlocks*100 < n*80:
			t.Errorf("recent block %d: %d of %d inputs from the blocks before", info.Height, fromBlocks, n)
		}
		for _, tx := range blk.Transactions {
			made[tx.TxHash()] = true
		}
	}
}
