package gate

import (
	"math"
	"slices"
	"strings"
	"testing"

	"utxod/bench"
)

func TestDecide(t *testing.T) {
	r := DefaultRule
	st := func(name string, wall, cpu, rss float64) Ratios {
		return Ratios{Store: name, WallSpeedup: wall, CPUSpeedup: cpu, RSSRatio: rss}
	}
	tests := []struct {
		name       string
		stores     []Ratios
		problems   []string
		decision   string
		axes       []string
		reason     []string // substrings of the reason
		falsifiers []string // Falsifier.String() values, in order
	}{
		{
			name:     "promote on wall, every store",
			stores:   []Ratios{st("pebble", 1.10, 1.00, 1.00), st("rocksdb", 1.06, 0.98, 1.02), st("bbolt", 1.05, 1.01, 0.90)},
			decision: Promote, axes: []string{"wall"},
			reason: []string{"wall_speedup >= 1.05 on every store (lowest 1.05 on bbolt)"},
		},
		{
			name:     "promote on cpu",
			stores:   []Ratios{st("pebble", 1.00, 1.20, 1.00), st("bbolt", 0.99, 1.07, 1.03)},
			decision: Promote, axes: []string{"cpu"},
		},
		{
			name:     "promote on both axes",
			stores:   []Ratios{st("pebble", 1.3, 1.4, 0.8)},
			decision: Promote, axes: []string{"wall", "cpu"},
		},
		{
			name:       "revert: one store misses both primary axes",
			stores:     []Ratios{st("pebble", 1.10, 1.10, 1.0), st("bbolt", 0.98, 1.01, 1.0)},
			decision:   Revert,
			reason:     []string{"bbolt wall_speedup 0.98 < 1.05 and bbolt cpu_speedup 1.01 < 1.05"},
			falsifiers: []string{"bbolt wall_speedup 0.98 < 1.05", "bbolt cpu_speedup 1.01 < 1.05"},
		},
		{
			name:       "revert: wall clears but cpu regresses more than 3%",
			stores:     []Ratios{st("pebble", 1.20, 0.96, 1.0)},
			decision:   Revert,
			falsifiers: []string{"pebble cpu_speedup 0.96 < 0.971", "pebble cpu_speedup 0.96 < 1.05"},
		},
		{
			name:       "revert: cpu clears but wall regresses more than 3%",
			stores:     []Ratios{st("pebble", 0.95, 1.30, 1.0)},
			decision:   Revert,
			falsifiers: []string{"pebble wall_speedup 0.95 < 1.05", "pebble wall_speedup 0.95 < 0.971"},
		},
		{
			name:       "revert: both axes clear but RSS regresses more than 3%",
			stores:     []Ratios{st("pebble", 1.2, 1.2, 1.0), st("rocksdb", 1.2, 1.2, 1.04)},
			decision:   Revert,
			reason:     []string{"rocksdb rss_ratio 1.04 > 1.03"},
			falsifiers: []string{"rocksdb rss_ratio 1.04 > 1.03", "rocksdb rss_ratio 1.04 > 1.03"},
		},
		{
			name:       "revert: required speed-up reached on some stores only",
			stores:     []Ratios{st("pebble", 1.2, 1.0, 1.0), st("rocksdb", 1.04, 1.0, 1.0)},
			decision:   Revert,
			falsifiers: []string{"rocksdb wall_speedup 1.04 < 1.05", "pebble cpu_speedup 1.00 < 1.05", "rocksdb cpu_speedup 1.00 < 1.05"},
		},
		{
			name:     "revert: identical arms",
			stores:   []Ratios{st("pebble", 1.0, 1.0, 1.0)},
			decision: Revert,
		},
		{
			name:     "invalid: digest mismatch beats a speed-up",
			stores:   []Ratios{st("pebble", 2, 2, 1)},
			problems: []string{"bbolt candidate run 1 differs from pebble control run 1: muhash aa != bb"},
			decision: Invalid,
			reason:   []string{"correctness:", "muhash aa != bb"},
		},
		{
			name:     "invalid: no store",
			decision: Invalid,
			reason:   []string{"no store was measured"},
		},
		{
			name:     "invalid: zero ratio (a median of 0)",
			stores:   []Ratios{st("pebble", 0, 1, 1)},
			decision: Invalid,
		},
		{
			name:     "invalid: NaN",
			stores:   []Ratios{st("pebble", 1, math.NaN(), 1)},
			decision: Invalid,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Decide(r, tc.stores, tc.problems)
			if v.Decision != tc.decision {
				t.Fatalf("decision %s (%s), want %s", v.Decision, v.Reason, tc.decision)
			}
			if tc.axes != nil && !slices.Equal(v.Axes, tc.axes) {
				t.Errorf("axes %v, want %v", v.Axes, tc.axes)
			}
			for _, s := range tc.reason {
				if !strings.Contains(v.Reason, s) {
					t.Errorf("reason %q lacks %q", v.Reason, s)
				}
			}
			if tc.falsifiers != nil {
				var got []string
				for _, f := range v.Falsifiers {
					got = append(got, f.String())
				}
				if !slices.Equal(got, tc.falsifiers) {
					t.Errorf("falsifiers %q, want %q", got, tc.falsifiers)
				}
			}
			if v.Decision == Revert && len(v.Falsifiers) == 0 {
				t.Error("revert without falsifiers")
			}
			if v.Decision == Promote && len(v.Falsifiers) != 0 {
				t.Error("promote with falsifiers")
			}
			if v.Rule == "" || v.Reason == "" {
				t.Error("empty rule or reason")
			}
		})
	}
}

func TestDecideThresholds(t *testing.T) {
	// A stricter rule moves the boundary.
	r := Rule{RequiredSpeedup: 1.10, MaxRegression: 0}
	if v := Decide(r, []Ratios{{Store: "s", WallSpeedup: 1.09, CPUSpeedup: 1, RSSRatio: 1}}, nil); v.Decision != Revert {
		t.Errorf("1.09 under 1.10: %s", v.Decision)
	}
	if v := Decide(r, []Ratios{{Store: "s", WallSpeedup: 1.10, CPUSpeedup: 1, RSSRatio: 1}}, nil); v.Decision != Promote {
		t.Errorf("1.10 at 1.10: %s %s", v.Decision, v.Reason)
	}
	if v := Decide(r, []Ratios{{Store: "s", WallSpeedup: 1.10, CPUSpeedup: 0.999, RSSRatio: 1}}, nil); v.Decision != Revert {
		t.Errorf("any CPU regression with MaxRegression 0: %s", v.Decision)
	}
}

func TestSequence(t *testing.T) {
	got := Sequence(3)
	want := []string{Control, Candidate, Candidate, Control, Control, Candidate}
	if !slices.Equal(got, want) {
		t.Fatalf("Sequence(3) = %v, want %v", got, want)
	}
}

func TestCheckCorrectness(t *testing.T) {
	ref := bench.Digests{Height: 10, BestBlock: strings.Repeat("ab", 32), TxOuts: 5, TotalAmountSat: 500, MuHash: strings.Repeat("11", 32), HashSerialized3: strings.Repeat("22", 32)}
	corpus := bench.CorpusIdentity{Height: 10, StopHash: ref.BestBlock}
	other := ref
	other.MuHash = strings.Repeat("33", 32)
	run := func(arm string, i int, d bench.Digests) RunResult { return RunResult{Arm: arm, Index: i, Digests: &d} }
	stores := []StoreResult{
		{Store: "pebble", Status: StoreMeasured, Runs: []RunResult{run(Control, 1, ref), run(Candidate, 1, ref)}},
		{Store: "bbolt", Status: StoreMeasured, Runs: []RunResult{run(Control, 1, ref), run(Candidate, 1, other)}},
		{Store: "rocksdb", Status: StoreUnavailable, Reason: "not compiled in", Runs: []RunResult{{Arm: Control, Index: 1, Record: bench.Record{ExitCode: 2}}}},
	}
	c := CheckCorrectness(corpus, stores)
	if c.OK || c.Compared != 4 || len(c.Mismatches) != 1 || !strings.Contains(c.Mismatches[0], "bbolt candidate run 1 differs from pebble control run 1: muhash") {
		t.Fatalf("%+v", c)
	}
	stores[1].Runs[1] = run(Candidate, 1, ref)
	if c := CheckCorrectness(corpus, stores); !c.OK {
		t.Fatalf("%+v", c)
	}
	// Every run agrees but stops short of the corpus tip.
	if c := CheckCorrectness(bench.CorpusIdentity{Height: 11, StopHash: strings.Repeat("cd", 32)}, stores); c.OK ||
		!strings.Contains(c.Mismatches[0], "the corpus tip is") {
		t.Fatalf("%+v", c)
	}
	// A failed run is a problem too.
	stores[0].Runs[1] = RunResult{Arm: Candidate, Index: 1, Record: bench.Record{ExitCode: 1, Stderr: "boom\n"}}
	if c := CheckCorrectness(corpus, stores); c.OK || !strings.Contains(strings.Join(c.Mismatches, ";"), "pebble candidate run 1 failed: exit 1: boom") {
		t.Fatalf("%+v", c)
	}
}

func TestNoiseNotes(t *testing.T) {
	quiet := ArmSummary{Times: bench.Times{WallMedianS: 10, WallMinS: 9.9, WallMaxS: 10.1, CPUMedianS: 10, CPUMinS: 9.9, CPUMaxS: 10.2}}
	noisy := quiet
	noisy.WallMinS, noisy.WallMaxS = 8, 12
	stores := []StoreResult{
		{Store: "pebble", Status: StoreMeasured, Medians: map[string]ArmSummary{Control: quiet, Candidate: quiet}},
		{Store: "bbolt", Status: StoreMeasured, Medians: map[string]ArmSummary{Control: quiet, Candidate: noisy}},
		{Store: "rocksdb", Status: StoreUnavailable},
	}
	notes := noiseNotes(stores, DefaultRule)
	if len(notes) != 1 || !strings.Contains(notes[0], "bbolt wall runs of the candidate arm spread 40% of their median, more than the 5%") {
		t.Fatalf("%q", notes)
	}
}
