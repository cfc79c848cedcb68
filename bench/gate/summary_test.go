package gate

import (
	"math"
	"testing"

	"utxod/bench"
)

// TestPairUp: each control run is compared with the candidate run of the
// same index only; failed runs drop their pair; medians and wins are over
// the complete pairs.
func TestPairUp(t *testing.T) {
	run := func(arm string, index int, wall, cpu float64, rss int64) RunResult {
		return RunResult{Arm: arm, Index: index, Record: bench.Record{WallS: wall, CPUS: cpu, MaxRSSKiB: rss}}
	}
	runs := []RunResult{
		// Pair 1: the host is slow, the candidate 10 % faster.
		run(Control, 1, 2.2, 2.0, 100), run(Candidate, 1, 2.0, 2.0, 100),
		// Pair 2: the host is fast, the candidate 10 % faster, 2 % more CPU.
		run(Candidate, 2, 1.0, 1.02, 102), run(Control, 2, 1.1, 1.0, 100),
		// Pair 3: the candidate slower.
		run(Control, 3, 1.5, 1.5, 100), run(Candidate, 3, 1.6, 1.4, 104),
		// Pair 4: its candidate failed, so it is left out.
		run(Control, 4, 9, 9, 100), {Arm: Candidate, Index: 4, Record: bench.Record{ExitCode: 1}},
		// A control run without a candidate.
		run(Control, 5, 1, 1, 100),
	}
	p := pairUp(runs)
	if p == nil || p.Pairs != 3 || p.WallWins != 2 || p.CPUWins != 1 {
		t.Fatalf("pairs %+v, want 3 pairs, 2 wall wins, 1 CPU win", p)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	// wall ratios 1.1, 1.1, 0.9375; CPU 1.0, 0.980…, 1.071…; RSS 1.0, 1.02, 1.04.
	if !near(p.WallSpeedup, 1.1) || !near(p.CPUSpeedup, 1.0) || !near(p.RSSRatio, 1.02) {
		t.Fatalf("medians %+v", p)
	}
	if pairUp(runs[8:]) != nil {
		t.Fatal("a lone control run made a pair")
	}
}
