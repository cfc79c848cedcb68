package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"utxod/internal/gate"
)

const (
	gateControlDefault   = "{bin} import --network {network} --datadir {datadir} --backend {backend} --json --merkle-kernel generic {corpus}"
	gateCandidateDefault = "{bin} import --network {network} --datadir {datadir} --backend {backend} --json --merkle-kernel auto {corpus}"
)

// cmdGate runs the performance gate (internal/gate). Exit status: 0 when the
// verdict is promote or revert (4 for revert with --strict), 3 when it is
// invalid, 1 when the harness fails, 2 on usage errors.
func cmdGate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	corpus := fs.String("corpus", "", "block file (Core framing) every run imports (required)")
	corpusBlocks := fs.Int("corpus-blocks", 0, "gate on only the first N blocks of --corpus (0: all)")
	network := fs.String("network", "main", "network of the corpus: main, testnet3, testnet4, signet or regtest")
	backends := fs.String("backends", "pebble,rocksdb,bbolt", "comma-separated stores; a store the binary lacks is reported unavailable and left out of the verdict")
	control := fs.String("control", gateControlDefault, "control arm command template (shell-free argv; placeholders {bin} {network} {corpus} {backend} {datadir} {tmp} {arm} {run})")
	candidate := fs.String("candidate", gateCandidateDefault, "candidate arm command template")
	controlBin := fs.String("control-bin", "", "value of {bin} for the control arm (default: this utxod executable)")
	candidateBin := fs.String("candidate-bin", "", "value of {bin} for the candidate arm (default: this utxod executable)")
	controlCommit := fs.String("control-commit", "", "label recorded for the control arm (e.g. the commit its binary was built from)")
	candidateCommit := fs.String("candidate-commit", "", "label recorded for the candidate arm")
	pairs := fs.Int("pairs", 3, "ABBA pairs of runs per store")
	cooldown := fs.Duration("cooldown", 30e9, "pause between consecutive runs")
	pin := fs.String("pin", "", "CPU list to pin the children to, e.g. 1 or 0-1 (taskset -c, else sched_setaffinity)")
	required := fs.Float64("required-speedup", gate.DefaultRule.RequiredSpeedup, "speed-up a primary axis (wall or CPU) must reach on every store")
	maxReg := fs.Float64("max-regression", gate.DefaultRule.MaxRegression, "largest allowed regression of the other axis and of peak RSS (fraction)")
	out := fs.String("out", "", "custody JSON output path (required)")
	report := fs.String("report", "", "Markdown report path (default: --out with .md); the SVG chart goes beside it")
	workdir := fs.String("workdir", "", "parent of the per-run temporary directories (default: $TMPDIR)")
	runTimeout := fs.Duration("run-timeout", 0, "kill a run after this long (0: no limit)")
	repo := fs.String("repo", ".", "directory whose git HEAD is recorded")
	strict := fs.Bool("strict", false, "exit 4 when the verdict is revert")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: utxod gate --corpus FILE --out custody.json [flags]

Runs the control and candidate arms alternately (ABBA) on fresh datadirs for
every store, checks they reach identical chainstate digests, and decides
promote / revert / invalid. See docs/benchmarks/gate/README.md.

Flags:`)
		fs.PrintDefaults()
	}
	pos, code, done := parseArgs(fs, args, false, stdout, stderr)
	if done {
		return code
	}
	if len(pos) > 0 || *corpus == "" || *out == "" {
		fmt.Fprintln(stderr, "utxod gate: --corpus and --out are required, and no arguments (see utxod gate --help)")
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "utxod gate:", err)
		return 1
	}
	if *controlBin == "" {
		*controlBin = self
	}
	if *candidateBin == "" {
		*candidateBin = self
	}
	ctlT, err := gate.ParseTemplate(*control)
	if err != nil {
		fmt.Fprintln(stderr, "utxod gate: --control:", err)
		return 2
	}
	candT, err := gate.ParseTemplate(*candidate)
	if err != nil {
		fmt.Fprintln(stderr, "utxod gate: --candidate:", err)
		return 2
	}
	var stores []string
	for _, s := range strings.Split(*backends, ",") {
		if s = strings.TrimSpace(s); s != "" {
			stores = append(stores, s)
		}
	}
	if *report == "" {
		*report = strings.TrimSuffix(*out, filepath.Ext(*out)) + ".md"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := gate.Run(ctx, gate.Config{
		Corpus:       *corpus,
		CorpusBlocks: *corpusBlocks,
		Network:      *network,
		Backends:     stores,
		Control:      gate.Arm{Template: ctlT, Bin: *controlBin, Commit: *controlCommit},
		Candidate:    gate.Arm{Template: candT, Bin: *candidateBin, Commit: *candidateCommit},
		Pairs:        *pairs,
		Cooldown:     *cooldown,
		Pin:          *pin,
		Rule:         gate.Rule{RequiredSpeedup: *required, MaxRegression: *maxReg},
		Workdir:      *workdir,
		RunTimeout:   *runTimeout,
		RepoDir:      *repo,
		Log:          stderr,
	})
	if err != nil {
		fmt.Fprintln(stderr, "utxod gate:", err)
		return 1
	}
	if err := gate.WriteCustody(c, *out); err != nil {
		fmt.Fprintln(stderr, "utxod gate:", err)
		return 1
	}
	if err := gate.WriteReport(c, *report); err != nil {
		fmt.Fprintln(stderr, "utxod gate:", err)
		return 1
	}
	fmt.Fprintf(stdout, "verdict: %s — %s\n", c.Verdict.Decision, c.Verdict.Reason)
	for _, n := range c.Verdict.Notes {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
	fmt.Fprintf(stdout, "custody: %s\nreport: %s\nchart: %s\n", *out, *report, gate.ChartPath(*report))
	switch c.Verdict.Decision {
	case gate.Invalid:
		return 3
	case gate.Revert:
		if *strict {
			return 4
		}
	}
	return 0
}
