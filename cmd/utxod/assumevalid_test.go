package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/params"
	"utxod/testkit/blockgen"
	"utxod/validate"
	"utxod/wire"
)

// A regtest chain whose block 102 spends a coinbase with a corrupted
// signature (amounts right), under 2017 more blocks: with assume-valid at
// the tip its scripts are skipped (2017 × 600 s of regtest work is more than
// two weeks), with --assume-valid 0 it is refused.
const (
	avBad = 102
	avTip = avBad + 2017
)

func writeAVChain(t *testing.T) (path string, tip wire.Hash) {
	t.Helper()
	c, err := blockgen.NewChain(params.RegTest())
	if err != nil {
		t.Fatal(err)
	}
	key := blockgen.NewKey("utxod import assume-valid")
	magic := params.RegTest().Magic
	var out []byte
	nodes := []*blockgen.Node{c.Genesis}
	n := c.Genesis
	for h := int32(1); h <= avTip; h++ {
		tpl := c.Template(n, key.P2PKH())
		if h == avBad {
			cb := nodes[1].Block.Transactions[0]
			tx := blockgen.Spend([]btcwire.OutPoint{blockgen.Outpoint(cb, 0)}, blockgen.Out(cb.TxOut[0].Value-1000, blockgen.OpTrue))
			if err := key.SignP2PKH(tx, 0, cb.TxOut[0].PkScript); err != nil {
				t.Fatal(err)
			}
			tx.TxIn[0].SignatureScript[10] ^= 1
			tpl.AddTx(tx)
			tpl.Coinbase().TxOut[0].Value += 1000
		}
		n = tpl.Finish()
		nodes = append(nodes, n)
		out = append(out, magic[:]...)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(n.Raw)))
		out = append(out, n.Raw...)
	}
	path = filepath.Join(t.TempDir(), "av.dat")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, n.Hash
}

func TestImportAssumeValid(t *testing.T) {
	path, tip := writeAVChain(t)
	// Regtest work is 2 a block: the best header (the tip) has 2 × (avTip+1).
	bestWork := new(big.Int).Mul(validate.CalcWork(params.RegTest().PowLimitBits), big.NewInt(avTip+1))
	const evalFalse = "block-script-verify-flag-failed (Script evaluated without error but finished with a false/empty top stack element)"
	for _, c := range []struct {
		name    string
		args    []string
		env     string
		code    int
		assumed any // assumed_valid_height in the JSON
		reject  string
	}{
		{"assume-valid at the tip", []string{"--assume-valid", tip.String()}, "", 0, float64(avBad), ""},
		{"from the environment", nil, tip.String(), 0, float64(avBad), ""},
		{"0x and leading zeros dropped", []string{"--assume-valid", "0x" + strings.TrimLeft(tip.String(), "0")}, "", 0, float64(avBad), ""},
		{"min chain work met", []string{"--assume-valid", tip.String(), "--min-chain-work", bestWork.Text(16)}, "", 0, float64(avBad), ""},
		{"assume-valid 0", []string{"--assume-valid", "0"}, tip.String(), 1, nil, evalFalse},
		{"regtest default: none", nil, "", 1, nil, evalFalse},
		{"min chain work not met", []string{"--assume-valid", tip.String(), "--min-chain-work", new(big.Int).Add(bestWork, big.NewInt(1)).Text(16)}, "", 1, nil, evalFalse},
		{"bad hash", []string{"--assume-valid", "xyz"}, "", 2, nil, "--assume-valid"},
		{"bad work", []string{"--assume-valid", tip.String(), "--min-chain-work", "0xzz"}, "", 2, nil, "--min-chain-work"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("UTXOD_ASSUME_VALID", c.env)
			}
			var out, errb bytes.Buffer
			args := append([]string{"--network", "regtest", "--json", "--log-level", "warn"}, c.args...)
			code := cmdImport(append(args, path), &out, &errb)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, errb.String())
			}
			if c.code != 0 {
				if !strings.Contains(errb.String(), c.reject) {
					t.Fatalf("stderr lacks %q: %s", c.reject, errb.String())
				}
				if c.code == 1 && !strings.Contains(errb.String(), fmt.Sprintf("height %d rejected: %s", avBad, c.reject)) {
					t.Fatalf("stderr: %s", errb.String())
				}
				return
			}
			var got map[string]any
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("%v: %s", err, out.String())
			}
			if got["height"] != float64(avTip) || got["assume_valid"] != tip.String() || got["assumed_valid_height"] != c.assumed {
				t.Fatalf("height %v assume_valid %v assumed_valid_height %v", got["height"], got["assume_valid"], got["assumed_valid_height"])
			}
		})
	}
}

// TestImportThenServeReportsAssumed: a datadir imported with assume-valid
// reports the assumed height on GET /v1/chainstate when served later, with
// assume_valid null when the server runs with --assume-valid 0.
func TestImportThenServeReportsAssumed(t *testing.T) {
	path, tip := writeAVChain(t)
	datadir := filepath.Join(t.TempDir(), "data")
	var out, errb bytes.Buffer
	if code := cmdImport([]string{"--network", "regtest", "--datadir", datadir, "--log-level", "warn", "--assume-valid", tip.String(), path}, &out, &errb); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errb.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan int, 1)
	go func() {
		done <- serve(ctx, []string{"--network", "regtest", "--listen", "127.0.0.1:0", "--datadir", datadir, "--log-level", "warn", "--assume-valid", "0"},
			io.Discard, &errb, func(addr, _ string) { ready <- addr })
	}()
	var addr string
	select {
	case addr = <-ready:
	case code := <-done:
		t.Fatalf("serve exited %d: %s", code, errb.String())
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	resp, err := http.Get("http://" + addr + "/v1/chainstate")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := got["assume_valid"]; !ok || v != nil || got["assumed_valid_height"] != float64(avBad) || got["height"] != float64(avTip) {
		t.Fatalf("/v1/chainstate: %v", got)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exit %d: %s", code, errb.String())
	}
}

func TestServeBadAssumeValid(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"serve", "--assume-valid", "nothex"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--assume-valid") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}
