package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Arm is one side of the comparison.
type Arm struct {
	Template Template
	// Bin is the value of {bin} (the CLI defaults it to the running utxod).
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
	Log io.Writer
}

// Sequence returns the arms' run order within one store for pairs pairs:
// ABBA — control, candidate, candidate, control, control, candidate, …
func Sequence(pairs int) []string {
	seq := make([]string, 0, 2*pairs)
	for k := 0; k < pairs; k++ {
		if k%2 == 0 {
			seq = append(seq, Control, Candidate)
		} else {
			seq = append(seq, Candidate, Control)
		}
	}
	return seq
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
	logw := cfg.Log
	if logw == nil {
		logw = io.Discard
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
			Git:        GitInfo(ctx, cfg.RepoDir),
			Binaries:   map[string]Binary{},
			Host:       HostInfo(),
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
		info, err := BinaryInfo(bin)
		if err != nil {
			return nil, fmt.Errorf("gate: %s binary: %w", name, err)
		}
		c.Identity.Binaries[name] = info
	}
	var source *CorpusIdentity
	if cfg.CorpusBlocks > 0 {
		src, err := ScanCorpus(corpus, cfg.Network)
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
		if _, err := WritePrefix(corpus, cfg.Network, cfg.CorpusBlocks, f.Name()); err != nil {
			return nil, err
		}
		corpus = f.Name()
	}
	c.Identity.Corpus, err = ScanCorpus(corpus, cfg.Network)
	if err != nil {
		return nil, err
	}
	if source != nil {
		c.Identity.Corpus.Source, c.Identity.Corpus.SourceSHA256 = source.Path, source.SHA256
		c.Identity.Corpus.PrefixBlocks = c.Identity.Corpus.Blocks
	}
	pin, err := newPinner(cfg.Pin)
	if err != nil {
		return nil, err
	}
	c.Harness.Pin = Pin{CPUs: cfg.Pin, Method: pin.method()}

	vars := map[string]string{"network": cfg.Network, "corpus": corpus}
	measuredBefore := false
	seq := c.Harness.Sequence
	for _, store := range cfg.Backends {
		sr := StoreResult{Store: store, Status: StoreMeasured, Runs: []RunResult{}}
		count := map[string]int{}
	runs:
		for i, armName := range seq {
			if measuredBefore && cfg.Cooldown > 0 {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(cfg.Cooldown):
				}
			}
			count[armName]++
			arm := arms[armName]
			v := cloneVars(vars)
			v["bin"], v["backend"], v["arm"], v["run"] = arm.Bin, store, armName, fmt.Sprint(count[armName])
			r := runOne(ctx, cfg, pin, workdir, arm, v)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.Seq, r.Arm, r.Index = i+1, armName, count[armName]
			if reason, ok := unavailable(r); ok {
				sr.Status, sr.Reason = StoreUnavailable, reason
				sr.Runs = append(sr.Runs, r)
				fmt.Fprintf(logw, "gate: %-8s unavailable: %s\n", store, reason)
				break runs
			}
			measuredBefore = true
			sr.Runs = append(sr.Runs, r)
			fmt.Fprintf(logw, "gate: %-8s %d/%d %-9s #%d  wall %6.2fs  cpu %6.2fs  rss %7.1f MiB  exit %d\n",
				store, i+1, len(seq), armName, r.Index, r.WallS, r.CPUS, float64(r.MaxRSSKiB)/1024, r.ExitCode)
			if r.ExitCode != 0 || r.Error != "" {
				sr.Status, sr.Reason = StoreFailed, fmt.Sprintf("%s run %d failed: %s", armName, r.Index, runFailure(r))
				break runs
			}
		}
		if sr.Status == StoreMeasured {
			summarise(&sr)
		}
		c.Stores = append(c.Stores, sr)
	}
	finish(c, cfg.Rule)
	return c, nil
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

func cloneVars(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+8)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func runOne(ctx context.Context, cfg Config, pin pinner, workdir string, arm *Arm, vars map[string]string) RunResult {
	r := RunResult{ExitCode: -1}
	tmp, err := os.MkdirTemp(workdir, "utxod-gate-")
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer os.RemoveAll(tmp)
	vars["tmp"], vars["datadir"] = tmp, filepath.Join(tmp, "datadir")
	argv, err := arm.Template.Expand(vars)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	// Children run in tmp: a relative command path is the gate's, not tmp's.
	if strings.ContainsRune(argv[0], filepath.Separator) && !filepath.IsAbs(argv[0]) {
		if abs, err := filepath.Abs(argv[0]); err == nil {
			argv[0] = abs
		}
	}
	r.Argv = argv
	argv = pin.wrap(argv)
	if cfg.RunTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.RunTimeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), arm.Env...)
	cmd.Dir = tmp
	var stdout limitedBuffer
	stdout.max = 8 << 20
	stderr := TailBuffer{Max: 16 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if kib, err := ResetPeakRSS(); err == nil {
		r.ParentRSSKiB = kib
	}
	start := time.Now() // monotonic
	if err := pin.start(cmd); err != nil {
		r.Error = err.Error()
		return r
	}
	werr := cmd.Wait()
	wall := time.Since(start)
	r.WallS = wall.Seconds()
	if ps := cmd.ProcessState; ps != nil {
		r.ExitCode = ps.ExitCode()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
			r.CPUUserS = tvSeconds(ru.Utime)
			r.CPUSysS = tvSeconds(ru.Stime)
			r.MaxRSSKiB = ru.Maxrss // KiB on Linux
		}
		r.CPUS = r.CPUUserS + r.CPUSysS
	}
	if werr != nil && r.ExitCode == 0 {
		r.Error = werr.Error()
	}
	if ctx.Err() != nil && cfg.RunTimeout > 0 {
		r.Error = fmt.Sprintf("killed after --run-timeout %v", cfg.RunTimeout)
	}
	r.DatadirB = DirSize(vars["datadir"])
	if r.ExitCode == 0 && r.Error == "" {
		d, err := parseDigests(stdout.Bytes())
		if err != nil {
			r.Error = err.Error()
		} else {
			r.Digests = d
		}
	}
	if r.ExitCode != 0 || r.Error != "" {
		r.Stderr = stderr.String()
	}
	return r
}

func tvSeconds(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

// DirSize is the total size of the regular files under dir (0 on errors).
func DirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// parseDigests reads the last JSON object on the child's stdout (utxod
// import --json prints the chainstate there).
func parseDigests(out []byte) (*Digests, error) {
	dec := json.NewDecoder(bytes.NewReader(out))
	var last *Digests
	for {
		var raw map[string]json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("stdout is not the --json chainstate: %v", err)
		}
		if _, ok := raw["bestblock"]; !ok {
			continue
		}
		b, _ := json.Marshal(raw)
		var d Digests
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("stdout chainstate: %v", err)
		}
		last = &d
	}
	if last == nil {
		return nil, errors.New("no --json chainstate (an object with bestblock) on stdout")
	}
	return last, nil
}

var unavailableRE = regexp.MustCompile(`(?i)(unknown store|not available in this build|not compiled in)`)

// unavailable reports whether a run failed because the binary lacks the
// store (unknown name, or a stub such as rocksdb without the build tag).
func unavailable(r RunResult) (string, bool) { return Unavailable(r.ExitCode, r.Stderr) }

// Unavailable reports whether a child that exited with exitCode failed
// because the store it was asked for is not in its build (or unknown), and
// the stderr line that says so.
func Unavailable(exitCode int, stderr string) (string, bool) {
	if exitCode == 0 {
		return "", false
	}
	for _, line := range strings.Split(stderr, "\n") {
		if unavailableRE.MatchString(line) {
			return strings.TrimSpace(line), true
		}
	}
	return "", false
}

func runFailure(r RunResult) string {
	if r.Error != "" && r.ExitCode == 0 {
		return r.Error
	}
	msg := fmt.Sprintf("exit %d", r.ExitCode)
	if r.Error != "" {
		msg += " (" + r.Error + ")"
	}
	if line := lastLine(r.Stderr); line != "" {
		msg += ": " + line
	}
	return msg
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
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

// TailBuffer is an io.Writer that keeps the last Max bytes written (a
// child's stderr, whose end says why it failed).
type TailBuffer struct {
	buf []byte
	Max int
}

func (t *TailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.Max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.Max:]...)
	}
	return len(p), nil
}

func (t *TailBuffer) String() string {
	if len(t.buf) > t.Max {
		return string(t.buf[len(t.buf)-t.Max:])
	}
	return string(t.buf)
}
