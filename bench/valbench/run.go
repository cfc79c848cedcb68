package valbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"utxod/bench"
	"utxod/script"
)

// Schema identifies the JSON result format.
const Schema = "utxod-valbench/1"

// Arm kinds.
const (
	KindBtcd  = "btcd"
	KindUtxod = "utxod"
)

// Arm statuses.
const (
	ArmMeasured    = "measured"
	ArmUnavailable = "unavailable" // the utxod binary lacks the store
	ArmFailed      = "failed"
)

// datadirPlaceholder stands for a run's fresh data directory in Arm.Argv.
const datadirPlaceholder = "{datadir}"

// Config describes one benchmark.
type Config struct {
	Corpus  string
	Network string
	// Rounds: each arm runs once per round, in bench.Order's order (with
	// three arms or more, each round starts one arm later).
	Rounds int
	// Stores are the utxod arms (pebble, rocksdb, bbolt).
	Stores []string
	// UtxodBin and BtcdBin are the executables (utxod built with -tags
	// rocksdb for the RocksDB arm; bench/cmd/btcdreplay).
	UtxodBin, BtcdBin string
	// UtxodArgs and BtcdArgs are extra arguments placed before the corpus
	// (a later flag overrides a default one, e.g. --hash-type).
	UtxodArgs, BtcdArgs []string
	// NoBtcd leaves the btcd arm out (only the utxod arms and the floor).
	NoBtcd bool
	// Bitcoind, if set, adds Bitcoin Core's arm (core.go): bitcoind
	// -loadblock of the corpus on a fresh datadir, -dbcache CoreDBCacheMB
	// (0: utxod's --cache-mb), -assumevalid CoreAssumeValid (empty: 0),
	// plus CoreArgs; its gettxoutsetinfo muhash is checked against utxod's.
	Bitcoind        string
	CoreDBCacheMB   int
	CoreAssumeValid string
	CoreArgs        []string
	// Cooldown is the pause between consecutive runs.
	Cooldown time.Duration
	// Workdir holds the per-run temporary directories (default
	// os.TempDir()).
	Workdir string
	// RunTimeout kills a child that runs longer (0: no limit).
	RunTimeout time.Duration
	// RepoDir is where `git rev-parse HEAD` runs (default ".").
	RepoDir string
	// Floor enables the signature count, the verify-cost timing and, when
	// every counted verification succeeded, SigFreeRuns signature-free
	// imports (default 3).
	Floor       bool
	SigFreeRuns int
	// Samples is the number of corpus signatures of each kind kept for the
	// timing loop; VerifyBatches timed batches of at least VerifyBatch:
	// one-thread batches and parallel pairs before and after the rounds,
	// and all-core batches before every run and after the last (each
	// run's own floor).
	Samples       int
	VerifyBatches int
	VerifyBatch   time.Duration
	// Label is a free-form note on what was measured (e.g. the commit the
	// binaries were built from), printed with the results.
	Label string
	// Log receives progress lines (nil: discarded).
	Log *slog.Logger
}

// Arm is one side of the comparison.
type Arm struct {
	Name  string   `json:"name"`  // btcd, or the store name
	Kind  string   `json:"kind"`  // btcd or utxod
	Store string   `json:"store"` // ffldb for btcd
	Argv  []string `json:"argv"`  // {datadir} is each run's fresh directory
}

// RunResult is one child process.
type RunResult struct {
	Arm   string  `json:"arm"`
	Round int     `json:"round"` // 1-based
	Seq   int     `json:"seq"`   // 1-based position in the whole sequence
	Load1 float64 `json:"load1"` // 1-minute load average when the run started
	bench.Record
	// From the child's --json output: the tip (btcd "tip", utxod
	// "bestblock") and height; for utxod also the chainstate digests.
	Tip     string         `json:"tip,omitempty"`
	Height  int            `json:"height"`
	Digests *bench.Digests `json:"digests,omitempty"`
	Output  map[string]any `json:"output,omitempty"` // btcd's summary
	// FloorS is the signature floor from the all-core batches timed just
	// before and just after this run (RunFloor; 0 without a floor).
	FloorS float64 `json:"floor_s,omitempty"`
	// CorePhases: the core arm's debug.log timeline.
	CorePhases *CorePhases `json:"core_phases,omitempty"`
}

// ArmResult is one arm's runs and medians.
type ArmResult struct {
	Arm
	Status string      `json:"status"`
	Reason string      `json:"reason,omitempty"`
	Runs   []RunResult `json:"runs"`
	bench.Times
	RSSMedianMiB float64 `json:"max_rss_median_mib"`
	// BtcdWall and BtcdCPU are btcd's median / this arm's median (how many
	// times faster than btcd; 1 for btcd itself; 0 without a btcd arm).
	BtcdWall float64 `json:"btcd_over_arm_wall"`
	BtcdCPU  float64 `json:"btcd_over_arm_cpu"`
	// CoreWall and CoreCPU are Core's median / this arm's median (0
	// without a core arm); CoreRSS this arm's peak RSS median / Core's.
	CoreWall float64 `json:"core_over_arm_wall,omitempty"`
	CoreCPU  float64 `json:"core_over_arm_cpu,omitempty"`
	CoreRSS  float64 `json:"arm_over_core_rss,omitempty"`
	// WallOverFloor is the wall median / Floor.Seconds; CPUOverSigCPU the
	// CPU median / Floor.CPUSeconds (0 without a floor).
	// WallOverRunFloor is the median over the runs of each run's wall /
	// its own floor (RunResult.FloorS): paired, so that a slow spell of
	// the host moves both sides; the figure to quote.
	WallOverFloor    float64 `json:"wall_over_floor"`
	WallOverRunFloor float64 `json:"wall_over_run_floor"`
	CPUOverSigCPU    float64 `json:"cpu_over_sig_cpu"`
}

// Result is the whole benchmark.
type Result struct {
	Schema      string                  `json:"schema"`
	Label       string                  `json:"label,omitempty"`
	StartedAt   time.Time               `json:"started_at"`
	FinishedAt  time.Time               `json:"finished_at"`
	Host        bench.HostIdentity      `json:"host"`
	Git         bench.GitIdentity       `json:"git"`
	Binaries    map[string]bench.Binary `json:"binaries"`
	BtcdVersion string                  `json:"btcd_version"`
	CoreVersion string                  `json:"core_version,omitempty"`
	Corpus      bench.CorpusIdentity    `json:"corpus"`
	Rounds      int                     `json:"rounds"`
	Order       [][]string              `json:"order"` // arm names per round
	CooldownS   float64                 `json:"cooldown_s"`
	LoadStart   [3]float64              `json:"load_start"`
	LoadEnd     [3]float64              `json:"load_end"`
	Count       *CountResult            `json:"signature_count,omitempty"`
	VerifyCost  *VerifyCost             `json:"verify_cost,omitempty"`
	Floor       *Floor                  `json:"floor,omitempty"`
	Parallel    *ParallelCost           `json:"parallel_verify,omitempty"`
	SigFree     *SigFree                `json:"signature_free,omitempty"`
	Arms        []ArmResult             `json:"arms"`
	Problems    []string                `json:"problems"`
	OK          bool                    `json:"ok"`
}

// Arms returns the arms a configuration runs: btcd first, then the stores.
func (c *Config) Arms() []Arm {
	var arms []Arm
	if !c.NoBtcd {
		argv := []string{c.BtcdBin, "--network", c.Network, "--datadir", datadirPlaceholder, "--json"}
		argv = append(append(argv, c.BtcdArgs...), c.Corpus)
		arms = append(arms, Arm{Name: KindBtcd, Kind: KindBtcd, Store: "ffldb", Argv: argv})
	}
	for _, s := range c.Stores {
		argv := []string{c.UtxodBin, "import", "--network", c.Network, "--datadir", datadirPlaceholder,
			"--backend", s, "--json", "--hash-type", "muhash"}
		argv = append(append(argv, c.UtxodArgs...), c.Corpus)
		arms = append(arms, Arm{Name: s, Kind: KindUtxod, Store: s, Argv: argv})
	}
	if c.Bitcoind != "" {
		arms = append(arms, c.coreArm())
	}
	return arms
}

// Order returns the arm names of each round (bench.Order).
func Order(arms []Arm, rounds int) [][]string {
	var names []string
	for _, a := range arms {
		names = append(names, a.Name)
	}
	return bench.Order(names, rounds)
}

// Run executes the benchmark. It returns an error only when it cannot
// proceed (bad configuration, unreadable corpus or binary, cancellation);
// failed runs and tip or digest disagreements are recorded in
// Result.Problems and make Result.OK false.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Rounds < 1 {
		return nil, errors.New("valbench: rounds must be at least 1")
	}
	if cfg.Bitcoind != "" && cfg.Network != "regtest" {
		return nil, errors.New("valbench: the core arm runs regtest corpora only")
	}
	if len(cfg.Stores) == 0 && cfg.NoBtcd && cfg.Bitcoind == "" {
		return nil, errors.New("valbench: no arms")
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Workdir == "" {
		cfg.Workdir = os.TempDir()
	}
	if cfg.RepoDir == "" {
		cfg.RepoDir = "."
	}
	if cfg.VerifyBatches < 1 {
		cfg.VerifyBatches = 5
	}
	if cfg.VerifyBatch <= 0 {
		cfg.VerifyBatch = 500 * time.Millisecond
	}
	if cfg.Samples < 1 {
		cfg.Samples = 4096
	}
	var err error
	for _, p := range []*string{&cfg.Corpus, &cfg.Workdir, &cfg.RepoDir} {
		if *p, err = filepath.Abs(*p); err != nil {
			return nil, fmt.Errorf("valbench: %w", err)
		}
	}
	res := &Result{Schema: Schema, Label: cfg.Label, StartedAt: time.Now().UTC().Truncate(time.Second), Host: bench.HostInfo(),
		Git: bench.GitInfo(ctx, cfg.RepoDir), Binaries: map[string]bench.Binary{}, Rounds: cfg.Rounds,
		CooldownS: cfg.Cooldown.Seconds(), LoadStart: bench.LoadAvg(), Problems: []string{}}
	bins := map[string]*string{}
	if len(cfg.Stores) > 0 {
		bins["utxod"] = &cfg.UtxodBin
	}
	if !cfg.NoBtcd {
		bins["btcdreplay"] = &cfg.BtcdBin
	}
	if cfg.Bitcoind != "" {
		bins["bitcoind"] = &cfg.Bitcoind
	}
	for name, p := range bins {
		if *p == "" {
			return nil, fmt.Errorf("valbench: no %s binary", name)
		}
		if *p, err = exec.LookPath(*p); err != nil {
			return nil, fmt.Errorf("valbench: %s binary: %w", name, err)
		}
		if *p, err = filepath.Abs(*p); err != nil {
			return nil, fmt.Errorf("valbench: %w", err)
		}
		info, err := bench.BinaryInfo(*p)
		if err != nil {
			return nil, fmt.Errorf("valbench: %s binary: %w", name, err)
		}
		res.Binaries[name] = info
	}
	if !cfg.NoBtcd {
		res.BtcdVersion = bench.ModuleVersion(cfg.BtcdBin, "github.com/btcsuite/btcd")
	}
	if cfg.Bitcoind != "" {
		res.CoreVersion = coreVersion(ctx, cfg.Bitcoind)
	}
	log.Info("valbench: scanning corpus", "corpus", cfg.Corpus)
	if res.Corpus, err = bench.ScanCorpus(cfg.Corpus, cfg.Network); err != nil {
		return nil, fmt.Errorf("valbench: %w", err)
	}

	var samplesE []ECDSASample
	var samplesS []SchnorrSample
	verifier := script.DefaultSigVerifier()
	if cfg.Floor {
		log.Info("valbench: counting signature verifications (in-process import)", "verifier", verifier.Name())
		cnt, err := CountSignatures(ctx, cfg.Corpus, cfg.Network, cfg.Samples)
		if err != nil {
			return nil, err
		}
		samplesE, samplesS = cnt.ECDSA, cnt.Schnorr
		res.Count = cnt
		if cnt.Tip.String() != res.Corpus.StopHash || int(cnt.Height) != res.Corpus.Height {
			res.Problems = append(res.Problems, fmt.Sprintf("counting import stopped at %s height %d, the corpus tip is %s height %d",
				cnt.Tip, cnt.Height, res.Corpus.StopHash, res.Corpus.Height))
		}
		log.Info("valbench: counted", "ecdsa", cnt.Count.ECDSA, "schnorr", cnt.Count.Schnorr, "taptweak", cnt.Count.TapTweak,
			"seconds", fmt.Sprintf("%.1f", cnt.Seconds))
		if cnt.Count.ECDSAFailed == 0 && cnt.Count.SchnorrFailed == 0 && cnt.Count.TapTweakFail == 0 {
			if cfg.SigFreeRuns < 1 {
				cfg.SigFreeRuns = 3
			}
			log.Info("valbench: signature-free imports (in-process)", "runs", cfg.SigFreeRuns)
			if res.SigFree, err = MeasureSigFree(ctx, cfg.Corpus, cfg.Network, cfg.Workdir, cfg.SigFreeRuns, cnt.Height, cnt.Tip); err != nil {
				return nil, err
			}
		}
		runtime.GC()
		if res.VerifyCost, err = MeasureVerifyCost(verifier, samplesE, samplesS, 0, cfg.VerifyBatches, cfg.VerifyBatch, nil); err != nil {
			return nil, err
		}
		if res.Parallel, err = MeasureParallelVerify(verifier, cnt.Count, samplesE, samplesS, runtime.NumCPU(), cfg.VerifyBatches, cfg.VerifyBatch, nil); err != nil {
			return nil, err
		}
	}

	arms := cfg.Arms()
	res.Order = Order(arms, cfg.Rounds)
	byName := map[string]*ArmResult{}
	var runArms []bench.Arm
	for _, a := range arms {
		res.Arms = append(res.Arms, ArmResult{Arm: a, Status: ArmMeasured, Runs: []RunResult{}})
		ba := bench.Arm{Name: a.Name, Command: func(_ bench.Step, _, datadir string) (bench.Command, error) {
			argv := make([]string, len(a.Argv))
			for i, s := range a.Argv {
				argv[i] = strings.ReplaceAll(s, datadirPlaceholder, datadir)
				argv[i] = strings.ReplaceAll(argv[i], tipHeightPlaceholder, fmt.Sprint(res.Corpus.Height))
			}
			if a.Kind == KindCore { // bitcoind wants an existing -datadir
				if err := os.MkdirAll(datadir, 0o755); err != nil {
					return bench.Command{}, err
				}
			}
			return bench.Command{Argv: argv}, nil
		}}
		if a.Kind == KindCore {
			ba.After = coreAfter(cfg.Bitcoind)
		}
		runArms = append(runArms, ba)
	}
	for i := range res.Arms {
		byName[res.Arms[i].Name] = &res.Arms[i]
	}
	runner := &bench.Runner{Workdir: cfg.Workdir, Prefix: "valbench-", Cooldown: cfg.Cooldown, RunTimeout: cfg.RunTimeout, Log: log}
	if cfg.Floor && res.VerifyCost != nil {
		runner.BeforeRun = func(_ context.Context, s bench.Step) error {
			runtime.GC()
			return MeasureAllCoreCost(verifier, samplesE, samplesS, runtime.NumCPU(), s.Seq, cfg.VerifyBatches, cfg.VerifyBatch, res.VerifyCost)
		}
	}
	err = runner.Run(ctx, runArms, cfg.Rounds, func(s bench.Step, rec *bench.Record) bench.Outcome {
		ar := byName[s.Arm]
		rr := RunResult{Arm: s.Arm, Round: s.Round, Seq: s.Seq, Load1: s.Load1}
		if rec.OK() {
			if err := parseOutput(rec.Stdout, &rr); err != nil {
				rec.Fail(err)
			}
		}
		rr.Record = *rec
		ar.Runs = append(ar.Runs, rr)
		if reason, ok := rec.Unavailable(); ok && ar.Kind == KindUtxod {
			ar.Status, ar.Reason = ArmUnavailable, reason
			return bench.Unavailable
		}
		if !rec.OK() {
			ar.Status, ar.Reason = ArmFailed, fmt.Sprintf("round %d: %s", s.Round, rec.Failure())
			res.Problems = append(res.Problems, fmt.Sprintf("%s %s", s.Arm, ar.Reason))
			return bench.Failed
		}
		return bench.Measured
	})
	if err != nil {
		return nil, err
	}

	if cfg.Floor && res.VerifyCost != nil {
		runtime.GC()
		last := cfg.Rounds*len(arms) + 1
		if err := MeasureAllCoreCost(verifier, samplesE, samplesS, runtime.NumCPU(), last, cfg.VerifyBatches, cfg.VerifyBatch, res.VerifyCost); err != nil {
			return nil, err
		}
		if _, err := MeasureVerifyCost(verifier, samplesE, samplesS, last, cfg.VerifyBatches, cfg.VerifyBatch, res.VerifyCost); err != nil {
			return nil, err
		}
		if res.Parallel != nil {
			if _, err := MeasureParallelVerify(verifier, res.Count.Count, samplesE, samplesS, runtime.NumCPU(), cfg.VerifyBatches, cfg.VerifyBatch, res.Parallel); err != nil {
				return nil, err
			}
		}
		f := ComputeFloor(res.Count.Count, res.VerifyCost, runtime.NumCPU())
		res.Floor = &f
		for i := range res.Arms {
			for j := range res.Arms[i].Runs {
				r := &res.Arms[i].Runs[j]
				r.FloorS = RunFloor(res.Count.Count, res.VerifyCost, r.Seq)
			}
		}
		if res.Parallel != nil {
			res.Parallel.finish(f)
		}
		if res.SigFree != nil && f.Cores > 0 {
			res.SigFree.BoundS = (f.CPUSeconds + res.SigFree.CPUMedianS) / float64(f.Cores)
		}
	}
	res.Problems = append(res.Problems, checkRuns(res)...)
	summarise(res)
	res.LoadEnd = bench.LoadAvg()
	res.FinishedAt = time.Now().UTC().Truncate(time.Second)
	res.OK = len(res.Problems) == 0
	return res, nil
}

// checkRuns requires every successful run to end at the corpus tip and the
// utxod runs to agree on the chainstate digests.
func checkRuns(res *Result) []string {
	var problems []string
	var ref *bench.Digests
	var refName string
	for _, ar := range res.Arms {
		if ar.Status == ArmUnavailable {
			continue
		}
		for _, r := range ar.Runs {
			if r.ExitCode != 0 || r.Error != "" {
				continue
			}
			name := fmt.Sprintf("%s round %d", r.Arm, r.Round)
			if r.Tip != res.Corpus.StopHash || r.Height != res.Corpus.Height {
				problems = append(problems, fmt.Sprintf("%s ended at %s height %d, the corpus tip is %s height %d",
					name, r.Tip, r.Height, res.Corpus.StopHash, res.Corpus.Height))
			}
			if ar.Kind == KindBtcd || r.Digests == nil {
				continue
			}
			if ref == nil {
				ref, refName = r.Digests, name
				continue
			}
			if *r.Digests != *ref {
				problems = append(problems, fmt.Sprintf("%s chainstate %+v differs from %s's %+v", name, *r.Digests, refName, *ref))
			}
		}
	}
	return problems
}

// summarise fills the medians, the ratios to btcd and to the floor.
func summarise(res *Result) {
	var btcd *ArmResult
	for i := range res.Arms {
		ar := &res.Arms[i]
		var recs []bench.Record
		for _, r := range ar.Runs {
			recs = append(recs, r.Record)
		}
		m := bench.Summarize(recs)
		if m.Runs == 0 || ar.Status != ArmMeasured {
			continue
		}
		ar.Times, ar.RSSMedianMiB = m.Times, m.RSSMedianKiB/1024
		if ar.Kind == KindBtcd {
			btcd = ar
		}
		if f := res.Floor; f != nil {
			ar.WallOverFloor = bench.Ratio(ar.WallMedianS, f.Seconds)
			ar.CPUOverSigCPU = bench.Ratio(ar.CPUMedianS, f.CPUSeconds)
			var paired []float64
			for _, r := range ar.Runs {
				if r.FloorS > 0 && r.OK() {
					paired = append(paired, r.WallS/r.FloorS)
				}
			}
			ar.WallOverRunFloor = bench.Median(paired)
		}
	}
	var core *ArmResult
	for i := range res.Arms {
		if res.Arms[i].Kind == KindCore && res.Arms[i].Status == ArmMeasured && res.Arms[i].WallMedianS > 0 {
			core = &res.Arms[i]
		}
	}
	for i := range res.Arms {
		if ar := &res.Arms[i]; core != nil && ar.WallMedianS > 0 {
			ar.CoreWall = bench.Ratio(core.WallMedianS, ar.WallMedianS)
			ar.CoreCPU = bench.Ratio(core.CPUMedianS, ar.CPUMedianS)
			ar.CoreRSS = bench.Ratio(ar.RSSMedianMiB, core.RSSMedianMiB)
		}
	}
	if btcd == nil {
		return
	}
	for i := range res.Arms {
		ar := &res.Arms[i]
		if ar.WallMedianS > 0 {
			ar.BtcdWall = bench.Ratio(btcd.WallMedianS, ar.WallMedianS)
			ar.BtcdCPU = bench.Ratio(btcd.CPUMedianS, ar.CPUMedianS)
		}
	}
}

// parseOutput reads a child's --json output: utxod's chainstate (bestblock,
// height, digests) or else btcdreplay's summary (tip, height).
func parseOutput(out []byte, r *RunResult) error {
	if d, err := bench.ParseDigests(out); err == nil {
		r.Digests, r.Tip, r.Height = d, d.BestBlock, d.Height
		var p struct {
			Phases *CorePhases `json:"core_phases"`
		}
		if json.Unmarshal(out, &p) == nil {
			r.CorePhases = p.Phases
		}
		return nil
	}
	b, err := bench.LastJSON(out, "tip")
	if err != nil {
		return err
	}
	var s struct {
		Tip    string `json:"tip"`
		Height int    `json:"height"`
	}
	if b == nil || json.Unmarshal(b, &s) != nil || s.Tip == "" {
		return errors.New("no tip or bestblock in the JSON output")
	}
	r.Tip, r.Height = s.Tip, s.Height
	return json.Unmarshal(b, &r.Output)
}
