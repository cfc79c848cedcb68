// Command valbench is the side-by-side full-validation benchmark
// (bench/valbench; bench/results/validation.md): btcdreplay and
// `utxod import` on every store, in rotating order, on one corpus, plus the
// signature floor. It prints the Markdown table and writes it and the JSON
// result into --out.
//
//	valbench --corpus FILE [--network regtest] [--rounds 3] [--stores pebble,rocksdb,bbolt]
//	         [--utxod bin/utxod] [--btcdreplay bin/btcdreplay] [--out DIR]
//
// `make bench-validation` builds the binaries (utxod with -tags rocksdb)
// and runs it. Exit status: 0 when every run reached the corpus tip and the
// stores agree, 1 otherwise or when the benchmark cannot run, 2 on usage
// errors.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"utxod/bench/valbench"
	"utxod/internal/cli"
)

const usage = `Usage: valbench --corpus FILE [flags]

Runs btcdreplay (btcd, full validation) and utxod import on every store,
in rotating order (no arm twice in a row), on fresh data directories; reports medians of wall, CPU
and peak RSS, the ratios btcd/utxod and the signature floor. Prints the
Markdown table; --out also keeps it and the JSON result.
`

func main() { cli.Main(run) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	t := cli.New("valbench", usage, stdout, stderr)
	fs := t.Flags
	var cfg valbench.Config
	fs.StringVar(&cfg.Corpus, "corpus", "", "block file (Core framing) every run validates (required)")
	fs.StringVar(&cfg.Network, "network", "regtest", "network of the corpus")
	fs.IntVar(&cfg.Rounds, "rounds", 3, "rounds; every arm runs once per round, each round starting one arm later (no arm runs twice in a row)")
	stores := fs.String("stores", "pebble,rocksdb,bbolt", "comma-separated utxod stores (a store the binary lacks is reported unavailable)")
	fs.StringVar(&cfg.UtxodBin, "utxod", "bin/utxod", "utxod executable (built with -tags rocksdb for the RocksDB arm)")
	fs.StringVar(&cfg.BtcdBin, "btcdreplay", "bin/btcdreplay", "btcdreplay executable (bench/cmd/btcdreplay)")
	utxodArgs := fs.String("utxod-args", "", "extra arguments for every `utxod import` run, space-separated (e.g. \"--cache-mb 1000\"); they follow the defaults, so they override them")
	btcdArgs := fs.String("btcd-args", "", "extra arguments for every btcdreplay run, space-separated")
	fs.BoolVar(&cfg.NoBtcd, "no-btcd", false, "leave out the btcd arm")
	fs.StringVar(&cfg.Bitcoind, "bitcoind", "", "add Bitcoin Core's arm (opt-in; regtest corpora): this bitcoind (bench/scripts/build-core.sh) runs -loadblock of the corpus on a fresh datadir and stops at its tip (-stopatheight); its gettxoutsetinfo muhash must equal utxod's")
	fs.IntVar(&cfg.CoreDBCacheMB, "core-dbcache", 0, "Core's -dbcache in MiB (0: the --cache-mb of --utxod-args, else utxod's default 450)")
	fs.StringVar(&cfg.CoreAssumeValid, "core-assumevalid", "0", "Core's -assumevalid (a block hash, or 0 for full validation)")
	coreArgs := fs.String("core-args", "", "extra arguments for every bitcoind run, space-separated")
	fs.DurationVar(&cfg.Cooldown, "cooldown", 2*time.Second, "pause between consecutive runs")
	fs.StringVar(&cfg.Workdir, "workdir", "", "parent of the per-run data directories (default $TMPDIR)")
	fs.DurationVar(&cfg.RunTimeout, "run-timeout", 0, "kill a run after this long (0: no limit)")
	fs.StringVar(&cfg.RepoDir, "repo", ".", "directory whose git HEAD is recorded")
	noFloor := fs.Bool("no-floor", false, "skip the signature count and the verify-cost timing")
	fs.IntVar(&cfg.Samples, "samples", 4096, "corpus signatures of each kind kept for the verify-cost loop")
	fs.IntVar(&cfg.VerifyBatches, "verify-batches", 5, "timed verify batches per kind: one-thread before and after the rounds, and all cores at once before every run and after the last (each run's own floor)")
	fs.DurationVar(&cfg.VerifyBatch, "verify-batch", 500*time.Millisecond, "minimum duration of one timed verify batch")
	fs.StringVar(&cfg.Label, "label", "", "free-form note printed with the results (e.g. \"binaries built from commit abc123\")")
	out := fs.String("out", "", "directory for valbench.json and valbench.md (default: print only)")
	if code, done := t.Parse(args); done {
		return code
	}
	if cfg.Corpus == "" || fs.NArg() != 0 {
		return t.UsageError(errors.New("--corpus is required, and no arguments"))
	}
	for _, s := range strings.Split(*stores, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.Stores = append(cfg.Stores, s)
		}
	}
	cfg.UtxodArgs, cfg.BtcdArgs, cfg.Floor = strings.Fields(*utxodArgs), strings.Fields(*btcdArgs), !*noFloor
	cfg.CoreArgs = strings.Fields(*coreArgs)
	cfg.Log = t.Log

	res, err := valbench.Run(ctx, cfg)
	if err != nil {
		return t.Fail(err)
	}
	md := valbench.RenderMarkdown(res)
	io.WriteString(stdout, md)
	if *out != "" {
		jsonPath, mdPath := filepath.Join(*out, "valbench.json"), filepath.Join(*out, "valbench.md")
		err := os.MkdirAll(*out, 0o755)
		if err == nil {
			err = valbench.WriteJSON(res, jsonPath)
		}
		if err == nil {
			err = os.WriteFile(mdPath, []byte(md), 0o644)
		}
		if err != nil {
			return t.Fail(err)
		}
		t.Log.Info("written", "json", jsonPath, "markdown", mdPath)
	}
	if !res.OK {
		return t.Fail(errors.New("problems: " + strings.Join(res.Problems, "; ")))
	}
	return cli.ExitOK
}
