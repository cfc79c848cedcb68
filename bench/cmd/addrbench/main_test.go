package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"utxod/internal/cli/clitest"
)

func TestConventions(t *testing.T) {
	clitest.Conventions(t, "addrbench", run, "lua")
	clitest.Conventions(t, "addrbench", run, "post")
}

// TestLua: the script rotates over the scripthashes of the first blocks'
// outputs, the genesis coinbase's among them (its script from Core's
// chainparams.cpp, hashed here).
func TestLua(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sh.lua")
	var stdout bytes.Buffer
	code := run(context.Background(), []string{"lua", "--network", "main", "--blocks", "../../../testdata/mainnet/blk_0_to_14131.dat", "--first", "3", "--out", out}, &stdout, io.Discard)
	if code != 0 || strings.TrimSpace(stdout.String()) != "3 scripthashes" {
		t.Fatalf("exit %d, %q", code, stdout.String())
	}
	genesisScript, _ := hex.DecodeString("4104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5fac")
	h := sha256.Sum256(genesisScript)
	lua, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(lua), `"`+hex.EncodeToString(h[:])+`"`) || !strings.Contains(string(lua), "/api/scripthash/") {
		t.Fatalf("script:\n%s", lua)
	}
	if code := run(context.Background(), []string{"lua", "--network", "main", "--blocks", "../../../testdata/mainnet/blk_0_to_14131.dat", "--first", "999999", "--out", out}, io.Discard, io.Discard); code != 1 {
		t.Fatalf("--first past the file: exit %d", code)
	}
}
