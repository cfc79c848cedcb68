package gate

import (
	"fmt"
	"strings"

	"utxod/bench"
)

// summarise fills a measured store's per-arm medians and ratios.
func summarise(sr *StoreResult) {
	sr.Medians = map[string]ArmSummary{}
	for _, arm := range []string{Control, Candidate} {
		var recs []bench.Record
		for _, r := range sr.Runs {
			if r.Arm == arm {
				recs = append(recs, r.Record)
			}
		}
		m := bench.Summarize(recs)
		if m.Runs == 0 {
			continue
		}
		sr.Medians[arm] = ArmSummary{Runs: m.Runs, Times: m.Times,
			RSSMedianKiB: m.RSSMedianKiB, RSSMinKiB: int64(m.RSSMinKiB), RSSMaxKiB: int64(m.RSSMaxKiB)}
	}
	ctl, cand := sr.Medians[Control], sr.Medians[Candidate]
	// 0 when a median is missing: Decide rejects it.
	sr.WallSpeedup = bench.Ratio(ctl.WallMedianS, cand.WallMedianS)
	sr.CPUSpeedup = bench.Ratio(ctl.CPUMedianS, cand.CPUMedianS)
	sr.RSSRatio = bench.Ratio(cand.RSSMedianKiB, ctl.RSSMedianKiB)
	sr.Paired = pairUp(sr.Runs)
}

// pairUp matches the k-th control run with the k-th candidate run (by
// Index: adjacent in the ABBA order) and summarises the pairs' ratios; nil
// if no pair is complete. Failed runs leave their pair out.
func pairUp(runs []RunResult) *Paired {
	ctls, cands := map[int]bench.Record{}, map[int]bench.Record{}
	for _, r := range runs {
		if !r.OK() || r.WallS <= 0 || r.CPUS <= 0 || r.MaxRSSKiB <= 0 {
			continue
		}
		if r.Arm == Control {
			ctls[r.Index] = r.Record
		} else {
			cands[r.Index] = r.Record
		}
	}
	var p Paired
	var wall, cpu, rss []float64
	for index, ctl := range ctls {
		cand, ok := cands[index]
		if !ok {
			continue
		}
		p.Pairs++
		wall = append(wall, ctl.WallS/cand.WallS)
		cpu = append(cpu, ctl.CPUS/cand.CPUS)
		rss = append(rss, float64(cand.MaxRSSKiB)/float64(ctl.MaxRSSKiB))
		if cand.WallS < ctl.WallS {
			p.WallWins++
		}
		if cand.CPUS < ctl.CPUS {
			p.CPUWins++
		}
	}
	if p.Pairs == 0 {
		return nil
	}
	p.WallSpeedup, p.CPUSpeedup, p.RSSRatio = bench.Median(wall), bench.Median(cpu), bench.Median(rss)
	return &p
}

// CheckCorrectness compares every successful run's digests with the first
// one and with the corpus tip, and lists failed runs. It returns the
// correctness record; its Mismatches are the verdict's problems.
func CheckCorrectness(corpus bench.CorpusIdentity, stores []StoreResult) Correctness {
	c := Correctness{Mismatches: []string{}}
	var refName string
	for _, sr := range stores {
		if sr.Status == StoreUnavailable {
			continue
		}
		for _, r := range sr.Runs {
			name := fmt.Sprintf("%s %s run %d", sr.Store, r.Arm, r.Index)
			if r.ExitCode != 0 || r.Error != "" || r.Digests == nil {
				c.Mismatches = append(c.Mismatches, name+" failed: "+r.Failure())
				continue
			}
			c.Compared++
			if c.Reference == nil {
				d := *r.Digests
				c.Reference, refName = &d, name
				if corpus.StopHash != "" && (d.BestBlock != corpus.StopHash || d.Height != corpus.Height) {
					c.Mismatches = append(c.Mismatches, fmt.Sprintf("%s stopped at %s height %d, the corpus tip is %s height %d",
						name, d.BestBlock, d.Height, corpus.StopHash, corpus.Height))
				}
				continue
			}
			if diffs := diffDigests(*c.Reference, *r.Digests); len(diffs) > 0 {
				c.Mismatches = append(c.Mismatches, fmt.Sprintf("%s differs from %s: %s", name, refName, strings.Join(diffs, ", ")))
			}
		}
	}
	if c.Reference != nil {
		if c.Reference.MuHash == "" {
			c.Notes = append(c.Notes, "runs report no muhash (not compared)")
		}
		if c.Reference.HashSerialized3 == "" {
			c.Notes = append(c.Notes, "runs report no hash_serialized_3 (not compared; use --hash-type hash_serialized_3)")
		}
	}
	c.OK = len(c.Mismatches) == 0 && c.Compared > 0
	return c
}

func diffDigests(a, b bench.Digests) []string {
	var d []string
	cmp := func(name string, x, y any) {
		if x != y {
			d = append(d, fmt.Sprintf("%s %v != %v", name, y, x))
		}
	}
	cmp("height", a.Height, b.Height)
	cmp("bestblock", a.BestBlock, b.BestBlock)
	cmp("txouts", a.TxOuts, b.TxOuts)
	cmp("transactions", a.Transactions, b.Transactions)
	cmp("bogosize", a.BogoSize, b.BogoSize)
	cmp("total_amount_sat", a.TotalAmountSat, b.TotalAmountSat)
	cmp("muhash", a.MuHash, b.MuHash)
	cmp("hash_serialized_3", a.HashSerialized3, b.HashSerialized3)
	return d
}

// finish computes correctness and the verdict.
func finish(c *Custody, rule Rule) {
	c.Correctness = CheckCorrectness(c.Identity.Corpus, c.Stores)
	var ratios []Ratios
	var notes, measured []string
	for _, sr := range c.Stores {
		switch sr.Status {
		case StoreMeasured:
			ratios = append(ratios, Ratios{Store: sr.Store, WallSpeedup: sr.WallSpeedup, CPUSpeedup: sr.CPUSpeedup, RSSRatio: sr.RSSRatio})
			measured = append(measured, sr.Store)
		case StoreUnavailable:
			notes = append(notes, fmt.Sprintf("store %s unavailable (%s): not measured, not part of the verdict", sr.Store, sr.Reason))
		}
	}
	c.Verdict = Decide(rule, ratios, c.Correctness.Mismatches)
	if len(notes) > 0 {
		notes = append(notes, "verdict covers: "+strings.Join(measured, ", "))
	}
	c.Verdict.Notes = append(notes, noiseNotes(c.Stores, rule)...)
}

// noiseNotes warns when the runs of one arm spread more than the effect the
// rule looks for: (max-min)/median > RequiredSpeedup-1. The decision stands;
// the note says it rests on noisy measurements.
func noiseNotes(stores []StoreResult, rule Rule) []string {
	var notes []string
	margin := rule.RequiredSpeedup - 1
	for _, sr := range stores {
		if sr.Status != StoreMeasured {
			continue
		}
		for _, axis := range []string{"wall", "cpu"} {
			worst, worstArm := 0.0, ""
			for _, arm := range []string{Control, Candidate} {
				m := sr.Medians[arm]
				lo, hi, med := m.WallMinS, m.WallMaxS, m.WallMedianS
				if axis == "cpu" {
					lo, hi, med = m.CPUMinS, m.CPUMaxS, m.CPUMedianS
				}
				if med > 0 && (hi-lo)/med > worst {
					worst, worstArm = (hi-lo)/med, arm
				}
			}
			if worst > margin {
				notes = append(notes, fmt.Sprintf("noise: %s %s runs of the %s arm spread %.0f%% of their median, more than the %.0f%% the rule tests for; "+
					"more --pairs, a longer --cooldown, --pin or a quieter machine make the verdict firmer", sr.Store, axis, worstArm, worst*100, margin*100))
			}
		}
	}
	return notes
}
