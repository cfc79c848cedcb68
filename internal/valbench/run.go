package valbench

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"utxod/internal/gate"
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
	// Rounds: each arm runs once per round; odd rounds run the arms in
	// reverse order (ABBA).
	Rounds int
	// Stores are the utxod arms (pebble, rocksdb, bbolt).
	Stores []string
	// UtxodBin and BtcdBin are the executables (utxod built with -tags
	// rocksdb for the RocksDB arm; cmd/btcdreplay).
	UtxodBin, BtcdBin string
	// UtxodArgs and BtcdArgs are extra arguments placed before the corpus
	// (a later flag overrides a default one, e.g. --hash-type).
	UtxodArgs, BtcdArgs []string
	// NoBtcd leaves the btcd arm out (only the utxod arms and the floor).
	NoBtcd bool
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
	// timing loop; VerifyBatches timed batches of at least VerifyBatch run
	// before and again after the rounds.
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
	Arm       string   `json:"arm"`
	Round     int      `json:"round"` // 1-based
	Seq       int      `json:"seq"`   // 1-based position in the whole sequence
	Argv      []string `json:"argv"`
	Load1     float64  `json:"load1"` // 1-minute load average when the run started
	WallS     float64  `json:"wall_s"`
	CPUUserS  float64  `json:"cpu_user_s"`
	CPUSysS   float64  `json:"cpu_sys_s"`
	CPUS      float64  `json:"cpu_s"` // user + sys
	MaxRSSKiB int64    `json:"max_rss_kib"`
	// ParentRSSKiB is valbench's RSS when the child started, after
	// gate.ResetPeakRSS (the in-process imports raise it): no child can
	// report a smaller peak.
	ParentRSSKiB int64 `json:"parent_rss_kib,omitempty"`
	ExitCode     int   `json:"exit_code"`
	DatadirB     int64 `json:"datadir_bytes"`
	// From the child's --json output: the tip (btcd "tip", utxod
	// "bestblock") and height; for utxod also the chainstate digests.
	Tip     string         `json:"tip,omitempty"`
	Height  int            `json:"height"`
	Digests *gate.Digests  `json:"digests,omitempty"`
	Output  map[string]any `json:"output,omitempty"` // btcd's summary
	Error   string         `json:"error,omitempty"`
	Stderr  string         `json:"stderr_tail,omitempty"` // failed runs only
}

// ArmResult is one arm's runs and medians.
type ArmResult struct {
	Arm
	Status       string      `json:"status"`
	Reason       string      `json:"reason,omitempty"`
	Runs         []RunResult `json:"runs"`
	WallMedianS  float64     `json:"wall_median_s"`
	WallMinS     float64     `json:"wall_min_s"`
	WallMaxS     float64     `json:"wall_max_s"`
	CPUMedianS   float64     `json:"cpu_median_s"`
	CPUMinS      float64     `json:"cpu_min_s"`
	CPUMaxS      float64     `json:"cpu_max_s"`
	RSSMedianMiB float64     `json:"max_rss_median_mib"`
	// BtcdWall and BtcdCPU are btcd's median / this arm's median (how many
	// times faster than btcd; 1 for btcd itself; 0 without a btcd arm).
	BtcdWall float64 `json:"btcd_over_arm_wall"`
	BtcdCPU  float64 `json:"btcd_over_arm_cpu"`
	// WallOverFloor is the wall median / Floor.Seconds; CPUOverSigCPU the
	// CPU median / Floor.CPUSeconds (0 without a floor).
	WallOverFloor float64 `json:"wall_over_floor"`
	CPUOverSigCPU float64 `json:"cpu_over_sig_cpu"`
}

// Result is the whole benchmark.
type Result struct {
	Schema      string                 `json:"schema"`
	Label       string                 `json:"label,omitempty"`
	StartedAt   time.Time              `json:"started_at"`
	FinishedAt  time.Time              `json:"finished_at"`
	Host        gate.HostIdentity      `json:"host"`
	Git         gate.GitIdentity       `json:"git"`
	Binaries    map[string]gate.Binary `json:"binaries"`
	BtcdVersion string                 `json:"btcd_version"`
	Corpus      gate.CorpusIdentity    `json:"corpus"`
	Rounds      int                    `json:"rounds"`
	Order       [][]string             `json:"order"` // arm names per round
	CooldownS   float64                `json:"cooldown_s"`
	LoadStart   [3]float64             `json:"load_start"`
	LoadEnd     [3]float64             `json:"load_end"`
	Count       *CountResult           `json:"signature_count,omitempty"`
	VerifyCost  *VerifyCost            `json:"verify_cost,omitempty"`
	Floor       *Floor                 `json:"floor,omitempty"`
	Parallel    *ParallelCost          `json:"parallel_verify,omitempty"`
	SigFree     *SigFree               `json:"signature_free,omitempty"`
	Arms        []ArmResult            `json:"arms"`
	Problems    []string               `json:"problems"`
	OK          bool                   `json:"ok"`
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
	return arms
}

// Order returns the arm names of each round: forward in odd rounds (1, 3,
// …), reversed in even ones — ABBA.
func Order(arms []Arm, rounds int) [][]string {
	out := make([][]string, rounds)
	for r := range out {
		for _, a := range arms {
			out[r] = append(out[r], a.Name)
		}
		if r%2 == 1 {
			slices.Reverse(out[r])
		}
	}
	return out
}

// Run executes the benchmark. It returns an error only when it cannot
// proceed (bad configuration, unreadable corpus or binary, cancellation);
// failed runs and tip or digest disagreements are recorded in
// Result.Problems and make Result.OK false.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Rounds < 1 {
		return nil, errors.New("valbench: rounds must be at least 1")
	}
	if len(cfg.Stores) == 0 && cfg.NoBtcd {
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
	res := &Result{Schema: Schema, Label: cfg.Label, StartedAt: time.Now().UTC().Truncate(time.Second), Host: gate.HostInfo(),
		Git: gate.GitInfo(ctx, cfg.RepoDir), Binaries: map[string]gate.Binary{}, Rounds: cfg.Rounds,
		CooldownS: cfg.Cooldown.Seconds(), LoadStart: loadAvg(), Problems: []string{}}
	bins := map[string]*string{}
	if len(cfg.Stores) > 0 {
		bins["utxod"] = &cfg.UtxodBin
	}
	if !cfg.NoBtcd {
		bins["btcdreplay"] = &cfg.BtcdBin
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
		info, err := gate.BinaryInfo(*p)
		if err != nil {
			return nil, fmt.Errorf("valbench: %s binary: %w", name, err)
		}
		res.Binaries[name] = info
	}
	if !cfg.NoBtcd {
		res.BtcdVersion = moduleVersion(cfg.BtcdBin, "github.com/btcsuite/btcd")
	}
	log.Info("valbench: scanning corpus", "corpus", cfg.Corpus)
	if res.Corpus, err = gate.ScanCorpus(cfg.Corpus, cfg.Network); err != nil {
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
			if res.SigFree, err = MeasureSigFree(ctx, cfg.Corpus, cfg.Network, cfg.SigFreeRuns, cnt.Height, cnt.Tip); err != nil {
				return nil, err
			}
		}
		runtime.GC()
		if res.VerifyCost, err = MeasureVerifyCost(verifier, samplesE, samplesS, cfg.VerifyBatches, cfg.VerifyBatch, nil); err != nil {
			return nil, err
		}
		if res.Parallel, err = MeasureParallelVerify(verifier, cnt.Count, samplesE, samplesS, runtime.NumCPU(), cfg.VerifyBatches, cfg.VerifyBatch, nil); err != nil {
			return nil, err
		}
	}

	arms := cfg.Arms()
	res.Order = Order(arms, cfg.Rounds)
	byName := map[string]*ArmResult{}
	for _, a := range arms {
		res.Arms = append(res.Arms, ArmResult{Arm: a, Status: ArmMeasured, Runs: []RunResult{}})
	}
	for i := range res.Arms {
		byName[res.Arms[i].Name] = &res.Arms[i]
	}
	seq, total := 0, cfg.Rounds*len(arms)
	for r, names := range res.Order {
		for _, name := range names {
			ar := byName[name]
			seq++
			if ar.Status != ArmMeasured {
				continue
			}
			if seq > 1 && cfg.Cooldown > 0 {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(cfg.Cooldown):
				}
			}
			rr := runChild(ctx, cfg, ar.Argv)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			rr.Arm, rr.Round, rr.Seq = name, r+1, seq
			log.Info(fmt.Sprintf("valbench: %d/%d round %d %-7s wall %6.2fs cpu %6.2fs rss %6.1f MiB load %.2f exit %d",
				seq, total, r+1, name, rr.WallS, rr.CPUS, float64(rr.MaxRSSKiB)/1024, rr.Load1, rr.ExitCode))
			if reason, ok := unavailable(rr); ok && ar.Kind == KindUtxod {
				ar.Status, ar.Reason = ArmUnavailable, reason
				ar.Runs = append(ar.Runs, rr)
				log.Warn("valbench: store unavailable", "store", name, "reason", reason)
				continue
			}
			ar.Runs = append(ar.Runs, rr)
			if rr.ExitCode != 0 || rr.Error != "" {
				ar.Status, ar.Reason = ArmFailed, fmt.Sprintf("round %d: %s", r+1, failure(rr))
				res.Problems = append(res.Problems, fmt.Sprintf("%s %s", name, ar.Reason))
			}
		}
	}

	if cfg.Floor && res.VerifyCost != nil {
		runtime.GC()
		if _, err := MeasureVerifyCost(verifier, samplesE, samplesS, cfg.VerifyBatches, cfg.VerifyBatch, res.VerifyCost); err != nil {
			return nil, err
		}
		if res.Parallel != nil {
			if _, err := MeasureParallelVerify(verifier, res.Count.Count, samplesE, samplesS, runtime.NumCPU(), cfg.VerifyBatches, cfg.VerifyBatch, res.Parallel); err != nil {
				return nil, err
			}
		}
		f := ComputeFloor(res.Count.Count, res.VerifyCost, runtime.NumCPU())
		res.Floor = &f
		if res.Parallel != nil {
			res.Parallel.finish(f)
		}
		if res.SigFree != nil && f.Cores > 0 {
			res.SigFree.BoundS = (f.CPUSeconds + res.SigFree.CPUMedianS) / float64(f.Cores)
		}
	}
	res.Problems = append(res.Problems, checkRuns(res)...)
	summarise(res)
	res.LoadEnd = loadAvg()
	res.FinishedAt = time.Now().UTC().Truncate(time.Second)
	res.OK = len(res.Problems) == 0
	return res, nil
}

// checkRuns requires every successful run to end at the corpus tip and the
// utxod runs to agree on the chainstate digests.
func checkRuns(res *Result) []string {
	var problems []string
	var ref *gate.Digests
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
			if ar.Kind != KindUtxod || r.Digests == nil {
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
		var wall, cpu, rss []float64
		for _, r := range ar.Runs {
			if r.ExitCode == 0 && r.Error == "" {
				wall = append(wall, r.WallS)
				cpu = append(cpu, r.CPUS)
				rss = append(rss, float64(r.MaxRSSKiB)/1024)
			}
		}
		if len(wall) == 0 || ar.Status != ArmMeasured {
			continue
		}
		ar.WallMedianS, ar.WallMinS, ar.WallMaxS = gate.Median(wall), slices.Min(wall), slices.Max(wall)
		ar.CPUMedianS, ar.CPUMinS, ar.CPUMaxS = gate.Median(cpu), slices.Min(cpu), slices.Max(cpu)
		ar.RSSMedianMiB = gate.Median(rss)
		if ar.Kind == KindBtcd {
			btcd = ar
		}
		if f := res.Floor; f != nil {
			ar.WallOverFloor = ratio(ar.WallMedianS, f.Seconds)
			ar.CPUOverSigCPU = ratio(ar.CPUMedianS, f.CPUSeconds)
		}
	}
	if btcd == nil {
		return
	}
	for i := range res.Arms {
		ar := &res.Arms[i]
		if ar.WallMedianS > 0 {
			ar.BtcdWall = ratio(btcd.WallMedianS, ar.WallMedianS)
			ar.BtcdCPU = ratio(btcd.CPUMedianS, ar.CPUMedianS)
		}
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// runChild runs argv with a fresh {datadir} inside a private temporary
// directory and measures it.
func runChild(ctx context.Context, cfg Config, argv []string) RunResult {
	r := RunResult{ExitCode: -1}
	tmp, err := os.MkdirTemp(cfg.Workdir, "valbench-")
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer os.RemoveAll(tmp)
	datadir := filepath.Join(tmp, "datadir")
	r.Argv = make([]string, len(argv))
	for i, a := range argv {
		r.Argv[i] = strings.ReplaceAll(a, datadirPlaceholder, datadir)
	}
	if cfg.RunTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.RunTimeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, r.Argv[0], r.Argv[1:]...)
	cmd.Dir = tmp
	var stdout bytes.Buffer
	stderr := &gate.TailBuffer{Max: 16 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	r.Load1 = loadAvg()[0]
	if kib, err := gate.ResetPeakRSS(); err == nil {
		r.ParentRSSKiB = kib
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.Error = err.Error()
		return r
	}
	werr := cmd.Wait()
	r.WallS = time.Since(start).Seconds()
	if ps := cmd.ProcessState; ps != nil {
		r.ExitCode = ps.ExitCode()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
			r.CPUUserS = float64(ru.Utime.Nano()) / 1e9
			r.CPUSysS = float64(ru.Stime.Nano()) / 1e9
			r.MaxRSSKiB = ru.Maxrss // KiB on Linux
		}
		r.CPUS = r.CPUUserS + r.CPUSysS
	}
	if werr != nil && r.ExitCode == 0 {
		r.Error = werr.Error()
	}
	if ctx.Err() != nil && cfg.RunTimeout > 0 {
		r.Error = fmt.Sprintf("killed after %v", cfg.RunTimeout)
	}
	r.DatadirB = gate.DirSize(datadir)
	if r.ExitCode == 0 && r.Error == "" {
		if err := parseOutput(stdout.Bytes(), &r); err != nil {
			r.Error = err.Error()
		}
	}
	if r.ExitCode != 0 || r.Error != "" {
		r.Stderr = stderr.String()
	}
	return r
}

// parseOutput reads the last JSON object of a child's stdout: btcdreplay's
// summary (tip, height) or utxod's chainstate (bestblock, height, digests).
func parseOutput(out []byte, r *RunResult) error {
	dec := json.NewDecoder(bytes.NewReader(out))
	var last map[string]json.RawMessage
	for {
		var m map[string]json.RawMessage
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("stdout is not --json output: %w", err)
		}
		last = m
	}
	if last == nil {
		return errors.New("no JSON object on stdout")
	}
	b, err := json.Marshal(last)
	if err != nil {
		return err
	}
	if _, ok := last["bestblock"]; ok {
		var d gate.Digests
		if err := json.Unmarshal(b, &d); err != nil {
			return fmt.Errorf("utxod chainstate: %w", err)
		}
		r.Digests, r.Tip, r.Height = &d, d.BestBlock, d.Height
		return nil
	}
	var s struct {
		Tip    string `json:"tip"`
		Height int    `json:"height"`
	}
	if err := json.Unmarshal(b, &s); err != nil || s.Tip == "" {
		return fmt.Errorf("no tip in the JSON output (%v)", err)
	}
	r.Tip, r.Height = s.Tip, s.Height
	if err := json.Unmarshal(b, &r.Output); err != nil {
		return err
	}
	return nil
}

// unavailable reports whether a utxod run failed because the binary lacks
// the store (e.g. rocksdb without the build tag).
func unavailable(r RunResult) (string, bool) { return gate.Unavailable(r.ExitCode, r.Stderr) }

func failure(r RunResult) string {
	msg := fmt.Sprintf("exit %d", r.ExitCode)
	if r.Error != "" {
		msg += " (" + r.Error + ")"
	}
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		msg += ": " + last
	}
	return msg
}

// loadAvg reads /proc/loadavg (zeros where unavailable).
func loadAvg() [3]float64 {
	var l [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l
	}
	f := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(f); i++ {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l
}

// moduleVersion is the version of module path compiled into the binary.
func moduleVersion(bin, path string) string {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "unknown"
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			return d.Version
		}
	}
	return "unknown"
}
