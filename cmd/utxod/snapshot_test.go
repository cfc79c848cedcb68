package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dumpSample imports the mainnet sample into dir/src and dumps its UTXO
// snapshot to dir/utxo.dat (dump's extra flags appended), returning the
// datadir, the file and the dump's stdout.
func dumpSample(t *testing.T, dir string, extra ...string) (src, file, stdout string) {
	t.Helper()
	src = filepath.Join(dir, "src")
	if code, _, errs := runCLI(t, nil, "import", "--datadir", src, "--log-level", "warn", sample); code != 0 {
		t.Fatalf("import: %d %s", code, errs)
	}
	file = filepath.Join(dir, "utxo.dat")
	args := append([]string{"snapshot", "dump", "--datadir", src, "-o", file, "--log-level", "warn"}, extra...)
	code, out, errs := runCLI(t, nil, args...)
	if code != 0 {
		t.Fatalf("dump: %d %s", code, errs)
	}
	return src, file, out
}

// TestSnapshotCLI: import the mainnet sample, dump it, verify it (the
// published digests at 14131; the base is in no table, so verify needs
// --expect-hash for exit 0), load it with the block file as headers, and
// read the loaded datadir's chainstate; bad files exit 1 and build
// nothing.
func TestSnapshotCLI(t *testing.T) {
	ref := referenceAt(t, 14131)
	hs3 := ref["hash_serialized_3"].(string)
	dir := t.TempDir()
	src, file, out := dumpSample(t, dir, "--json")
	var dumped map[string]any
	if err := json.Unmarshal([]byte(out), &dumped); err != nil {
		t.Fatal(err, out)
	}
	if dumped["coins_written"].(float64) != ref["txouts"].(float64) || dumped["base_hash"] != ref["bestblock"] || dumped["base_height"].(float64) != 14131 {
		t.Fatalf("dump result %v", dumped)
	}
	if _, err := os.Stat(file + ".incomplete"); !os.IsNotExist(err) {
		t.Fatal("temporary file left")
	}
	if code, _, errs := runCLI(t, nil, "snapshot", "dump", "--datadir", src, "-o", file, "--log-level", "warn"); code != 1 || !strings.Contains(errs, "already exists") {
		t.Fatalf("dump over an existing file: %d %s", code, errs)
	}

	// verify: the digests; exit 1 without an expected hash, 0 with it.
	code, out, errs := runCLI(t, nil, "snapshot", "verify", file, "--json", "--log-level", "warn")
	if code != 1 || !strings.Contains(errs, "not recognized") {
		t.Fatalf("verify without an expected hash: %d %s", code, errs)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err, out)
	}
	for _, k := range []string{"hash_serialized_3", "muhash", "txouts", "transactions", "bogosize", "total_amount_sat"} {
		if v[k] != ref[k] {
			t.Errorf("verify %s = %v, published %v", k, v[k], ref[k])
		}
	}
	if v["network"] != "main" || v["base_hash"] != ref["bestblock"] || v["canonical"] != true || v["assumeutxo"] != nil || v["matches"] != nil {
		t.Errorf("verify: %v", v)
	}
	if code, out, errs = runCLI(t, nil, "snapshot", "verify", file, "--expect-hash", hs3); code != 0 || !strings.Contains(out, "matches --expect-hash") {
		t.Fatalf("verify --expect-hash: %d %s %s", code, out, errs)
	}
	if code, _, errs = runCLI(t, nil, "snapshot", "verify", file, "--network", "regtest"); code != 1 ||
		!strings.Contains(errs, "The network of the snapshot (main) does not match the network of this node (regtest).") {
		t.Fatalf("verify --network regtest: %d %s", code, errs)
	}

	// load: refused without an expected hash, accepted with it.
	loaded := filepath.Join(dir, "loaded")
	code, _, errs = runCLI(t, nil, "snapshot", "load", file, "--datadir", loaded, "--backend", "pebble", "--log-level", "warn")
	if code != 1 || !strings.Contains(errs, "assumeutxo block hash in snapshot metadata not recognized (hash: "+ref["bestblock"].(string)+"). The following snapshot heights are available: 840000, 880000, 910000, 935000") {
		t.Fatalf("load without --expect-hash: %d %s", code, errs)
	}
	if _, err := os.Stat(loaded); !os.IsNotExist(err) {
		t.Fatal("datadir created by a refused load")
	}
	code, out, errs = runCLI(t, nil, "snapshot", "load", file, "--datadir", loaded, "--backend", "pebble", "--expect-hash", hs3,
		"--headers", sample, "--log-level", "warn")
	if code != 0 || !strings.Contains(out, "blocks from 14132 on connect") {
		t.Fatalf("load: %d %s %s", code, out, errs)
	}
	code, out, errs = runCLI(t, nil, "chainstate", "--datadir", loaded, "--backend", "pebble", "--json", "--hash-type", "hash_serialized_3", "--log-level", "warn")
	if code != 0 {
		t.Fatalf("chainstate: %d %s", code, errs)
	}
	var cs map[string]any
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		t.Fatal(err)
	}
	if cs["hash_serialized_3"] != hs3 || cs["muhash"] != ref["muhash"] || cs["snapshot_base"] != ref["bestblock"] || cs["snapshot_base_height"].(float64) != 14131 {
		t.Fatalf("loaded chainstate: %v", cs)
	}
	// The loaded datadir dumps the same file.
	again := filepath.Join(dir, "again.dat")
	if code, _, errs := runCLI(t, nil, "snapshot", "dump", "--datadir", loaded, "-o", again, "--log-level", "warn"); code != 0 {
		t.Fatalf("dump of the loaded datadir: %d %s", code, errs)
	}
	a, _ := os.ReadFile(file)
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) {
		t.Fatal("dump of the loaded datadir differs")
	}

	// Bad files: exit 1, nothing built.
	good, _ := os.ReadFile(file)
	bad := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	short := bytes.Clone(good)
	binary.LittleEndian.PutUint64(short[43:], binary.LittleEndian.Uint64(short[43:])-1)
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x20
	for _, tc := range []struct {
		file, want string
	}{
		{bad("truncated", good[:len(good)-7]), "Bad snapshot format or truncated snapshot after deserializing"},
		{bad("magic", append([]byte("xtxo"), good[4:]...)), "Invalid UTXO set snapshot magic bytes"},
		{bad("version", append(append(bytes.Clone(good[:5]), 3, 0), good[7:]...)), "Version of snapshot 3 does not match any of the supported versions."},
		{bad("count", short), "Bad snapshot - coins left over after deserializing"},
		{bad("trailing", append(bytes.Clone(good), 0)), "Bad snapshot - coins left over after deserializing 13416 coins"},
		{bad("flipped", flipped), "Bad snapshot"},
	} {
		target := filepath.Join(dir, "bad-"+filepath.Base(tc.file))
		code, _, errs := runCLI(t, nil, "snapshot", "load", tc.file, "--datadir", target, "--backend", "bbolt", "--expect-hash", hs3, "--height", "14131", "--log-level", "warn")
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("load %s: exit %d, %q; want %q", filepath.Base(tc.file), code, errs, tc.want)
		}
		for _, d := range []string{target, target + ".snapshot-loading"} {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				t.Errorf("load %s left %s", filepath.Base(tc.file), d)
			}
		}
		if code, _, _ := runCLI(t, nil, "snapshot", "verify", tc.file, "--expect-hash", hs3); code != 1 {
			t.Errorf("verify %s: exit %d", filepath.Base(tc.file), code)
		}
	}
	// Usage errors exit 2.
	if code, _, _ := runCLI(t, nil, "snapshot"); code != 2 {
		t.Errorf("snapshot without a command: %d", code)
	}
	if code, _, _ := runCLI(t, nil, "snapshot", "load", file); code != 2 {
		t.Errorf("load without --datadir: %d", code)
	}
}
