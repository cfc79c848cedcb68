// Command followbench measures `utxod follow` against `utxod import` on the
// same block file (bench/followbench; bench/results/follow.md):
// the follower downloads from testkit/cmd/corerest serving the file, both arms run
// as child processes on fresh datadirs, alternating ABBA. It prints the
// Markdown table and writes the JSON result with --json.
//
//	followbench --corpus FILE [--network regtest] [--rounds 5] [--backend pebble]
//	            [--utxod bin/utxod] [--corerest bin/corerest] [--json FILE]
//
// `make bench-follow` builds the binaries and runs it. Exit status: 0 when
// every run ended on the same tip and MuHash, 1 otherwise or when the
// benchmark cannot run, 2 on usage errors.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"time"

	"utxod/bench/followbench"
	"utxod/internal/cli"
)

const usage = `Usage: followbench --corpus FILE [flags]

Runs utxod import of FILE and utxod follow from corerest serving FILE,
alternating (ABBA) on fresh data directories; reports medians of wall, CPU
and peak RSS, the source's CPU, validation's wait for downloads and the
import/follow ratios paired by round.
`

func main() { cli.Main(run) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	t := cli.New("followbench", usage, stdout, stderr)
	fs := t.Flags
	var cfg followbench.Config
	fs.StringVar(&cfg.Corpus, "corpus", "", "block file (Core framing) both arms connect (required)")
	fs.StringVar(&cfg.Network, "network", "regtest", "network of the corpus")
	fs.StringVar(&cfg.Backend, "backend", "pebble", "utxod store")
	fs.IntVar(&cfg.Rounds, "rounds", 5, "rounds; each arm runs once per round, the order reverses every other round (ABBA)")
	fs.StringVar(&cfg.UtxodBin, "utxod", "bin/utxod", "utxod executable")
	fs.StringVar(&cfg.CorerestBin, "corerest", "bin/corerest", "corerest executable (testkit/cmd/corerest)")
	fs.DurationVar(&cfg.Cooldown, "cooldown", time.Second, "pause between consecutive runs")
	fs.StringVar(&cfg.Workdir, "workdir", "", "parent of the per-run data directories (default $TMPDIR)")
	fs.DurationVar(&cfg.RunTimeout, "run-timeout", 0, "kill a run after this long (0: no limit)")
	utxodArgs := fs.String("utxod-args", "", "extra flags for both arms, space-separated")
	followArgs := fs.String("follow-args", "", "extra flags for the follow arm, space-separated (e.g. \"--follow-concurrency 8\")")
	out := fs.String("json", "", "write the JSON result to this file")
	if code, done := t.Parse(args); done {
		return code
	}
	if cfg.Corpus == "" || fs.NArg() != 0 {
		return t.UsageError(errors.New("--corpus is required, and no arguments"))
	}
	cfg.UtxodArgs, cfg.FollowArgs, cfg.Log = strings.Fields(*utxodArgs), strings.Fields(*followArgs), t.Log
	res, err := followbench.Measure(ctx, cfg)
	if err != nil {
		return t.Fail(err)
	}
	io.WriteString(stdout, res.Markdown())
	if *out != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			return t.Fail(err)
		}
	}
	return cli.ExitOK
}
