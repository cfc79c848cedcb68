package valbench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"utxod/bench"
)

// WriteJSON writes the result, indented.
func WriteJSON(res *Result, path string) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("valbench: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("valbench: %w", err)
	}
	return nil
}

// RenderMarkdown renders the result as the Markdown that goes into
// bench/results/validation.md: a conditions paragraph, the side-by-side
// table and the signature-floor paragraph.
func RenderMarkdown(res *Result) string {
	var b strings.Builder
	c := res.Corpus
	fmt.Fprintf(&b, "Corpus `%s` (%s, %s blocks, tip height %d, %s bytes, sha256 %s…)",
		filepath.Base(c.Path), c.Network, thousands(int64(c.Blocks)), c.Height, thousands(c.Bytes), short(c.SHA256, 16))
	if res.Count != nil {
		fmt.Fprintf(&b, ", %s non-coinbase inputs", thousands(res.Count.Inputs))
	}
	order := "no rounds"
	if len(res.Order) > 0 {
		order = bench.DescribeOrder(res.Order[0])
	}
	fmt.Fprintf(&b, ". %d round(s), %s, %s cooldown; medians of the rounds.\n\n",
		res.Rounds, order, fmtDuration(res.CooldownS))
	h := res.Host
	dirty := ""
	if res.Git.Dirty != nil && *res.Git.Dirty {
		dirty = " (uncommitted changes)"
	}
	fmt.Fprintf(&b, "**Measurement conditions.** %s, %s to %s UTC, %s, %d cores (runtime.NumCPU), %s; load average %s at the start, %s at the end (1/5/15 min; each run's 1-min load is in the JSON)",
		orUnknown(h.CPUModel), res.StartedAt.Format("2006-01-02 15:04"), res.FinishedAt.Format("15:04"), h.OS+"/"+h.Arch, h.Cores, h.GoVersion,
		fmtLoad(res.LoadStart), fmtLoad(res.LoadEnd))
	if res.LoadStart[0] > float64(h.Cores)/2 || res.LoadEnd[0] > float64(h.Cores)/2 || maxRunLoad(res) > float64(h.Cores)/2 {
		fmt.Fprintf(&b, " — a contended machine (other jobs running, max 1-min load at a run start %.2f on %d cores): absolute times are inflated, ratios within the run are the meaningful figures", maxRunLoad(res), h.Cores)
	}
	fmt.Fprintf(&b, ". Working tree at commit %s%s", orUnknown(short(res.Git.Head, 12)), dirty)
	if res.Label != "" {
		fmt.Fprintf(&b, "; %s", res.Label)
	}
	b.WriteString(".\n\n")
	var cmds []string
	for _, ar := range res.Arms {
		if c := "`" + commandLine(ar, res.Corpus.Path) + "`"; !slices.Contains(cmds, c) {
			cmds = append(cmds, c)
		}
	}
	fmt.Fprintf(&b, "Commands (each run on a fresh data directory D): %s.\n\n", strings.Join(cmds, "; "))

	hasCore := slices.ContainsFunc(res.Arms, func(a ArmResult) bool { return a.Kind == KindCore && a.Status == ArmMeasured })
	coreHead, coreSep := "", ""
	if hasCore {
		coreHead, coreSep = " Core/arm wall | Core/arm CPU | arm/Core RSS |", "---:|---:|---:|"
	}
	b.WriteString("| arm | runs | wall s (median; min–max) | CPU s (median; min–max) | peak RSS MiB | btcd/arm wall | btcd/arm CPU |" + coreHead + " wall / sig floor | wall / its own floor | CPU / sig CPU |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|" + coreSep + "---:|---:|---:|\n")
	for _, ar := range res.Arms {
		name := "utxod " + ar.Name
		if ar.Kind == KindBtcd {
			name = fmt.Sprintf("btcd %s (ffldb, full validation)", res.BtcdVersion)
			if slices.ContainsFunc(ar.Argv, func(a string) bool { return strings.HasPrefix(a, "--checkpoint") }) {
				name = fmt.Sprintf("btcd %s (ffldb, scripts skipped below --checkpoint)", res.BtcdVersion)
			}
		}
		if ar.Kind == KindCore {
			name = "Bitcoin Core " + res.CoreVersion + " (leveldb)"
		}
		if ar.Status != ArmMeasured {
			fmt.Fprintf(&b, "| %s | %d | %s: %s | | | | | | | |\n", name, len(ar.Runs), ar.Status, ar.Reason)
			continue
		}
		coreCols := ""
		if hasCore {
			coreCols = fmt.Sprintf(" %s | %s | %s |", times(ar.CoreWall), times(ar.CoreCPU), times(ar.CoreRSS))
		}
		fmt.Fprintf(&b, "| %s | %d | %.2f; %.2f–%.2f | %.2f; %.2f–%.2f | %.0f | %s | %s |%s %s | %s | %s |\n",
			name, len(ar.Runs), ar.WallMedianS, ar.WallMinS, ar.WallMaxS, ar.CPUMedianS, ar.CPUMinS, ar.CPUMaxS,
			ar.RSSMedianMiB, times(ar.BtcdWall), times(ar.BtcdCPU), coreCols, times(ar.WallOverFloor), times(ar.WallOverRunFloor), times(ar.CPUOverSigCPU))
	}
	b.WriteString("\n")
	for _, ar := range res.Arms {
		if ar.Kind != KindCore {
			continue
		}
		var ready, loaded, tip, done []float64
		skipped := 0
		for _, r := range ar.Runs {
			if p := r.CorePhases; p != nil {
				ready, loaded, tip, done = append(ready, p.ReadyS), append(loaded, p.LoadedS), append(tip, p.LastTipS), append(done, p.ShutdownS)
				if p.AssumeValidSkipped {
					skipped++
				}
			}
		}
		if len(ready) > 0 {
			fmt.Fprintf(&b, "**Core's timeline** (its debug.log, medians over %d runs, seconds from its first log line): start-up done %.2f; block file read and stored in its own block files %.2f; last tip update %.2f; shutdown done (chainstate flushed) %.2f. Script verification disabled by assume-valid in %d of them (\"Disabling script verification\").\n\n",
				len(ready), bench.Median(ready), bench.Median(loaded), bench.Median(tip), bench.Median(done), skipped)
		}
	}
	if res.Count != nil && res.VerifyCost != nil && res.Floor != nil {
		n := res.Count.Count
		fmt.Fprintf(&b, "**Signature floor.** A fresh import performs %s ECDSA verifications (%s of them failing) and %s Schnorr (%s failing)",
			thousands(n.ECDSA), thousands(n.ECDSAFailed), thousands(n.Schnorr), thousands(n.SchnorrFailed))
		if n.TapTweak > 0 {
			fmt.Fprintf(&b, ", plus %s taproot tweak checks (not in the floor)", thousands(n.TapTweak))
		}
		fmt.Fprintf(&b, " — counted by a wrapper around the %s verifier in an in-process import through the same chainstate, validator and script engine as `utxod import` (counted after the signature cache, i.e. verifications actually done). ", n.Verifier)
		nb := len(kindBatches(res.VerifyCost))
		fmt.Fprintf(&b, "%s single verify on one thread, cycling through signatures sampled from the corpus (%d timed batches of ≥ %gs, half before and half after the rounds):",
			res.VerifyCost.Verifier, nb, res.VerifyCost.BatchS)
		first := true
		for _, k := range []struct {
			name string
			c    *KindCost
		}{{"ECDSA", res.VerifyCost.ECDSA}, {"Schnorr", res.VerifyCost.Schnorr}} {
			if k.c == nil {
				continue
			}
			if !first {
				b.WriteString(";")
			}
			first = false
			fmt.Fprintf(&b, " %s %.1f µs wall median (min %.1f, max %.1f), %.1f µs thread CPU (%d signatures)",
				k.name, k.c.WallMedianNs/1e3, k.c.WallMinNs/1e3, slices.Max(k.c.WallNs)/1e3, k.c.CPUMedianNs/1e3, k.c.Samples)
		}
		f := res.Floor
		fmt.Fprintf(&b, ". Floor = signatures × wall cost ÷ %d cores = **%.2f s**; signature CPU = signatures × thread-CPU cost = %.2f s. ",
			f.Cores, f.Seconds, f.CPUSeconds)
		b.WriteString("`wall / sig floor` is each arm's median wall over the floor; `CPU / sig CPU` its median CPU over the signature CPU. ")
		if k := kindWithAllCore(res.VerifyCost); k != nil {
			fmt.Fprintf(&b, "**Each run's own floor** (`wall / its own floor`, the figure to quote): before every run and after the last, batches of ≥ %gs with all %d cores verifying at once (%d in all) (%.1f µs of wall per verification together, median; %.1f–%.1f); a run's floor is its signatures × the median of the batches just before and just after it, and the column is the median over its runs of wall ÷ that floor. A slow spell of the host moves both sides of such a pair, where a floor timed elsewhere in the packet would not.",
				res.VerifyCost.BatchS, k.Threads, len(k.AllCoreNs), bench.Median(k.AllCoreNs)/1e3, slices.Min(k.AllCoreNs)/1e3, slices.Max(k.AllCoreNs)/1e3)
		}
		b.WriteString("\n")
		if p := res.Parallel; p != nil && p.Speedup > 0 {
			fmt.Fprintf(&b, "\n**All cores verifying.** %d threads verifying %s signatures at once, each batch paired with a one-thread batch just before it (%d pairs, half before and half after the rounds): %.1f µs of wall per verification together (median), and the cores verify **%.2f×** as fast as one thread (median of the pairs' ratios, %.2f–%.2f) where the floor assumes %d×. At that speed the signatures alone need **%.2f s** of wall (%s the floor);",
				p.Threads, p.Kind, len(p.WallNs), p.WallMedianNs/1e3, p.Speedup, slices.Min(p.Speedups), slices.Max(p.Speedups), f.Cores, p.FloorS, times(p.FloorS/f.Seconds))
			for _, ar := range res.Arms {
				if ar.Kind == KindUtxod && ar.WallMedianS > 0 {
					fmt.Fprintf(&b, " %s %s,", ar.Name, times(ar.WallMedianS/p.FloorS))
				}
			}
			b.WriteString(" each arm's median wall over it.\n")
		}
		if sf := res.SigFree; sf != nil && sf.BoundS > 0 {
			fmt.Fprintf(&b, "\n**Without signatures.** The counting import again, %d times, with every signature check answered true (all of the corpus' verifications succeed, so nothing else changes; a new %s store, MuHash on, one block at a time): %.2f s wall, %.2f CPU-s (median), **%.1f µs of CPU per input** around the signatures. ",
				len(sf.Runs), sf.Store, sf.WallMedianS, sf.CPUMedianS, sf.CPUPerInputUs)
			fmt.Fprintf(&b, "A perfect schedule of the signatures' single-thread CPU and that work on %d cores: (%.2f + %.2f) s ÷ %d = **%.2f s**, %s the floor",
				f.Cores, f.CPUSeconds, sf.CPUMedianS, f.Cores, sf.BoundS, times(sf.BoundS/f.Seconds))
			for _, ar := range res.Arms {
				if ar.Kind == KindBtcd && ar.WallMedianS > 0 {
					fmt.Fprintf(&b, "; btcd's median wall is %s that bound and its CPU %s the CPU the bound needs",
						times(ar.WallMedianS/sf.BoundS), times(ar.CPUMedianS/(f.CPUSeconds+sf.CPUMedianS)))
				}
			}
			b.WriteString(".\n")
		}
	}
	if len(res.Problems) > 0 {
		b.WriteString("\n**Problems (the figures are not valid):**\n\n")
		for _, p := range res.Problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	return b.String()
}

// commandLine is an arm's command with the binary's base name, D for the
// data directory and the corpus' base name; utxod arms show B for the store.
func commandLine(ar ArmResult, corpus string) string {
	args := make([]string, len(ar.Argv))
	for i, a := range ar.Argv {
		switch {
		case i == 0:
			a = filepath.Base(a)
		case a == datadirPlaceholder:
			a = "D"
		case a == corpus:
			a = filepath.Base(a)
		case ar.Kind == KindCore:
			a = strings.ReplaceAll(a, datadirPlaceholder, "D")
			a = strings.ReplaceAll(a, tipHeightPlaceholder, "TIP_HEIGHT")
			a = strings.ReplaceAll(a, corpus, filepath.Base(corpus))
		case ar.Kind == KindUtxod && a == ar.Store && i > 0 && ar.Argv[i-1] == "--backend":
			a = "B"
		}
		args[i] = a
	}
	return strings.Join(args, " ")
}

func kindBatches(v *VerifyCost) []float64 {
	if v.ECDSA != nil {
		return v.ECDSA.WallNs
	}
	if v.Schnorr != nil {
		return v.Schnorr.WallNs
	}
	return nil
}

// kindWithAllCore is the first kind with all-core batches, or nil.
func kindWithAllCore(v *VerifyCost) *KindCost {
	for _, k := range []*KindCost{v.ECDSA, v.Schnorr} {
		if k != nil && len(k.AllCoreNs) > 0 {
			return k
		}
	}
	return nil
}

func maxRunLoad(res *Result) float64 {
	m := 0.0
	for _, ar := range res.Arms {
		for _, r := range ar.Runs {
			m = max(m, r.Load1)
		}
	}
	return m
}

func times(x float64) string {
	if x == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", x)
}

func fmtLoad(l [3]float64) string { return fmt.Sprintf("%.2f/%.2f/%.2f", l[0], l[1], l[2]) }

func fmtDuration(s float64) string { return fmt.Sprintf("%gs", s) }

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func short(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// thousands formats n with comma separators.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
