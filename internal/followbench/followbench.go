// Package followbench measures following against importing: the same
// blocks connected by "utxod import" from a block file and by "utxod
// follow" from a Core REST source (internal/corerest's command serving
// that file), as whole processes on fresh datadirs, alternating the order
// (ABBA) round by round. It reports wall time, the follower's and the
// source's CPU, peak RSS and how long validation waited for downloads,
// with medians and the import/follow ratios (docs/benchmarks/follow.md).
package followbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"utxod/internal/bench"
)

// Config configures a run.
type Config struct {
	Utxod, Corerest string // binaries
	Corpus          string // block file (Core framing)
	Network         string
	Backend         string
	Rounds          int
	Work            string   // scratch directory for datadirs
	UtxodArgs       []string // extra flags for both arms
	FollowArgs      []string // extra flags for the follow arm
	Log             io.Writer
}

// Run is one measured process.
type Run struct {
	Arm            string  `json:"arm"` // import or follow
	Round          int     `json:"round"`
	WallSeconds    float64 `json:"wall_seconds"`
	CPUSeconds     float64 `json:"cpu_seconds"`        // utxod, user+system
	SourceCPU      float64 `json:"source_cpu_seconds"` // corerest during the run (follow arm)
	PeakRSSMiB     float64 `json:"peak_rss_mib"`
	FetchWaitSecs  float64 `json:"fetch_wait_seconds"` // follow arm: validation waiting for downloads
	BestBlock      string  `json:"bestblock"`
	MuHash         string  `json:"muhash"`
	Height         float64 `json:"height"`
	StartupSeconds float64 `json:"-"`
}

// Result is the whole measurement.
type Result struct {
	Corpus     string  `json:"corpus"`
	Network    string  `json:"network"`
	Backend    string  `json:"backend"`
	Rounds     int     `json:"rounds"`
	Runs       []Run   `json:"runs"`
	ImportWall float64 `json:"median_import_wall_seconds"`
	FollowWall float64 `json:"median_follow_wall_seconds"`
	ImportCPU  float64 `json:"median_import_cpu_seconds"`
	FollowCPU  float64 `json:"median_follow_cpu_seconds"`
	SourceCPU  float64 `json:"median_source_cpu_seconds"`
	ImportRSS  float64 `json:"median_import_peak_rss_mib"`
	FollowRSS  float64 `json:"median_follow_peak_rss_mib"`
	FetchWait  float64 `json:"median_fetch_wait_seconds"`
	// SpeedRatio is the median over rounds of import wall ÷ follow wall
	// (1: following is as fast as importing; the goal is ≥ 0.9).
	SpeedRatio float64 `json:"speed_ratio"`
	// CPURatio is import CPU ÷ follow CPU (the follower's process only).
	CPURatio float64 `json:"cpu_ratio"`
}

// Measure runs the benchmark.
func Measure(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Rounds <= 0 {
		cfg.Rounds = 3
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	src, url, err := startSource(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() { _ = src.Process.Signal(syscall.SIGTERM); _ = src.Wait() }()
	res := &Result{Corpus: cfg.Corpus, Network: cfg.Network, Backend: cfg.Backend, Rounds: cfg.Rounds}
	var speed, cpu []float64
	for round := 1; round <= cfg.Rounds; round++ {
		arms := []string{"import", "follow"}
		if round%2 == 0 {
			arms = []string{"follow", "import"}
		}
		byArm := map[string]Run{}
		for _, arm := range arms {
			r, err := runArm(ctx, cfg, arm, round, url, src.Process.Pid)
			if err != nil {
				return nil, fmt.Errorf("round %d %s: %w", round, arm, err)
			}
			fmt.Fprintf(cfg.Log, "round %d %-6s wall %6.2f s  cpu %6.2f s  source cpu %5.2f s  rss %5.0f MiB  fetch wait %5.2f s  height %.0f\n",
				round, arm, r.WallSeconds, r.CPUSeconds, r.SourceCPU, r.PeakRSSMiB, r.FetchWaitSecs, r.Height)
			res.Runs = append(res.Runs, r)
			byArm[arm] = r
		}
		im, fo := byArm["import"], byArm["follow"]
		if im.BestBlock != fo.BestBlock || im.MuHash != fo.MuHash || im.BestBlock == "" {
			return nil, fmt.Errorf("round %d: import ends at %s muhash %s, follow at %s muhash %s", round, im.BestBlock, im.MuHash, fo.BestBlock, fo.MuHash)
		}
		speed = append(speed, im.WallSeconds/fo.WallSeconds)
		cpu = append(cpu, im.CPUSeconds/fo.CPUSeconds)
	}
	pick := func(arm string, f func(Run) float64) float64 {
		var xs []float64
		for _, r := range res.Runs {
			if r.Arm == arm {
				xs = append(xs, f(r))
			}
		}
		return bench.Median(xs)
	}
	res.ImportWall = pick("import", func(r Run) float64 { return r.WallSeconds })
	res.FollowWall = pick("follow", func(r Run) float64 { return r.WallSeconds })
	res.ImportCPU = pick("import", func(r Run) float64 { return r.CPUSeconds })
	res.FollowCPU = pick("follow", func(r Run) float64 { return r.CPUSeconds })
	res.SourceCPU = pick("follow", func(r Run) float64 { return r.SourceCPU })
	res.ImportRSS = pick("import", func(r Run) float64 { return r.PeakRSSMiB })
	res.FollowRSS = pick("follow", func(r Run) float64 { return r.PeakRSSMiB })
	res.FetchWait = pick("follow", func(r Run) float64 { return r.FetchWaitSecs })
	res.SpeedRatio, res.CPURatio = bench.Median(speed), bench.Median(cpu)
	return res, nil
}

// startSource starts the Core REST stand-in on the corpus and waits for
// its address.
func startSource(ctx context.Context, cfg Config) (*exec.Cmd, string, error) {
	cmd := exec.CommandContext(ctx, cfg.Corerest, "--network", cfg.Network, "--blocks", cfg.Corpus, "--listen", "127.0.0.1:0")
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		return nil, "", err
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
		return nil, "", errors.New("corerest did not start")
	}
}

var fetchWaitRE = regexp.MustCompile(`fetch_wait_seconds=([0-9.]+)`)

// runArm runs one utxod process on a fresh datadir.
func runArm(ctx context.Context, cfg Config, arm string, round int, url string, srcPid int) (Run, error) {
	dir := filepath.Join(cfg.Work, fmt.Sprintf("%s-%d", arm, round))
	if err := os.RemoveAll(dir); err != nil {
		return Run{}, err
	}
	defer os.RemoveAll(dir)
	args := []string{arm, "--network", cfg.Network, "--backend", cfg.Backend, "--datadir", dir, "--json", "--hash-type", "muhash", "--log-level", "info"}
	args = append(args, cfg.UtxodArgs...)
	if arm == "follow" {
		args = append(args, "--follow", url)
		args = append(args, cfg.FollowArgs...)
	} else {
		args = append(args, cfg.Corpus)
	}
	if _, err := bench.ResetPeakRSS(); err != nil {
		return Run{}, err
	}
	cmd := exec.CommandContext(ctx, cfg.Utxod, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	srcBefore := procCPU(srcPid)
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start).Seconds()
	srcAfter := procCPU(srcPid)
	if err != nil {
		return Run{}, fmt.Errorf("%v: %v\n%s", cmd.Args, err, tail(stderr.String()))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r := Run{Arm: arm, Round: round, WallSeconds: wall,
		CPUSeconds: tv(ru.Utime) + tv(ru.Stime), PeakRSSMiB: float64(ru.Maxrss) / 1024}
	if arm == "follow" {
		r.SourceCPU = srcAfter - srcBefore
		for _, m := range fetchWaitRE.FindAllStringSubmatch(stderr.String(), -1) {
			v, _ := strconv.ParseFloat(m[1], 64)
			r.FetchWaitSecs += v
		}
	}
	var info struct {
		Height    float64 `json:"height"`
		BestBlock string  `json:"bestblock"`
		MuHash    string  `json:"muhash"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil {
		return Run{}, fmt.Errorf("%s: output %q: %w", arm, tail(stdout.String()), err)
	}
	r.BestBlock, r.MuHash, r.Height = info.BestBlock, info.MuHash, info.Height
	return r, nil
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// procCPU is a process's user+system CPU seconds from /proc (0 if
// unreadable); clock ticks are USER_HZ, 100 on Linux.
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

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

// Markdown renders the result as the table in docs/benchmarks/follow.md.
func (r *Result) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| arm | wall (median) | utxod CPU | source CPU | peak RSS | validation waiting for downloads |\n|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| import from file | %.2f s | %.2f s | — | %.0f MiB | — |\n", r.ImportWall, r.ImportCPU, r.ImportRSS)
	fmt.Fprintf(&b, "| follow over REST | %.2f s | %.2f s | %.2f s | %.0f MiB | %.2f s |\n", r.FollowWall, r.FollowCPU, r.SourceCPU, r.FollowRSS, r.FetchWait)
	fmt.Fprintf(&b, "\nSpeed ratio (import wall ÷ follow wall, median of %d paired rounds): **%.3f**; CPU ratio (import ÷ follower): %.3f.\n", r.Rounds, r.SpeedRatio, r.CPURatio)
	return b.String()
}
