// Command gate is utxod's performance gate (bench/gate;
// bench/gate/README.md): control and candidate arms of
// `utxod import`, ABBA, on every store; a custody JSON, a Markdown report and
// an SVG chart. `make gate` builds it and runs it.
//
//	gate --corpus FILE --out custody.json [--network main] [--backends pebble,rocksdb,bbolt]
//	     [--control TEMPLATE] [--candidate TEMPLATE] [--control-env K=V] [--candidate-env K=V]
//	     [--pairs 3] [--cooldown 30s] [--pin CPUS]
//
// Exit status: 0 when the verdict is promote or revert (4 for revert with
// --strict), 3 when it is invalid, 1 when the harness fails, 2 on usage
// errors.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"utxod/bench/gate"
	"utxod/internal/cli"
)

// The default arms: the same import, the control with the generic merkle
// kernel (UTXOD_DEBUG, bench/settings.md), the candidate with utxod's own
// choice.
const (
	controlDefault    = "{bin} import --network {network} --datadir {datadir} --backend {backend} --json {corpus}"
	candidateDefault  = controlDefault
	controlEnvDefault = "UTXOD_DEBUG=merklekernel=generic"

	exitInvalid = 3
	exitRevert  = 4
)

const usage = `Usage: gate --corpus FILE --out custody.json [flags]

Runs the control and candidate arms alternately (ABBA) on fresh datadirs for
every store, checks they reach identical chainstate digests, and decides
promote / revert / invalid. See bench/gate/README.md.
`

func main() { cli.Main(run) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	t := cli.New("gate", usage, stdout, stderr)
	fs := t.Flags
	corpus := fs.String("corpus", "", "block file (Core framing) every run imports (required)")
	corpusBlocks := fs.Int("corpus-blocks", 0, "gate on only the first N blocks of --corpus (0: all)")
	network := fs.String("network", "main", "network of the corpus: main, testnet3, testnet4, signet or regtest")
	backends := fs.String("backends", "pebble,rocksdb,bbolt", "comma-separated stores; a store the binary lacks is reported unavailable and left out of the verdict")
	control := fs.String("control", controlDefault, "control arm command template (shell-free argv; placeholders {bin} {network} {corpus} {backend} {datadir} {tmp} {arm} {run})")
	candidate := fs.String("candidate", candidateDefault, "candidate arm command template")
	controlBin := fs.String("control-bin", "", "value of {bin} for the control arm (default: the utxod beside this executable, else utxod in PATH)")
	candidateBin := fs.String("candidate-bin", "", "value of {bin} for the candidate arm (default: as --control-bin)")
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
	var env, controlEnv, candidateEnv []string
	envFlag := func(name, usage string, dst *[]string) {
		fs.Func(name, usage, func(v string) error {
			if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
				return fmt.Errorf("want KEY=VALUE, got %q", v)
			}
			*dst = append(*dst, v)
			return nil
		})
	}
	envFlag("env", "KEY=VALUE added to both arms' environment (repeatable; recorded in the custody), e.g. GOMEMLIMIT=90MiB so that peak RSS measures memory in use rather than when the Go scavenger returned freed pages", &env)
	envFlag("control-env", "KEY=VALUE added to the control arm's environment only (repeatable; recorded in the custody), e.g. UTXOD_DEBUG=merklekernel=generic (bench/settings.md); with neither --control nor --control-env, "+controlEnvDefault, &controlEnv)
	envFlag("candidate-env", "KEY=VALUE added to the candidate arm's environment only (repeatable; recorded in the custody)", &candidateEnv)
	if code, done := t.Parse(args); done {
		return code
	}
	if fs.NArg() > 0 || *corpus == "" || *out == "" {
		return t.UsageError(errors.New("--corpus and --out are required, and no arguments"))
	}
	ctlT, err := gate.ParseTemplate(*control)
	if err != nil {
		return t.UsageError(fmt.Errorf("--control: %w", err))
	}
	candT, err := gate.ParseTemplate(*candidate)
	if err != nil {
		return t.UsageError(fmt.Errorf("--candidate: %w", err))
	}
	controlSet := false
	fs.Visit(func(f *flag.Flag) { controlSet = controlSet || f.Name == "control" || f.Name == "control-env" })
	if !controlSet {
		controlEnv = []string{controlEnvDefault}
	}
	if *controlBin == "" {
		*controlBin = defaultUtxod()
	}
	if *candidateBin == "" {
		*candidateBin = *controlBin
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
	c, err := gate.Run(ctx, gate.Config{
		Corpus:       *corpus,
		CorpusBlocks: *corpusBlocks,
		Network:      *network,
		Backends:     stores,
		Control:      gate.Arm{Template: ctlT, Bin: *controlBin, Commit: *controlCommit, Env: slices.Concat(env, controlEnv)},
		Candidate:    gate.Arm{Template: candT, Bin: *candidateBin, Commit: *candidateCommit, Env: slices.Concat(env, candidateEnv)},
		Pairs:        *pairs,
		Cooldown:     *cooldown,
		Pin:          *pin,
		Rule:         gate.Rule{RequiredSpeedup: *required, MaxRegression: *maxReg},
		Workdir:      *workdir,
		RunTimeout:   *runTimeout,
		RepoDir:      *repo,
		Log:          t.Log,
	})
	if err == nil {
		err = errors.Join(gate.WriteCustody(c, *out), gate.WriteReport(c, *report))
	}
	if err != nil {
		return t.Fail(err)
	}
	fmt.Fprintf(stdout, "verdict: %s — %s\n", c.Verdict.Decision, c.Verdict.Reason)
	for _, n := range c.Verdict.Notes {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
	fmt.Fprintf(stdout, "custody: %s\nreport: %s\nchart: %s\n", *out, *report, gate.ChartPath(*report))
	switch c.Verdict.Decision {
	case gate.Invalid:
		return exitInvalid
	case gate.Revert:
		if *strict {
			return exitRevert
		}
	}
	return cli.ExitOK
}

// defaultUtxod is the utxod beside the gate's executable (make builds both
// into bin/), else "utxod" from PATH.
func defaultUtxod() string {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "utxod")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return "utxod"
}
