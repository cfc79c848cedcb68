package bench

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

const (
	stdoutMax  = 8 << 20  // the --json output the tools parse is far smaller
	stderrTail = 16 << 10 // enough for the end of a log that says why a run failed
)

// Outcome is how a run counts, as the caller judges it.
type Outcome int

const (
	// Measured: the run counts (success, or a failure the caller records).
	Measured Outcome = iota
	// Unavailable: the arm cannot run in this build (e.g. a store the
	// binary lacks); its remaining runs are skipped and no cooldown follows.
	Unavailable
	// Failed: the arm's remaining runs are skipped.
	Failed
)

// Step is one run of a schedule, as the runner starts it.
type Step struct {
	Arm   string
	Round int     // 1-based
	Seq   int     // 1-based position in the schedule, skipped runs included
	Of    int     // runs in the schedule
	Index int     // 1-based run of this arm
	Load1 float64 // 1-minute load average as the run starts
}

// Command is one child process to run.
type Command struct {
	Argv []string
	Env  []string // appended to the harness's environment
}

// Arm is one side of a comparison.
type Arm struct {
	Name string
	// Command builds a run's command; dir is the run's private directory
	// (removed after the run, the child's working directory) and datadir a
	// fresh, not yet existing path inside it.
	Command func(s Step, dir, datadir string) (Command, error)
	// After, if set, runs once a run's child has exited 0, before its
	// directory is removed, and is not measured: it may read what the child
	// left in datadir (e.g. restart a node there to ask for its digests) and
	// record it in rec (rec.Stdout, or rec.Fail).
	After func(ctx context.Context, s Step, dir, datadir string, rec *Record)
}

// Runner runs arms' commands as measured child processes. A Runner may run
// several schedules one after another (the gate runs one per store); the
// cooldown carries over between them.
type Runner struct {
	// Workdir holds the per-run directories (default os.TempDir()).
	Workdir string
	// Prefix starts the per-run directory names.
	Prefix string
	// Cooldown is the pause before every run that follows a measured one.
	Cooldown time.Duration
	// RunTimeout kills a child that runs longer (0: no limit).
	RunTimeout time.Duration
	// Pin pins the children to CPUs (the zero Pinner does not).
	Pin Pinner
	// StopOnFailure ends a schedule at its first unavailable or failed run
	// (the gate judges a store on complete pairs only); otherwise only that
	// arm's remaining runs are skipped.
	StopOnFailure bool
	// Log receives a line per run (nil: discarded).
	Log *slog.Logger
	// BeforeRun, if set, runs just before each run starts (after the
	// cooldown); its error ends Run. A measurement taken there sees the
	// host as the run beside it does.
	BeforeRun func(ctx context.Context, s Step) error

	warm bool // a run was measured: the next one waits Cooldown first
}

// Order returns the arm names of each round. Two arms alternate ABBA
// (forward in odd rounds, reversed in even ones), so that linear drift
// cancels over each pair of rounds. Three or more rotate instead: round r
// starts r arms later. ABBA would run an arm twice in a row at every turn
// (…c | c…), and one slow spell of the host could then take two of its
// runs; rotated, no arm runs twice
// in a row, and every n rounds each arm runs once in each position.
func Order(names []string, rounds int) [][]string {
	out := make([][]string, rounds)
	n := len(names)
	for r := range out {
		if n >= rotateFrom {
			k := r % n
			out[r] = slices.Concat(names[k:], names[:k])
			continue
		}
		out[r] = slices.Clone(names)
		if r%2 == 1 {
			slices.Reverse(out[r])
		}
	}
	return out
}

// rotateFrom is the number of arms from which Order rotates instead of
// alternating ABBA.
const rotateFrom = 3

// DescribeOrder says in words how Order arranges names, for reports.
func DescribeOrder(names []string) string {
	first := strings.Join(names, ", ")
	if len(names) < rotateFrom {
		return "arms alternating ABBA (" + first + ", then reversed)"
	}
	return "arms rotating (" + first + ", then each round one arm later, so that no arm runs twice in a row)"
}

// Run runs rounds rounds of arms in Order. judge classifies each finished
// run (it may parse rec.Stdout and rec.Fail it) and keeps what it needs of
// the record. Run returns an error only when ctx ends or BeforeRun fails.
func (r *Runner) Run(ctx context.Context, arms []Arm, rounds int, judge func(Step, *Record) Outcome) error {
	log := r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	byName := map[string]*Arm{}
	var names []string
	for i := range arms {
		byName[arms[i].Name] = &arms[i]
		names = append(names, arms[i].Name)
	}
	skip := map[string]bool{}
	count := map[string]int{}
	seq, total := 0, rounds*len(arms)
	for round, order := range Order(names, rounds) {
		for _, name := range order {
			seq++
			if skip[name] {
				continue
			}
			if r.warm && r.Cooldown > 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(r.Cooldown):
				}
			}
			count[name]++
			s := Step{Arm: name, Round: round + 1, Seq: seq, Of: total, Index: count[name], Load1: LoadAvg()[0]}
			if r.BeforeRun != nil {
				if err := r.BeforeRun(ctx, s); err != nil {
					return err
				}
			}
			rec := r.runOne(ctx, byName[name], s)
			if err := ctx.Err(); err != nil {
				return err
			}
			out := judge(s, &rec)
			attrs := []any{"run", fmt.Sprintf("%d/%d", s.Seq, s.Of), "arm", name, "round", s.Round,
				"wall_s", fmt.Sprintf("%.2f", rec.WallS), "cpu_s", fmt.Sprintf("%.2f", rec.CPUS),
				"rss_mib", fmt.Sprintf("%.1f", float64(rec.MaxRSSKiB)/1024), "load1", fmt.Sprintf("%.2f", s.Load1), "exit", rec.ExitCode}
			switch out {
			case Unavailable:
				reason, _ := rec.Unavailable()
				log.Warn("arm unavailable", append(attrs, "reason", reason)...)
			case Failed:
				log.Warn("run failed", append(attrs, "error", rec.Failure())...)
			default:
				log.Info("run", attrs...)
			}
			if out != Unavailable {
				r.warm = true
			}
			if out != Measured {
				if r.StopOnFailure {
					return nil
				}
				skip[name] = true
			}
		}
	}
	return nil
}

// runOne runs one command in a fresh private directory and measures it.
func (r *Runner) runOne(ctx context.Context, arm *Arm, s Step) Record {
	rec := Record{ExitCode: -1}
	workdir := r.Workdir
	if workdir == "" {
		workdir = os.TempDir()
	}
	dir, err := os.MkdirTemp(workdir, r.Prefix)
	if err != nil {
		rec.Fail(err)
		return rec
	}
	defer os.RemoveAll(dir)
	datadir := filepath.Join(dir, "datadir")
	c, err := arm.Command(s, dir, datadir)
	if err == nil && len(c.Argv) == 0 {
		err = fmt.Errorf("arm %s: empty command", arm.Name)
	}
	if err != nil {
		rec.Fail(err)
		return rec
	}
	argv := slices.Clone(c.Argv)
	// Children run in dir: a relative command path is the harness's.
	if strings.ContainsRune(argv[0], filepath.Separator) && !filepath.IsAbs(argv[0]) {
		if abs, err := filepath.Abs(argv[0]); err == nil {
			argv[0] = abs
		}
	}
	rec.Argv = argv
	argv = r.Pin.wrap(argv)
	if r.RunTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.RunTimeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Dir = dir
	stdout := limitedBuffer{max: stdoutMax}
	stderr := tailBuffer{Max: stderrTail}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if kib, err := ResetPeakRSS(); err == nil {
		rec.ParentRSSKiB = kib
	}
	start := time.Now() // monotonic
	if err := r.Pin.start(cmd); err != nil {
		rec.Fail(err)
		return rec
	}
	werr := cmd.Wait()
	rec.WallS = time.Since(start).Seconds()
	if ps := cmd.ProcessState; ps != nil {
		rec.ExitCode = ps.ExitCode()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
			rec.CPUUserS = tvSeconds(ru.Utime)
			rec.CPUSysS = tvSeconds(ru.Stime)
			rec.MaxRSSKiB = ru.Maxrss // KiB on Linux
		}
		rec.CPUS = rec.CPUUserS + rec.CPUSysS
	}
	rec.DatadirB = DirSize(datadir)
	rec.Stdout, rec.tail = stdout.Bytes(), stderr.String()
	switch {
	case ctx.Err() != nil && r.RunTimeout > 0:
		rec.Fail(fmt.Errorf("killed after --run-timeout %v", r.RunTimeout))
	case werr != nil && rec.ExitCode == 0:
		rec.Fail(werr)
	case rec.ExitCode != 0:
		rec.Stderr = rec.tail
	}
	if arm.After != nil && rec.OK() && ctx.Err() == nil {
		arm.After(ctx, s, dir, datadir, &rec)
	}
	return rec
}

func tvSeconds(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

// limitedBuffer keeps the first max bytes written.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// tailBuffer is an io.Writer that keeps the last Max bytes written (a
// child's stderr, whose end says why it failed).
type tailBuffer struct {
	buf []byte
	Max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.Max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.Max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	if len(t.buf) > t.Max {
		return string(t.buf[len(t.buf)-t.Max:])
	}
	return string(t.buf)
}
