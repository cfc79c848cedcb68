package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"utxod/bench"
)

// Arm is one side of the comparison.
type Arm struct {
	Template Template
	// Bin is the value of {bin} (the CLI defaults it to the utxod beside
	// the gate's executable).
	Bin string
	// Commit is a free-form label recorded in the custody (e.g. the commit
	// the binary was built from).
	Commit string
	// Env is appended to the gate's environment for this arm's children.
	Env []string
}

// Config describes one gate.
type Config struct {
	Corpus string
	// CorpusBlocks > 0 gates on only the first CorpusBlocks blocks of Corpus
	// (copied to a temporary file in Workdir).
	CorpusBlocks int
	Network      string
	Backends     []string
	Control      Arm
	Candidate    Arm
	// Pairs of runs per store, alternating ABBA.
	Pairs    int
	Cooldown time.Duration
	// Pin is a CPU list ("0", "2-3", "0,2") the children are pinned to; ""
	// leaves them unpinned.
	Pin  string
	Rule Rule
	// Workdir holds the per-run temporary directories (default os.TempDir()).
	Workdir string
	// RunTimeout kills a child that runs longer (0: no limit).
	RunTimeout time.Duration
	// RepoDir is where `git rev-parse HEAD` runs (default: the current
	// directory).
	RepoDir string
	// Log receives one progress line per run (nil: discarded).
	Log *slog.Logger
}

// Sequence returns the arms' run order within one store for pairs pairs:
// ABBA — control, candidate, candidate, control, control, candidate, …
func Sequence(pairs int) []string {
	return slices.Concat(bench.Order([]string{Control, Candidate}, pairs)...)
}

// Run executes the gate and returns its custody record. It returns an error
// only when the harness itself cannot proceed (bad configuration, unreadable
// corpus or binary, cancellation); failed or disagreeing runs are recorded
// in the custody and make the verdict invalid.
func Run(ctx context.Context, cfg Config) (*Custody, error) {
	if cfg.Pairs < 1 {
		return nil, fmt.Errorf("gate: --pairs must be at least 1")
	}
	if len(cfg.Backends) == 0 {
		return nil, fmt.Errorf("gate: no backends")
	}
	if cfg.Rule.RequiredSpeedup == 0 {
		cfg.Rule = DefaultRule
	}
	if cfg.Workdir == "" {
		cfg.Workdir = os.TempDir()
	}
	if cfg.RepoDir == "" {
		cfg.RepoDir = "."
	}
	if abs, err := filepath.Abs(cfg.RepoDir); err == nil {
		cfg.RepoDir = abs
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	corpus, err := filepath.Abs(cfg.Corpus)
	if err != nil {
		return nil, err
	}
	workdir, err := filepath.Abs(cfg.Workdir)
	if err != nil {
		return nil, err
	}
	arms := map[string]*Arm{Control: &cfg.Control, Candidate: &cfg.Candidate}
	c := &Custody{
		Schema: SchemaID,
		Identity: Identity{
			CapturedAt: time.Now().UTC().Truncate(time.Second),
			Git:        bench.GitInfo(ctx, cfg.RepoDir),
			Binaries:   map[string]bench.Binary{},
			Host:       bench.HostInfo(),
			Commits:    map[string]string{Control: cfg.Control.Commit, Candidate: cfg.Candidate.Commit},
		},
		Harness: Harness{
			Order:           "ABBA",
			Sequence:        Sequence(cfg.Pairs),
			Pairs:           cfg.Pairs,
			CooldownS:       cfg.Cooldown.Seconds(),
			Templates:       map[string]string{Control: cfg.Control.Template.Source, Candidate: cfg.Candidate.Template.Source},
			Backends:        slices.Clone(cfg.Backends),
			RequiredSpeedup: cfg.Rule.RequiredSpeedup,
			MaxRegression:   cfg.Rule.MaxRegression,
			RunTimeoutS:     cfg.RunTimeout.Seconds(),
			Workdir:         workdir,
			Env:             armEnv(cfg),
		},
		Stores: []StoreResult{},
	}
	for name, arm := range arms {
		if arm.Template.Source == "" {
			return nil, fmt.Errorf("gate: no %s template", name)
		}
		if strings.ContainsRune(arm.Bin, filepath.Separator) {
			if arm.Bin, err = filepath.Abs(arm.Bin); err != nil {
				return nil, err
			}
		}
		bin, err := armBinary(arm)
		if err != nil {
			return nil, fmt.Errorf("gate: %s binary: %w", name, err)
		}
		info, err := bench.BinaryInfo(bin)
		if err != nil {
			return nil, fmt.Errorf("gate: %s binary: %w", name, err)
		}
		c.Identity.Binaries[name] = info
		if arm.Template.Uses("bin") {
			// Both arms run fresh copies: an executable's pages already in
			// the page cache are mapped around each fault, so a binary the
			// linker just wrote and one built earlier had different peak
			// RSS for the same code.
			cp, err := freshCopy(bin, workdir, name)
			if err != nil {
				return nil, fmt.Errorf("gate: %s binary: %w", name, err)
			}
			defer os.RemoveAll(filepath.Dir(cp))
			arm.Bin = cp
		}
	}
	var source *bench.CorpusIdentity
	if cfg.CorpusBlocks > 0 {
		src, err := bench.ScanCorpus(corpus, cfg.Network)
		if err != nil {
			return nil, err
		}
		source = &src
		f, err := os.CreateTemp(workdir, "utxod-gate-corpus-*.dat")
		if err != nil {
			return nil, err
		}
		f.Close()
		defer os.Remove(f.Name())
		if _, err := bench.WritePrefix(corpus, cfg.Network, cfg.CorpusBlocks, f.Name()); err != nil {
			return nil, err
		}
		corpus = f.Name()
	}
	c.Identity.Corpus, err = bench.ScanCorpus(corpus, cfg.Network)
	if err != nil {
		return nil, err
	}
	if source != nil {
		c.Identity.Corpus.Source, c.Identity.Corpus.SourceSHA256 = source.Path, source.SHA256
		c.Identity.Corpus.PrefixBlocks = c.Identity.Corpus.Blocks
	}
	pin, err := bench.NewPinner(cfg.Pin)
	if err != nil {
		return nil, err
	}
	c.Harness.Pin = Pin{CPUs: cfg.Pin, Method: pin.Method()}

	runner := &bench.Runner{Workdir: workdir, Prefix: "utxod-gate-", Cooldown: cfg.Cooldown, RunTimeout: cfg.RunTimeout,
		Pin: pin, StopOnFailure: true}
	for _, store := range cfg.Backends {
		sr := StoreResult{Store: store, Status: StoreMeasured, Runs: []RunResult{}}
		runner.Log = log.With("store", store)
		var runArms []bench.Arm
		for _, name := range []string{Control, Candidate} {
			arm := arms[name]
			runArms = append(runArms, bench.Arm{Name: name, Command: func(s bench.Step, dir, datadir string) (bench.Command, error) {
				argv, err := arm.Template.Expand(map[string]string{"network": cfg.Network, "corpus": corpus, "bin": arm.Bin,
					"backend": store, "arm": name, "run": fmt.Sprint(s.Index), "tmp": dir, "datadir": datadir})
				return bench.Command{Argv: argv, Env: arm.Env}, err
			}})
		}
		err := runner.Run(ctx, runArms, cfg.Pairs, func(s bench.Step, rec *bench.Record) bench.Outcome {
			r := RunResult{Seq: s.Seq, Arm: s.Arm, Index: s.Index}
			if rec.OK() {
				if d, err := bench.ParseDigests(rec.Stdout); err != nil {
					rec.Fail(err)
				} else {
					r.Digests = d
				}
			}
			r.Record = *rec
			sr.Runs = append(sr.Runs, r)
			if reason, ok := rec.Unavailable(); ok {
				sr.Status, sr.Reason = StoreUnavailable, reason
				return bench.Unavailable
			}
			if !rec.OK() {
				sr.Status, sr.Reason = StoreFailed, fmt.Sprintf("%s run %d failed: %s", s.Arm, s.Index, rec.Failure())
				return bench.Failed
			}
			return bench.Measured
		})
		if err != nil {
			return nil, err
		}
		if sr.Status == StoreMeasured {
			summarise(&sr)
		}
		c.Stores = append(c.Stores, sr)
	}
	finish(c, cfg.Rule)
	return c, nil
}

// armEnv is the Env of each arm that has one, for the custody.
func armEnv(cfg Config) map[string][]string {
	var m map[string][]string
	for name, env := range map[string][]string{Control: cfg.Control.Env, Candidate: cfg.Candidate.Env} {
		if len(env) > 0 {
			if m == nil {
				m = map[string][]string{}
			}
			m[name] = slices.Clone(env)
		}
	}
	return m
}

// freshCopy copies the executable bin into a new directory under workdir
// (removed again if the copy fails).
func freshCopy(bin, workdir, arm string) (path string, err error) {
	dir, err := os.MkdirTemp(workdir, "utxod-gate-bin-"+arm+"-")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	src, err := os.Open(bin)
	if err != nil {
		return "", err
	}
	defer src.Close()
	path = filepath.Join(dir, filepath.Base(bin))
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return "", err
	}
	if err := out.Close(); err != nil {
		return "", err
	}
	return path, nil
}

// armBinary is the executable identifying an arm: {bin} if the template
// uses it, otherwise the template's first argument (looked up in PATH).
func armBinary(arm *Arm) (string, error) {
	if arm.Template.Uses("bin") {
		if arm.Bin == "" {
			return "", errors.New("template uses {bin} but no binary is set")
		}
		return exec.LookPath(arm.Bin)
	}
	first := arm.Template.Args()[0]
	return exec.LookPath(first)
}
