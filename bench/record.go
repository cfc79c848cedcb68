package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Record is one measured child process.
type Record struct {
	Argv      []string `json:"argv"` // as run, before any pinning wrapper
	WallS     float64  `json:"wall_s"`
	CPUUserS  float64  `json:"cpu_user_s"`
	CPUSysS   float64  `json:"cpu_sys_s"`
	CPUS      float64  `json:"cpu_s"` // user + sys
	MaxRSSKiB int64    `json:"max_rss_kib"`
	// ParentRSSKiB is the harness's RSS when the child started, after
	// ResetPeakRSS: no child can report a smaller peak (0: not measured).
	ParentRSSKiB int64  `json:"parent_rss_kib,omitempty"`
	ExitCode     int    `json:"exit_code"`
	DatadirB     int64  `json:"datadir_bytes"` // store footprint at exit
	Error        string `json:"error,omitempty"`
	Stderr       string `json:"stderr_tail,omitempty"` // failed runs only
	// Stdout is what the child printed (at most stdoutMax bytes).
	Stdout []byte `json:"-"`
	tail   string // stderr's tail, kept in Stderr once the run fails
}

// OK reports whether the child exited 0 and nothing marked it failed.
func (r *Record) OK() bool { return r.ExitCode == 0 && r.Error == "" }

// Fail marks the run failed with err (e.g. its output does not say what it
// must) and keeps its stderr tail.
func (r *Record) Fail(err error) {
	r.Error = err.Error()
	r.Stderr = r.tail
}

// Failure says why a failed run failed: the error, the exit status and the
// last line of its stderr.
func (r *Record) Failure() string {
	if r.Error != "" && r.ExitCode == 0 {
		return r.Error
	}
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

var unavailableRE = regexp.MustCompile(`(?i)(unknown store|not available in this build|not compiled in)`)

// Unavailable reports whether the run failed because the binary lacks the
// store it was asked for (unknown name, or a stub such as rocksdb without the
// build tag), and the stderr line that says so.
func (r *Record) Unavailable() (string, bool) {
	if r.ExitCode == 0 {
		return "", false
	}
	for _, line := range strings.Split(r.Stderr, "\n") {
		if unavailableRE.MatchString(line) {
			return strings.TrimSpace(line), true
		}
	}
	return "", false
}

// Digests are the chainstate values `utxod import --json` reports.
type Digests struct {
	Height          int    `json:"height"`
	BestBlock       string `json:"bestblock"`
	TxOuts          uint64 `json:"txouts"`
	Transactions    uint64 `json:"transactions"`
	BogoSize        uint64 `json:"bogosize"`
	TotalAmountSat  int64  `json:"total_amount_sat"`
	MuHash          string `json:"muhash"`
	HashSerialized3 string `json:"hash_serialized_3"`
}

// ParseDigests reads the last JSON object with a "bestblock" on a child's
// stdout (utxod import --json prints the chainstate there).
func ParseDigests(stdout []byte) (*Digests, error) {
	b, err := LastJSON(stdout, "bestblock")
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, errors.New("no --json chainstate (an object with bestblock) on stdout")
	}
	var d Digests
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("stdout chainstate: %w", err)
	}
	return &d, nil
}

// LastJSON returns the last of the JSON objects on stdout that has the
// field key, or nil if none has.
func LastJSON(stdout []byte, key string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(stdout))
	var last []byte
	for {
		var raw map[string]json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return last, nil
			}
			return nil, fmt.Errorf("stdout is not --json output: %w", err)
		}
		if _, ok := raw[key]; ok {
			last, _ = json.Marshal(raw)
		}
	}
}

// Times are the medians and ranges of wall and CPU (user + sys) time over
// an arm's successful runs, in seconds, as the tools' JSON reports them.
type Times struct {
	WallMedianS float64 `json:"wall_median_s"`
	WallMinS    float64 `json:"wall_min_s"`
	WallMaxS    float64 `json:"wall_max_s"`
	CPUMedianS  float64 `json:"cpu_median_s"`
	CPUMinS     float64 `json:"cpu_min_s"`
	CPUMaxS     float64 `json:"cpu_max_s"`
}

// Summary is one arm's successful runs.
type Summary struct {
	Runs int
	Times
	RSSMedianKiB, RSSMinKiB, RSSMaxKiB float64 // peak RSS
}

// Summarize computes the medians and ranges of the successful runs in recs
// (all zero without one).
func Summarize(recs []Record) Summary {
	var wall, cpu, rss []float64
	for _, r := range recs {
		if r.OK() {
			wall = append(wall, r.WallS)
			cpu = append(cpu, r.CPUS)
			rss = append(rss, float64(r.MaxRSSKiB))
		}
	}
	if len(wall) == 0 {
		return Summary{}
	}
	return Summary{
		Runs: len(wall),
		Times: Times{
			WallMedianS: Median(wall), WallMinS: slices.Min(wall), WallMaxS: slices.Max(wall),
			CPUMedianS: Median(cpu), CPUMinS: slices.Min(cpu), CPUMaxS: slices.Max(cpu),
		},
		RSSMedianKiB: Median(rss), RSSMinKiB: slices.Min(rss), RSSMaxKiB: slices.Max(rss),
	}
}

// Median of xs (the mean of the middle two for an even count); 0 if empty.
// xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Ratio is a/b, or 0 when b is 0 (JSON has no Inf/NaN).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
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
