package gate

import "time"

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
	CapturedAt time.Time         `json:"captured_at"`
	Git        GitIdentity       `json:"git"`
	Binaries   map[string]Binary `json:"binaries"` // by arm
	Corpus     CorpusIdentity    `json:"corpus"`
	Host       HostIdentity      `json:"host"`
	Commits    map[string]string `json:"commits"` // arm → --control-commit/--candidate-commit label ("" if none)
}

// GitIdentity is the working tree the gate ran in.
type GitIdentity struct {
	Head  string `json:"head"`            // git rev-parse HEAD, "" outside a repository
	Dirty *bool  `json:"dirty,omitempty"` // uncommitted changes (git status --porcelain non-empty)
	Dir   string `json:"dir"`
}

// Binary identifies one arm's executable.
type Binary struct {
	Path        string `json:"path"`
	SHA256      string `json:"sha256"`
	Bytes       int64  `json:"bytes"`
	GoVersion   string `json:"go_version,omitempty"`   // from the binary's build info
	VCSRevision string `json:"vcs_revision,omitempty"` // from the binary's build info, if stamped
	VCSModified *bool  `json:"vcs_modified,omitempty"`
}

// CorpusIdentity identifies the block file.
type CorpusIdentity struct {
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Bytes   int64  `json:"bytes"`
	Network string `json:"network"`
	// Source and PrefixBlocks are set when the corpus is the first
	// PrefixBlocks blocks of Source (--corpus-blocks); Path is then the
	// prefix file, which the gate deletes afterwards (SHA256 identifies it).
	Source       string `json:"source,omitempty"`
	SourceSHA256 string `json:"source_sha256,omitempty"`
	PrefixBlocks int    `json:"prefix_blocks,omitempty"`
	Blocks       int    `json:"blocks"`    // framed blocks in the file
	Height       int    `json:"height"`    // height of the best-linked tip (genesis = 0)
	StopHash     string `json:"stop_hash"` // that tip's hash: every run must end there
}

// HostIdentity describes the machine.
type HostIdentity struct {
	CPUModel  string          `json:"cpu_model"`
	CPUVendor string          `json:"cpu_vendor"`
	Features  map[string]bool `json:"features"` // avx2, avx512f, avx512bw, sha
	Cores     int             `json:"cores"`    // runtime.NumCPU
	Kernel    string          `json:"kernel"`   // uname -srvm
	OS        string          `json:"os"`
	Arch      string          `json:"arch"`
	GoVersion string          `json:"go_version"` // of the gate binary
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
}

// Pin is the CPU pinning of the children.
type Pin struct {
	CPUs   string `json:"cpus"`   // "" = not pinned
	Method string `json:"method"` // none, taskset, sched_setaffinity
}

// Digests are the chainstate values a run reports (utxod --json).
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

// RunResult is one child process.
type RunResult struct {
	Seq       int      `json:"seq"`   // 1-based position in the store's run order
	Arm       string   `json:"arm"`   // control or candidate
	Index     int      `json:"index"` // 1-based within arm and store
	Argv      []string `json:"argv"`
	WallS     float64  `json:"wall_s"`
	CPUUserS  float64  `json:"cpu_user_s"`
	CPUSysS   float64  `json:"cpu_sys_s"`
	CPUS      float64  `json:"cpu_s"` // user + sys
	MaxRSSKiB int64    `json:"max_rss_kib"`
	// ParentRSSKiB is the harness's RSS when the child started, after
	// ResetPeakRSS: no child can report a smaller peak (0: not measured).
	ParentRSSKiB int64    `json:"parent_rss_kib,omitempty"`
	ExitCode     int      `json:"exit_code"`
	DatadirB     int64    `json:"datadir_bytes"` // store footprint at exit
	Digests      *Digests `json:"digests"`       // nil if the output had none
	Error        string   `json:"error,omitempty"`
	Stderr       string   `json:"stderr_tail,omitempty"` // only for failed runs
}

// ArmSummary aggregates one arm's runs on one store.
type ArmSummary struct {
	Runs         int     `json:"runs"`
	WallMedianS  float64 `json:"wall_median_s"`
	WallMinS     float64 `json:"wall_min_s"`
	WallMaxS     float64 `json:"wall_max_s"`
	CPUMedianS   float64 `json:"cpu_median_s"`
	CPUMinS      float64 `json:"cpu_min_s"`
	CPUMaxS      float64 `json:"cpu_max_s"`
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
}

// Correctness is the cross-run digest comparison.
type Correctness struct {
	OK         bool     `json:"ok"`
	Reference  *Digests `json:"reference"` // the first successful run's digests
	Compared   int      `json:"compared"`  // runs compared
	Mismatches []string `json:"mismatches"`
	Notes      []string `json:"notes,omitempty"`
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
