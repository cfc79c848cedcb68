package valbench

// The integration test runs the real driver with real child processes, but
// the children are this test binary (no go build of utxod): with
// VALBENCH_TEST_CHILD=1 in its environment TestMain acts as
//
//   - `utxod import ... --backend B --json CORPUS`: utxod's chainstate in
//     memory (the same chainstate, validator and engine as utxod import)
//     printing the chainstate JSON; --backend rocksdb answers "not compiled
//     in" like a utxod built without the tag;
//   - `btcdreplay ... --json CORPUS`: bench/btcdreplay.Run (real btcd).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"utxod/bench"
	"utxod/bench/btcdreplay"
	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/testkit/chaingen"
	"utxod/validate"
	"utxod/wire"
)

const childEnv = "VALBENCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(fakeChild(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeChild(args []string) int {
	corpus := args[len(args)-1]
	flag := func(name string) string {
		if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	if len(args) > 0 && args[0] == "import" {
		if flag("--backend") == "rocksdb" {
			fmt.Fprintln(os.Stderr, `utxod import: backends: store "rocksdb" is not compiled in (build with -tags rocksdb)`)
			return 2
		}
		p := params.RegTest()
		cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: store.NewMem()})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		data, err := os.ReadFile(corpus)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		blocks, err := wire.ReadAllBlocks(bytes.NewReader(data), p.Magic)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for _, raw := range blocks {
			if _, err := cs.ProcessBlock(raw); err != nil {
				fmt.Fprintln(os.Stderr, "rejected:", err)
				return 1
			}
		}
		info, err := cs.Info(chainstate.HashTypeMuHash)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := json.NewEncoder(os.Stdout).Encode(info); err != nil {
			return 1
		}
		return 0
	}
	s, err := btcdreplay.Run(context.Background(), btcdreplay.Config{Network: flag("--network"), DataDir: flag("--datadir")}, []string{corpus})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(s); err != nil {
		return 1
	}
	return 0
}

func smallCorpus(t *testing.T) (string, *chaingen.Summary) {
	t.Helper()
	data, sum, err := chaingen.Generate(chaingen.Config{Profile: chaingen.ProfileEarly, Seed: 3, TargetInputs: 1000, MaxTxs: 20})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "early.dat")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, sum
}

// The driver runs btcd and the available stores in bench.Order, reports the missing
// store as unavailable, finds every run at the corpus tip, counts one
// ECDSA verification per input of the early profile and computes a floor.
func TestRunSideBySide(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("peak RSS and thread CPU are read from Linux rusage")
	}
	corpus, sum := smallCorpus(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(childEnv, "1")
	res, err := Run(context.Background(), Config{
		Corpus: corpus, Network: "regtest", Rounds: 2, Stores: []string{"pebble", "rocksdb"},
		UtxodBin: self, BtcdBin: self, Workdir: t.TempDir(), Floor: true,
		Samples: 64, VerifyBatches: 2, VerifyBatch: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Fatalf("problems: %v", res.Problems)
	}
	want := [][]string{{"btcd", "pebble", "rocksdb"}, {"pebble", "rocksdb", "btcd"}}
	if fmt.Sprint(res.Order) != fmt.Sprint(want) {
		t.Fatalf("order %v, want %v", res.Order, want)
	}
	if res.Corpus.StopHash != sum.Tip.String() {
		t.Fatalf("corpus tip %s, generator %s", res.Corpus.StopHash, sum.Tip)
	}
	arms := map[string]ArmResult{}
	for _, ar := range res.Arms {
		arms[ar.Name] = ar
	}
	for _, name := range []string{"btcd", "pebble"} {
		ar := arms[name]
		if ar.Status != ArmMeasured || len(ar.Runs) != 2 || ar.WallMedianS <= 0 || ar.CPUMedianS <= 0 || ar.RSSMedianMiB <= 0 {
			t.Fatalf("%s: %+v", name, ar)
		}
		for _, r := range ar.Runs {
			if r.Tip != sum.Tip.String() || r.Height != int(sum.Height) || r.ExitCode != 0 || r.DatadirB < 0 || r.ParentRSSKiB <= 0 {
				t.Fatalf("%s run %+v", name, r)
			}
		}
		if ar.WallOverFloor <= 0 || ar.CPUOverSigCPU <= 0 || ar.BtcdWall <= 0 {
			t.Fatalf("%s ratios: %+v", name, ar)
		}
	}
	if arms["btcd"].BtcdWall != 1 || arms["pebble"].Runs[0].Digests == nil {
		t.Fatalf("btcd %+v, pebble %+v", arms["btcd"], arms["pebble"])
	}
	if r := arms["rocksdb"]; r.Status != ArmUnavailable || len(r.Runs) != 1 || !strings.Contains(r.Reason, "not compiled in") {
		t.Fatalf("rocksdb: %+v", r)
	}
	c := res.Count.Count
	if c.ECDSA != sum.Inputs || c.ECDSAFailed != 0 || c.Schnorr != 0 || res.Count.Inputs != sum.Inputs {
		t.Fatalf("count %+v (%d inputs counted), generator %d inputs", c, res.Count.Inputs, sum.Inputs)
	}
	// One-thread batches before the rounds (seq 0) and after the last run
	// (7); all-core batches before every run that ran (the second rocksdb
	// run, seq 5, was skipped) and after the last.
	if k := res.VerifyCost.ECDSA; k == nil || fmt.Sprint(k.Seq) != "[0 0 7 7]" || k.WallMedianNs != bench.Median(k.WallNs) || k.Samples != 64 ||
		fmt.Sprint(k.AllCoreSeq) != "[1 1 2 2 3 3 4 4 6 6 7 7]" || len(k.AllCoreNs) != 12 || k.Threads != runtime.NumCPU() {
		t.Fatalf("verify cost %+v", res.VerifyCost.ECDSA)
	}
	if f := res.Floor; f.Cores != runtime.NumCPU() || f.Seconds <= 0 || f.CPUSeconds < 0 {
		t.Fatalf("floor %+v", res.Floor)
	}
	pb := arms["pebble"]
	for _, r := range pb.Runs {
		if want := RunFloor(c, res.VerifyCost, r.Seq); r.FloorS <= 0 || r.FloorS != want {
			t.Fatalf("pebble run %d: floor %v, want %v", r.Seq, r.FloorS, want)
		}
	}
	if want := bench.Median([]float64{pb.Runs[0].WallS / pb.Runs[0].FloorS, pb.Runs[1].WallS / pb.Runs[1].FloorS}); pb.WallOverRunFloor != want {
		t.Fatalf("pebble wall over its own floor %v, want %v", pb.WallOverRunFloor, want)
	}
	if sf := res.SigFree; sf == nil || sf.Store != "pebble" || len(sf.Runs) != 3 || sf.Inputs != sum.Inputs || sf.CPUMedianS <= 0 || sf.WallMedianS <= 0 ||
		sf.BoundS != (res.Floor.CPUSeconds+sf.CPUMedianS)/float64(res.Floor.Cores) {
		t.Fatalf("signature-free: %+v", res.SigFree)
	}
	if p := res.Parallel; p == nil || p.Kind != "ECDSA" || p.Threads != runtime.NumCPU() || len(p.WallNs) != 4 || p.WallMedianNs <= 0 ||
		len(p.SingleNs) != 4 || len(p.Speedups) != 4 || p.Speedups[0] != p.SingleNs[0]/p.WallNs[0] ||
		p.Speedup != bench.Median(p.Speedups) || p.FloorS != res.Floor.Seconds*float64(res.Floor.Cores)/p.Speedup {
		t.Fatalf("parallel verify: %+v", res.Parallel)
	}
	md := RenderMarkdown(res)
	for _, s := range []string{"**Without signatures.**", "**All cores verifying.**", "| btcd ", "| utxod pebble | 2 |", "| utxod rocksdb | 1 | unavailable", "**Signature floor.**",
		"Floor = signatures × wall cost ÷", "**Each run's own floor**", "`valbench.test import --network regtest --datadir D --backend B --json --hash-type muhash early.dat`"} {
		if !strings.Contains(md, s) {
			t.Fatalf("markdown lacks %q:\n%s", s, md)
		}
	}
	out := filepath.Join(t.TempDir(), "r.json")
	if err := WriteJSON(res, out); err != nil {
		t.Fatal(err)
	}
	var back Result
	if b, err := os.ReadFile(out); err != nil || json.Unmarshal(b, &back) != nil || back.Schema != Schema {
		t.Fatalf("JSON round trip: %v", err)
	}
}

func TestCheckRuns(t *testing.T) {
	d := bench.Digests{Height: 5, BestBlock: "aa", TxOuts: 3, MuHash: "m"}
	other := d
	other.MuHash = "x"
	res := &Result{Corpus: bench.CorpusIdentity{Height: 5, StopHash: "aa"}, Arms: []ArmResult{
		{Arm: Arm{Name: "btcd", Kind: KindBtcd}, Runs: []RunResult{{Arm: "btcd", Round: 1, Tip: "bb", Height: 5}}},
		{Arm: Arm{Name: "pebble", Kind: KindUtxod}, Runs: []RunResult{{Arm: "pebble", Round: 1, Tip: "aa", Height: 5, Digests: &d}}},
		{Arm: Arm{Name: "bbolt", Kind: KindUtxod}, Runs: []RunResult{{Arm: "bbolt", Round: 1, Tip: "aa", Height: 5, Digests: &other}}},
		{Arm: Arm{Name: "rocksdb", Kind: KindUtxod}, Runs: []RunResult{{Arm: "rocksdb", Round: 1, Record: bench.Record{ExitCode: 1}}}},
	}}
	p := checkRuns(res)
	if len(p) != 2 || !strings.Contains(p[0], "btcd round 1 ended at bb") || !strings.Contains(p[1], "bbolt round 1 chainstate") {
		t.Fatalf("problems %q", p)
	}
}

func TestFloorAndHelpers(t *testing.T) {
	v := &VerifyCost{ECDSA: &KindCost{WallMedianNs: 40_000, CPUMedianNs: 30_000}, Schnorr: &KindCost{WallMedianNs: 20_000, CPUMedianNs: 10_000}}
	f := ComputeFloor(SigCount{ECDSA: 1000, Schnorr: 500}, v, 2)
	if math.Abs(f.Seconds-(1000*40e-6+500*20e-6)/2) > 1e-12 || math.Abs(f.CPUSeconds-(1000*30e-6+500*10e-6)) > 1e-12 {
		t.Fatalf("floor %+v", f)
	}
	// One-thread batches pool; a run's own floor comes from the all-core
	// batches just before it and the next ones after it.
	k := &KindCost{WallNs: []float64{50, 52, 30, 32}, CPUNs: []float64{40, 40, 29, 31}, Seq: []int{0, 0, 7, 7},
		AllCoreNs: []float64{20, 22, 16, 17, 25, 24}, AllCoreSeq: []int{1, 1, 3, 3, 4, 4}}
	k.finish()
	if k.WallMedianNs != 41 || k.WallMinNs != 30 || k.CPUMedianNs != 35.5 {
		t.Fatalf("medians %+v", k)
	}
	c, cost := SigCount{ECDSA: 1e9}, &VerifyCost{ECDSA: k}
	if f := ComputeFloor(c, cost, 2); f.Seconds != 20.5 || f.CPUSeconds != 35.5 {
		t.Fatalf("floor %+v", f)
	}
	for _, tc := range []struct {
		seq  int
		want float64
	}{{1, 18.5}, {3, 20.5}, {4, 0}, {2, 0}, {0, 0}} {
		if got := RunFloor(c, cost, tc.seq); got != tc.want {
			t.Errorf("RunFloor(seq %d) = %v, want %v", tc.seq, got, tc.want)
		}
	}
	if bench.Median([]float64{3, 1, 2}) != 2 || bench.Median([]float64{4, 1, 3, 2}) != 2.5 || bench.Median(nil) != 0 {
		t.Fatal("median")
	}
	if thousands(1234567) != "1,234,567" || thousands(12) != "12" || thousands(-1000) != "-1,000" {
		t.Fatal("thousands")
	}
	var r RunResult
	if err := parseOutput([]byte("{\"x\":1}\n{\"tip\":\"ab\",\"height\":7,\"blocks\":7}\n"), &r); err != nil || r.Tip != "ab" || r.Height != 7 || r.Digests != nil {
		t.Fatalf("btcd output: %v %+v", err, r)
	}
	r = RunResult{}
	if err := parseOutput([]byte(`{"bestblock":"cd","height":9,"txouts":4,"muhash":"m"}`), &r); err != nil || r.Tip != "cd" || r.Digests.TxOuts != 4 {
		t.Fatalf("utxod output: %v %+v", err, r)
	}
	if err := parseOutput([]byte("not json"), &r); err == nil {
		t.Fatal("garbage accepted")
	}
}

// The counting verifier counts failures too, samples only successes, and
// keeps at most the requested number of samples.
func TestCountingVerifier(t *testing.T) {
	cv := NewCountingVerifier(fakeVerifier{}, 3)
	for i := 0; i < 10; i++ {
		cv.VerifyECDSA([]byte{2}, []byte{byte(i % 2)}, [32]byte{byte(i)})
		cv.VerifySchnorr([32]byte{}, [64]byte{byte(i % 2)}, [32]byte{})
	}
	cv.CheckTapTweak([32]byte{}, [32]byte{}, [32]byte{}, false)
	c := cv.Count()
	if c.ECDSA != 10 || c.ECDSAFailed != 5 || c.Schnorr != 10 || c.SchnorrFailed != 5 || c.TapTweak != 1 || c.Verifier != "fake" {
		t.Fatalf("%+v", c)
	}
	e, s := cv.Samples()
	if len(e) != 3 || len(s) != 3 {
		t.Fatalf("%d, %d samples", len(e), len(s))
	}
	for _, x := range e {
		if x.Sig[0] != 1 {
			t.Fatalf("sampled a failing signature %+v", x)
		}
	}
}

// fakeVerifier accepts signatures whose first byte is 1.
type fakeVerifier struct{}

func (fakeVerifier) Name() string                                            { return "fake" }
func (fakeVerifier) VerifyECDSA(_, sig []byte, _ [32]byte) bool              { return sig[0] == 1 }
func (fakeVerifier) VerifySchnorr(_ [32]byte, sig [64]byte, _ [32]byte) bool { return sig[0] == 1 }
func (fakeVerifier) CheckTapTweak(_, _, _ [32]byte, _ bool) bool             { return true }

// rejectFrom fails every ECDSA check of sample index bad or above (the
// samples' messages carry their index in byte 0).
type rejectFrom struct {
	acceptVerifier
	bad byte
}

func (r rejectFrom) VerifyECDSA(_, _ []byte, msg [32]byte) bool { return msg[0] < r.bad }

// TestVerifyCostRejects: a sampled signature that does not verify stops
// the timing with an error naming its kind and index, and nothing is
// recorded for the kind after it.
func TestVerifyCostRejects(t *testing.T) {
	samples := make([]ECDSASample, 4)
	for i := range samples {
		samples[i].Msg[0] = byte(i)
	}
	if _, err := MeasureVerifyCost(rejectFrom{bad: 2}, samples, nil, 0, 1, time.Millisecond, nil); err == nil ||
		!strings.Contains(err.Error(), "sampled ECDSA signature 2 does not verify") {
		t.Fatalf("error %v", err)
	}
	vc, err := MeasureVerifyCost(rejectFrom{bad: 4}, samples, nil, 0, 1, time.Millisecond, nil)
	if err != nil || len(vc.ECDSA.WallNs) != 1 || vc.Schnorr != nil {
		t.Fatalf("all verifying: %+v, %v", vc, err)
	}
}
