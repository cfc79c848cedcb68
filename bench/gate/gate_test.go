package gate

// Integration tests: real gates over a tiny corpus (the first 2,001 blocks of
// testdata/mainnet/blk_0_to_14131.dat, heights 0–2000, written to a temp
// file) on the pebble store, with real utxod children.
//
// The utxod binary comes from UTXOD_GATE_TEST_BIN if set, otherwise the test
// builds it once with `go build -o $TMP/utxod utxod/cmd/utxod` (the build
// cache keeps that fast).
//
// The slowed candidate re-executes this test binary as a wrapper: with
// UTXOD_GATE_TEST_SLOW=CPU,SLEEP in its environment, TestMain burns CPU of
// the given duration, sleeps, and then execve(2)s the rest of its argv (the
// utxod command). The process and hence its rusage are the same before and
// after execve, so the candidate really costs more wall and more CPU time.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"utxod/bench"
)

const slowEnv = "UTXOD_GATE_TEST_SLOW"

var testTmp string

func TestMain(m *testing.M) {
	if spec, ok := os.LookupEnv(slowEnv); ok {
		slowWrapper(spec)
		return
	}
	var err error
	if testTmp, err = os.MkdirTemp("", "gate-test-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(testTmp)
	os.Exit(code)
}

// slowWrapper burns CPU, sleeps, then becomes os.Args[1:].
func slowWrapper(spec string) {
	cpuS, sleepS, _ := strings.Cut(spec, ",")
	burn, err1 := time.ParseDuration(cpuS)
	sleep, err2 := time.ParseDuration(sleepS)
	if err := errors.Join(err1, err2); err != nil || len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "slow wrapper: bad", slowEnv, spec, err)
		os.Exit(97)
	}
	x := uint64(1)
	for start := bench.ProcessCPU(); bench.ProcessCPU()-start < burn; {
		for i := 0; i < 1e6; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	time.Sleep(sleep)
	path, err := exec.LookPath(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "slow wrapper:", err, x)
		os.Exit(97)
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, slowEnv+"=") {
			env = append(env, e)
		}
	}
	err = syscall.Exec(path, os.Args[1:], env)
	fmt.Fprintln(os.Stderr, "slow wrapper: exec:", err)
	os.Exit(97)
}

var (
	buildOnce sync.Once
	utxodBin  string
	buildErr  error
	corpusPth string
)

// fixtures returns the utxod binary and the tiny corpus.
func fixtures(t *testing.T) (bin, corpus string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the gate measures Linux rusage")
	}
	buildOnce.Do(func() {
		corpusPth = filepath.Join(testTmp, "tiny.dat")
		_, buildErr = bench.WritePrefix("../../testdata/mainnet/blk_0_to_14131.dat", "main", 2001, corpusPth)
		if buildErr != nil {
			return
		}
		if b := os.Getenv("UTXOD_GATE_TEST_BIN"); b != "" {
			utxodBin = b
			return
		}
		utxodBin = filepath.Join(testTmp, "utxod")
		out, err := exec.Command("go", "build", "-o", utxodBin, "utxod/cmd/utxod").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build utxod/cmd/utxod: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return utxodBin, corpusPth
}

const importT = "{bin} import --network {network} --datadir {datadir} --backend {backend} --json --hash-type hash_serialized_3 --log-level warn"

func mustTemplate(t *testing.T, src string) Template {
	t.Helper()
	tpl, err := ParseTemplate(src)
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func baseConfig(t *testing.T, bin, corpus string) Config {
	var log bytes.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gate log:\n%s", log.String())
		}
	})
	return Config{
		Corpus:    corpus,
		Network:   "main",
		Backends:  []string{"pebble"},
		Control:   Arm{Template: mustTemplate(t, importT+" {corpus}"), Bin: bin, Commit: "control-label"},
		Candidate: Arm{Template: mustTemplate(t, importT+" {corpus}"), Bin: bin, Commit: "candidate-label"},
		Pairs:     1,
		Rule:      DefaultRule,
		Workdir:   t.TempDir(),
		Log:       slog.New(slog.NewTextHandler(&log, nil)),
	}
}

// checkCustody validates c against docs/gate-custody.schema.json, writes the
// report and checks the workdir holds no leftover run directory.
func checkCustody(t *testing.T, c *Custody, cfg Config) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "custody.json")
	if err := WriteCustody(c, out); err != nil {
		t.Fatal(err)
	}
	validateSchema(t, out)
	if err := WriteReport(c, filepath.Join(dir, "report.md")); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	svg, _ := os.ReadFile(filepath.Join(dir, "report.svg"))
	if !bytes.Contains(md, []byte("](report.svg)")) || !bytes.Contains(md, []byte(c.Verdict.Decision)) {
		t.Errorf("report lacks the chart or the verdict:\n%s", md)
	}
	if !bytes.HasPrefix(svg, []byte("<svg ")) || !bytes.HasSuffix(svg, []byte("</svg>\n")) {
		t.Errorf("chart is not an SVG document")
	}
	if left, _ := os.ReadDir(cfg.Workdir); len(left) != 0 {
		t.Errorf("run directories left behind: %v", left)
	}
}

func validateSchema(t *testing.T, path string) {
	t.Helper()
	sf, err := os.Open("../../docs/gate-custody.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	doc, err := jsonschema.UnmarshalJSON(sf)
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	comp.AssertFormat()
	const url = "https://utxod.example/schemas/gate-custody-v1.json"
	if err := comp.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := comp.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("custody does not validate against docs/gate-custody.schema.json: %v", err)
	}
}

func TestGateSlowCandidateReverts(t *testing.T) {
	bin, corpus := fixtures(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig(t, bin, corpus)
	// Same utxod command, behind the wrapper: +600 ms CPU, +300 ms sleep.
	cfg.Candidate.Template = mustTemplate(t, "'"+self+"' "+importT+" {corpus}")
	cfg.Candidate.Env = []string{slowEnv + "=600ms,300ms"}
	c, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkCustody(t, c, cfg)
	sr := c.Stores[0]
	t.Logf("slowed candidate: wall_speedup %.3f cpu_speedup %.3f rss_ratio %.3f; verdict %s: %s",
		sr.WallSpeedup, sr.CPUSpeedup, sr.RSSRatio, c.Verdict.Decision, c.Verdict.Reason)
	if !c.Correctness.OK {
		t.Fatalf("correctness: %v", c.Correctness.Mismatches)
	}
	if c.Verdict.Decision != Revert {
		t.Fatalf("verdict %s, want revert", c.Verdict.Decision)
	}
	// 600 ms of extra CPU on a run of well under a second of CPU: both
	// speed-ups must be far below 1 whatever the machine's noise.
	if sr.WallSpeedup >= 0.8 || sr.CPUSpeedup >= 0.8 {
		t.Errorf("slowed candidate not measured as slower: wall_speedup %.3f cpu_speedup %.3f", sr.WallSpeedup, sr.CPUSpeedup)
	}
	for _, want := range []string{"pebble wall_speedup", "pebble cpu_speedup"} {
		if !strings.Contains(c.Verdict.Reason, want) {
			t.Errorf("reason %q does not name %q", c.Verdict.Reason, want)
		}
	}
	// The custody identifies the arm binary, not the wrapper, and the corpus.
	if c.Identity.Binaries[Candidate].Path != bin || c.Identity.Binaries[Candidate].SHA256 != c.Identity.Binaries[Control].SHA256 {
		t.Errorf("binaries: %+v", c.Identity.Binaries)
	}
	if c.Identity.Corpus.Height != 2000 || c.Identity.Corpus.Blocks != 2001 ||
		c.Identity.Corpus.StopHash != "00000000dfd5d65c9d8561b4b8f60a63018fe3933ecb131fb37f905f87da951a" {
		t.Errorf("corpus: %+v", c.Identity.Corpus)
	}
	if env := c.Harness.Env; len(env) != 1 || !slices.Equal(env[Candidate], cfg.Candidate.Env) {
		t.Errorf("custody env %v, want the candidate's %v only", env, cfg.Candidate.Env)
	}
	if c.Identity.Commits[Control] != "control-label" || c.Identity.Commits[Candidate] != "candidate-label" {
		t.Errorf("commit labels: %v", c.Identity.Commits)
	}
	if got := []string{sr.Runs[0].Arm, sr.Runs[1].Arm}; got[0] != Control || got[1] != Candidate {
		t.Errorf("run order %v", got)
	}
	for _, r := range sr.Runs {
		if r.WallS <= 0 || r.CPUS <= 0 || r.MaxRSSKiB <= 0 || r.ParentRSSKiB <= 0 || r.Digests == nil || r.Digests.HashSerialized3 == "" || r.Digests.MuHash == "" {
			t.Errorf("run not fully measured: %+v", r)
		}
	}
}

// TestGateIdenticalArms runs the same command as both arms, two ABBA pairs.
// Every attempt must agree on the digests and keep all three ratios within
// 0.5–2.0 (no systematic bias: a harness timing the wrong process or
// mixing up arms would be far outside). The rule must not promote identical
// arms — but sub-second runs on a loaded machine are noisy enough to promote
// spuriously (bench/gate/README.md, "Noise"), so the test makes up
// up to ten attempts of three pairs (go test runs packages side by side) and
// requires one revert. (Such gates carry "noise:" notes in their verdict; see
// TestNoiseNotes.)
func TestGateIdenticalArms(t *testing.T) {
	bin, corpus := fixtures(t)
	var last string
	for attempt := 1; attempt <= 10; attempt++ {
		cfg := baseConfig(t, bin, corpus)
		cfg.Pairs = 3
		c, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		checkCustody(t, c, cfg)
		if !c.Correctness.OK {
			t.Fatalf("correctness: %v", c.Correctness.Mismatches)
		}
		sr := c.Stores[0]
		last = fmt.Sprintf("attempt %d: wall_speedup %.3f cpu_speedup %.3f rss_ratio %.3f; verdict %s: %s; notes %q",
			attempt, sr.WallSpeedup, sr.CPUSpeedup, sr.RSSRatio, c.Verdict.Decision, c.Verdict.Reason, c.Verdict.Notes)
		t.Log(last)
		for _, x := range []float64{sr.WallSpeedup, sr.CPUSpeedup, sr.RSSRatio} {
			if x < 0.5 || x > 2.0 {
				t.Fatalf("identical arms outside 0.5–2.0: %s", last)
			}
		}
		if c.Verdict.Decision == Revert {
			return
		}
	}
	t.Fatalf("identical arms: no revert in ten attempts; last %s", last)
}

// A candidate that stops early reaches other digests: invalid, named.
func TestGateDigestMismatchInvalid(t *testing.T) {
	bin, corpus := fixtures(t)
	cfg := baseConfig(t, bin, corpus)
	cfg.Candidate.Template = mustTemplate(t, importT+" --stop-height 1999 {corpus}")
	c, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkCustody(t, c, cfg)
	if c.Verdict.Decision != Invalid || c.Correctness.OK {
		t.Fatalf("verdict %s (%s), want invalid", c.Verdict.Decision, c.Verdict.Reason)
	}
	for _, want := range []string{"pebble candidate run 1 differs from pebble control run 1", "height 1999 != 2000", "muhash"} {
		if !strings.Contains(c.Verdict.Reason, want) {
			t.Errorf("reason %q lacks %q", c.Verdict.Reason, want)
		}
	}
}

// A store the binary does not have is reported unavailable and left out of
// the verdict; a failing run makes the verdict invalid.
func TestGateUnavailableStoreAndFailure(t *testing.T) {
	bin, corpus := fixtures(t)
	cfg := baseConfig(t, bin, corpus)
	cfg.Backends = []string{"nosuchstore"}
	c, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkCustody(t, c, cfg)
	if c.Stores[0].Status != StoreUnavailable || !strings.Contains(c.Stores[0].Reason, "unknown store") || len(c.Stores[0].Runs) != 1 {
		t.Fatalf("store %+v", c.Stores[0])
	}
	if c.Verdict.Decision != Invalid || c.Verdict.Reason != "no store was measured" || len(c.Verdict.Notes) == 0 {
		t.Fatalf("verdict %+v", c.Verdict)
	}

	cfg = baseConfig(t, bin, corpus)
	cfg.Candidate.Env = []string{"UTXOD_DEBUG=merklekernel=nosuchkernel"}
	c, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkCustody(t, c, cfg)
	if c.Stores[0].Status != StoreFailed || c.Verdict.Decision != Invalid ||
		!strings.Contains(c.Verdict.Reason, "pebble candidate run 1 failed: exit 2") {
		t.Fatalf("store %+v\nverdict %+v", c.Stores[0], c.Verdict)
	}
}

// Every custody record committed under bench/results/gate validates.
func TestCommittedCustodyValidates(t *testing.T) {
	files, _ := filepath.Glob("../results/gate/*/custody.json")
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) { validateSchema(t, f) })
	}
}
