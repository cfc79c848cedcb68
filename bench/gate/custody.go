package gate

import (
	"time"

	"utxod/bench"
)

// SchemaID names the custody document format (docs/gate-custody.schema.json).
const SchemaID = "utxod-gate-custody-v1"

// Arm names.
const (
	Control   = "control"
	Candidate = "candidate"
)

// Verdict decisions.
const (
	Promote = "promote"
	Revert  = "revert"
	Invalid = "invalid"
)

// Store statuses.
const (
	StoreMeasured    = "measured"
	StoreUnavailable = "unavailable"
	StoreFailed      = "failed"
)

// Custody is the gate's chain-of-custody record: what was compared, on what,
// how, every measurement, and the verdict.
type Custody struct {
	Schema      string        `json:"schema"`
	Identity    Identity      `json:"identity"`
	Harness     Harness       `json:"harness"`
	Stores      []StoreResult `json:"stores"`
	Correctness Correctness   `json:"correctness"`
	Verdict     Verdict       `json:"verdict"`
}

// Identity pins down the inputs and the machine.
type Identity struct {
	CapturedAt time.Time               `json:"captured_at"`
	Git        bench.GitIdentity       `json:"git"`
	Binaries   map[string]bench.Binary `json:"binaries"` // by arm
	Corpus     bench.CorpusIdentity    `json:"corpus"`
	Host       bench.HostIdentity      `json:"host"`
	Commits    map[string]string       `json:"commits"` // arm → --control-commit/--candidate-commit label ("" if none)
}

// Harness records how the runs were made.
type Harness struct {
	Order           string            `json:"order"`    // "ABBA"
	Sequence        []string          `json:"sequence"` // arms in run order within one store
	Pairs           int               `json:"pairs"`
	CooldownS       float64           `json:"cooldown_s"`
	Pin             Pin               `json:"pin"`
	Templates       map[string]string `json:"templates"` // arm → template source
	Backends        []string          `json:"backends"`
	RequiredSpeedup float64           `json:"required_speedup"`
	MaxRegression   float64           `json:"max_regression"` // 0.03: candidate/control may exceed 1 by at most this
	RunTimeoutS     float64           `json:"run_timeout_s,omitempty"`
	Workdir         string            `json:"workdir"`
	// Env is what each arm's children get on top of the gate's own
	// environment (e.g. one GOMEMLIMIT for both arms).
	Env map[string][]string `json:"env,omitempty"`
}

// Pin is the CPU pinning of the children.
type Pin struct {
	CPUs   string `json:"cpus"`   // "" = not pinned
	Method string `json:"method"` // none, taskset, sched_setaffinity
}

// RunResult is one child process.
type RunResult struct {
	Seq   int    `json:"seq"`   // 1-based position in the store's run order
	Arm   string `json:"arm"`   // control or candidate
	Index int    `json:"index"` // 1-based within arm and store
	bench.Record
	Digests *bench.Digests `json:"digests"` // nil if the output had none
}

// ArmSummary aggregates one arm's runs on one store.
type ArmSummary struct {
	Runs int `json:"runs"`
	bench.Times
	RSSMedianKiB float64 `json:"max_rss_median_kib"`
	RSSMinKiB    int64   `json:"max_rss_min_kib"`
	RSSMaxKiB    int64   `json:"max_rss_max_kib"`
}

// StoreResult is everything measured on one store.
type StoreResult struct {
	Store       string                `json:"store"`
	Status      string                `json:"status"` // measured, unavailable, failed
	Reason      string                `json:"reason,omitempty"`
	Runs        []RunResult           `json:"runs"`
	Medians     map[string]ArmSummary `json:"medians,omitempty"` // by arm
	WallSpeedup float64               `json:"wall_speedup"`      // control median / candidate median
	CPUSpeedup  float64               `json:"cpu_speedup"`       // control median / candidate median
	RSSRatio    float64               `json:"rss_ratio"`         // candidate median / control median
	// Paired is the per-pair view (informational: the verdict uses the
	// medians above); nil without a complete pair.
	Paired *Paired `json:"paired,omitempty"`
}

// Paired compares each control run with the candidate run of the same
// index, which ran next to it in the ABBA order, so that drift of the host
// between pairs cancels in their ratio.
type Paired struct {
	Pairs       int     `json:"pairs"`
	WallSpeedup float64 `json:"wall_speedup_median"` // median over the pairs of control/candidate
	CPUSpeedup  float64 `json:"cpu_speedup_median"`
	RSSRatio    float64 `json:"rss_ratio_median"` // median over the pairs of candidate/control
	WallWins    int     `json:"wall_wins"`        // pairs whose candidate took less wall time
	CPUWins     int     `json:"cpu_wins"`         // pairs whose candidate took less CPU
}

// Correctness is the cross-run digest comparison.
type Correctness struct {
	OK         bool           `json:"ok"`
	Reference  *bench.Digests `json:"reference"` // the first successful run's digests
	Compared   int            `json:"compared"`  // runs compared
	Mismatches []string       `json:"mismatches"`
	Notes      []string       `json:"notes,omitempty"`
}

// Falsifier is one condition that blocks promotion along one primary axis.
type Falsifier struct {
	Axis   string  `json:"axis"`   // wall or cpu: the primary axis it falsifies
	Store  string  `json:"store"`  //
	Metric string  `json:"metric"` // wall_speedup, cpu_speedup or rss_ratio
	Value  float64 `json:"value"`
	Bound  float64 `json:"bound"`
	Op     string  `json:"op"` // the failed relation as written in the reason ("<" or ">")
}

func (f Falsifier) String() string {
	return f.Store + " " + f.Metric + " " + fmtRatio(f.Value) + " " + f.Op + " " + fmtRatio(f.Bound)
}

// Verdict is the gate's decision.
type Verdict struct {
	Decision   string      `json:"decision"`       // promote, revert, invalid
	Axes       []string    `json:"axes,omitempty"` // primary axes that cleared (promote)
	Reason     string      `json:"reason"`
	Falsifiers []Falsifier `json:"falsifiers"`
	Rule       string      `json:"rule"`
	Notes      []string    `json:"notes,omitempty"`
}
