// Package followbench measures following against importing on the
// bench runner: the same blocks connected by `utxod import` from a
// block file and by `utxod follow` from a Core REST source (testkit/cmd/corerest
// serving that file), as child processes on fresh datadirs, alternating
// ABBA. Per run it keeps the bench.Record (wall, CPU, peak RSS), the
// source's CPU during the run and how long validation waited for downloads
// (the follower's fetch_wait_seconds log field); the result has medians and
// the import/follow ratios paired by round (bench/results/follow.md).
package followbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"utxod/bench"
)

// Config configures a measurement.
type Config struct {
	UtxodBin, CorerestBin string
	Corpus                string // block file (Core framing)
	Network, Backend      string
	Rounds                int
	Cooldown              time.Duration
	Workdir               string
	RunTimeout            time.Duration
	UtxodArgs             []string // extra flags for both arms
	FollowArgs            []string // extra flags for the follow arm
	Log                   *slog.Logger
}

// Run is one measured process.
type Run struct {
	Arm   string  `json:"arm"` // import or follow
	Round int     `json:"round"`
	Load1 float64 `json:"load1"` // 1-minute load average as it started
	bench.Record
	// SourceCPUS is the source's user+system CPU during the run (follow).
	SourceCPUS float64 `json:"source_cpu_s"`
	// FetchWaitS is how long validation waited for downloads (follow).
	FetchWaitS float64       `json:"fetch_wait_s"`
	Digests    bench.Digests `json:"digests"`
}

// Arm summarises one arm's runs.
type Arm struct {
	bench.Summary
	SourceCPUMedianS float64 `json:"source_cpu_median_s,omitempty"`
	FetchWaitMedianS float64 `json:"fetch_wait_median_s,omitempty"`
}

// Result is the whole measurement.
type Result struct {
	Corpus  string             `json:"corpus"`
	Network string             `json:"network"`
	Backend string             `json:"backend"`
	Rounds  int                `json:"rounds"`
	Host    bench.HostIdentity `json:"host"`
	Runs    []Run              `json:"runs"`
	Import  Arm                `json:"import"`
	Follow  Arm                `json:"follow"`
	// SpeedRatio is the median over rounds of import wall ÷ follow wall
	// (1: following is as fast as importing; the goal is ≥ 0.9).
	SpeedRatio float64 `json:"speed_ratio"`
	// CPURatio is the median over rounds of import CPU ÷ follower CPU (the
	// follower's process only; the source's CPU is reported apart).
	CPURatio float64 `json:"cpu_ratio"`
}

// Measure runs the benchmark.
func Measure(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Rounds <= 0 {
		cfg.Rounds = 3
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Children run in their own directories.
	for _, p := range []*string{&cfg.Corpus, &cfg.UtxodBin, &cfg.CorerestBin} {
		if abs, err := filepath.Abs(*p); err == nil && strings.ContainsRune(*p, filepath.Separator) {
			*p = abs
		}
	}
	src, url, err := startSource(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() { _ = src.Process.Signal(syscall.SIGTERM); _ = src.Wait() }()
	common := func(arm, datadir string) []string {
		return append([]string{cfg.UtxodBin, arm, "--network", cfg.Network, "--backend", cfg.Backend, "--datadir", datadir,
			"--json", "--hash-type", "muhash", "--log-level", "info"}, cfg.UtxodArgs...)
	}
	arms := []bench.Arm{
		{Name: "import", Command: func(_ bench.Step, _, datadir string) (bench.Command, error) {
			return bench.Command{Argv: append(common("import", datadir), cfg.Corpus)}, nil
		}},
		{Name: "follow", Command: func(_ bench.Step, _, datadir string) (bench.Command, error) {
			return bench.Command{Argv: append(append(common("follow", datadir), "--follow", url), cfg.FollowArgs...)}, nil
		}},
	}
	res := &Result{Corpus: cfg.Corpus, Network: cfg.Network, Backend: cfg.Backend, Rounds: cfg.Rounds, Host: bench.HostInfo()}
	pid := src.Process.Pid
	lastSrc := procCPU(pid)
	var failed error
	judge := func(s bench.Step, rec *bench.Record) bench.Outcome {
		now := procCPU(pid)
		run := Run{Arm: s.Arm, Round: s.Round, Load1: s.Load1, Record: *rec}
		run.Stdout = nil
		if s.Arm == "follow" {
			run.SourceCPUS = now - lastSrc
			run.FetchWaitS = fetchWait(rec.StderrTail())
		}
		lastSrc = now
		if !rec.OK() {
			failed = fmt.Errorf("round %d %s: %s", s.Round, s.Arm, rec.Failure())
			return bench.Failed
		}
		d, err := bench.ParseDigests(rec.Stdout)
		if err != nil {
			rec.Fail(err)
			failed = fmt.Errorf("round %d %s: %w", s.Round, s.Arm, err)
			return bench.Failed
		}
		run.Digests = *d
		res.Runs = append(res.Runs, run)
		return bench.Measured
	}
	r := bench.Runner{Workdir: cfg.Workdir, Prefix: "followbench-", Cooldown: cfg.Cooldown, RunTimeout: cfg.RunTimeout,
		StopOnFailure: true, Log: log}
	if err := r.Run(ctx, arms, cfg.Rounds, judge); err != nil {
		return nil, err
	}
	if failed != nil {
		return res, failed
	}
	return res, res.summarise()
}

// summarise checks that both arms of every round end in the same state and
// computes medians and paired ratios.
func (res *Result) summarise() error {
	byRound := map[int]map[string]Run{}
	var recs = map[string][]bench.Record{}
	var srcCPU, wait []float64
	for _, r := range res.Runs {
		if byRound[r.Round] == nil {
			byRound[r.Round] = map[string]Run{}
		}
		byRound[r.Round][r.Arm] = r
		recs[r.Arm] = append(recs[r.Arm], r.Record)
		if r.Arm == "follow" {
			srcCPU = append(srcCPU, r.SourceCPUS)
			wait = append(wait, r.FetchWaitS)
		}
	}
	var speed, cpu []float64
	for round := 1; round <= res.Rounds; round++ {
		im, fo := byRound[round]["import"], byRound[round]["follow"]
		if im.Digests.BestBlock == "" || im.Digests != fo.Digests {
			return fmt.Errorf("round %d: import ends at %s (muhash %s), follow at %s (muhash %s)", round,
				im.Digests.BestBlock, im.Digests.MuHash, fo.Digests.BestBlock, fo.Digests.MuHash)
		}
		speed = append(speed, bench.Ratio(im.WallS, fo.WallS))
		cpu = append(cpu, bench.Ratio(im.CPUS, fo.CPUS))
	}
	res.Import = Arm{Summary: bench.Summarize(recs["import"])}
	res.Follow = Arm{Summary: bench.Summarize(recs["follow"]), SourceCPUMedianS: bench.Median(srcCPU), FetchWaitMedianS: bench.Median(wait)}
	res.SpeedRatio, res.CPURatio = bench.Median(speed), bench.Median(cpu)
	return nil
}

// startSource starts corerest on the corpus and waits for its address.
func startSource(ctx context.Context, cfg Config) (*exec.Cmd, string, error) {
	cmd := exec.CommandContext(ctx, cfg.CorerestBin, "--network", cfg.Network, "--blocks", cfg.Corpus, "--listen", "127.0.0.1:0", "--log-level", "warn")
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("corerest: %w", err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "listening on "); ok {
				a, _, _ := strings.Cut(rest, " ")
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return cmd, a, nil
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, "", errors.New("corerest did not start")
	}
}

var fetchWaitRE = regexp.MustCompile(`fetch_wait_seconds=([0-9.]+)`)

// fetchWait sums the follower's fetch_wait_seconds log fields.
func fetchWait(stderr string) float64 {
	var sum float64
	for _, m := range fetchWaitRE.FindAllStringSubmatch(stderr, -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		sum += v
	}
	return sum
}

// procCPU is a process's user+system CPU seconds from /proc/PID/stat (0 if
// unreadable); the clock ticks are USER_HZ, 100 on Linux.
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

// Markdown renders the result as the table of bench/results/follow.md.
func (res *Result) Markdown() string {
	var b strings.Builder
	mib := func(kib float64) float64 { return kib / 1024 }
	fmt.Fprintf(&b, "| arm | wall (median, range) | utxod CPU (median, range) | source CPU | peak RSS | validation waiting for downloads |\n|---|---|---|---|---|---|\n")
	im, fo := res.Import, res.Follow
	fmt.Fprintf(&b, "| import from file | %.2f s (%.2f–%.2f) | %.2f s (%.2f–%.2f) | — | %.0f MiB | — |\n",
		im.WallMedianS, im.WallMinS, im.WallMaxS, im.CPUMedianS, im.CPUMinS, im.CPUMaxS, mib(im.RSSMedianKiB))
	fmt.Fprintf(&b, "| follow over REST | %.2f s (%.2f–%.2f) | %.2f s (%.2f–%.2f) | %.2f s | %.0f MiB | %.2f s |\n",
		fo.WallMedianS, fo.WallMinS, fo.WallMaxS, fo.CPUMedianS, fo.CPUMinS, fo.CPUMaxS, fo.SourceCPUMedianS, mib(fo.RSSMedianKiB), fo.FetchWaitMedianS)
	fmt.Fprintf(&b, "\nSpeed ratio (import wall ÷ follow wall, median of %d paired rounds): **%.3f**; CPU ratio (import ÷ follower): **%.3f**.\n",
		res.Rounds, res.SpeedRatio, res.CPURatio)
	return b.String()
}
