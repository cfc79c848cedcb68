package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"utxod/params"
	"utxod/testkit/corerest"
	"utxod/testkit/mainnetgen"
	"utxod/wire"
)

// TestSnapshotLoadIndexAndRESTHeaders: snapshot load with the headers
// fetched from a node's REST interface and --index scripthash builds a
// datadir whose index utxod index verify accepts, whose block index is the
// same as with the headers file, and whose dump is the loaded file; a
// source that does not reach the base leaves no datadir.
func TestSnapshotLoadIndexAndRESTHeaders(t *testing.T) {
	gen := t.TempDir()
	exp, err := mainnetgen.Generate(mainnetgen.Config{Coins: 20000, Seed: 5, Network: "regtest", Height: 2300}, gen)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(gen, "headers.dat"))
	if err != nil {
		t.Fatal(err)
	}
	src := corerest.New(params.RegTest())
	for off := 0; off < len(raw); off += wire.HeaderSize {
		if err := src.Add(raw[off : off+wire.HeaderSize]); err != nil {
			t.Fatal(err)
		}
	}
	src.RevealAll()
	srv := httptest.NewServer(src)
	defer srv.Close()
	file := filepath.Join(gen, "utxo.dat")
	root := t.TempDir()
	load := func(dir, headers string, extra ...string) (int, string, string) {
		args := append([]string{"snapshot", "load", file, "--datadir", dir, "--backend", "pebble", "--network", "regtest",
			"--expect-hash", exp.HashSerialized3, "--headers", headers, "--log-level", "warn"}, extra...)
		return runCLI(t, nil, args...)
	}
	viaURL, viaFile := filepath.Join(root, "url"), filepath.Join(root, "file")
	if code, out, errs := load(viaURL, srv.URL, "--index", "scripthash"); code != 0 || !strings.Contains(out, "genesis to the base (2300)") {
		t.Fatalf("load with REST headers: %d %q %q", code, out, errs)
	}
	if n := src.Requests("headers"); n != 2 {
		t.Errorf("%d header requests for 2,300 headers, want 2", n)
	}
	if code, out, errs := runCLI(t, nil, "index", "verify", "--datadir", viaURL, "--log-level", "warn"); code != 0 || !strings.Contains(out, "scripthash index verified: 20000 rows at height 2300") {
		t.Fatalf("index verify: %d %q %q", code, out, errs)
	}
	if code, _, errs := load(viaFile, filepath.Join(gen, "headers.dat")); code != 0 {
		t.Fatalf("load with the headers file: %d %q", code, errs)
	}
	for _, dir := range []string{viaURL, viaFile} {
		dump := filepath.Join(root, filepath.Base(dir)+".dat")
		if code, _, errs := runCLI(t, nil, "snapshot", "dump", "--network", "regtest", "--datadir", dir, "--log-level", "warn", "-o", dump); code != 0 {
			t.Fatalf("dump %s: %d %q", dir, code, errs)
		}
		a, _ := os.ReadFile(dump)
		b, _ := os.ReadFile(file)
		if string(a) != string(b) {
			t.Fatalf("the dump of %s differs from the loaded file", dir)
		}
	}
	// Both datadirs serve blocks from base+1: same tip, same best header.
	for _, dir := range []string{viaURL, viaFile} {
		code, out, errs := runCLI(t, nil, "chainstate", "--network", "regtest", "--datadir", dir, "--backend", "pebble", "--hash-type", "none")
		if code != 0 || !strings.Contains(out, exp.BaseHash) {
			t.Fatalf("chainstate %s: %d %q %q", dir, code, out, errs)
		}
	}

	// A source whose chain stops short of the base: nothing is left.
	short := corerest.New(params.RegTest())
	for off := 0; off < 1000*wire.HeaderSize; off += wire.HeaderSize {
		if err := short.Add(raw[off : off+wire.HeaderSize]); err != nil {
			t.Fatal(err)
		}
	}
	short.RevealAll()
	srv2 := httptest.NewServer(short)
	defer srv2.Close()
	bad := filepath.Join(root, "short")
	if code, _, errs := load(bad, srv2.URL, "--index", "scripthash"); code != 1 || !strings.Contains(errs, "does not reach") {
		t.Fatalf("load from a short chain: %d %q", code, errs)
	}
	for _, d := range []string{bad, bad + ".snapshot-loading"} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Fatalf("%s left behind: %v", d, err)
		}
	}
}
