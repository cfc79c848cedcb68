package gate

import (
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"utxod/bench"
)

// WriteCustody writes c as indented JSON.
func WriteCustody(c *Custody, path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, append(b, '\n'))
}

// ChartPath is where WriteReport puts the SVG chart for a report path:
// beside it, with the extension .svg.
func ChartPath(reportPath string) string {
	return strings.TrimSuffix(reportPath, filepath.Ext(reportPath)) + ".svg"
}

// WriteReport writes the Markdown report to path and its SVG chart beside it
// (ChartPath).
func WriteReport(c *Custody, path string) error {
	svgPath := ChartPath(path)
	if err := writeFile(svgPath, []byte(RenderSVG(c))); err != nil {
		return err
	}
	return writeFile(path, []byte(RenderMarkdown(c, filepath.Base(svgPath))))
}

func writeFile(path string, b []byte) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(path, b, 0o644)
}

func mib(kib float64) float64 { return kib / 1024 }

func short(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// RenderMarkdown renders the report; chart is the SVG's file name ("" for
// none).
func RenderMarkdown(c *Custody, chart string) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	v := c.Verdict
	w("# utxod gate: %s\n\n", strings.ToUpper(v.Decision))
	w("**Verdict: %s** — %s\n\n", v.Decision, v.Reason)
	for _, n := range v.Notes {
		w("- note: %s\n", n)
	}
	if len(v.Notes) > 0 {
		w("\n")
	}
	w("Rule: %s.\n\n", v.Rule)
	w("Corpus `%s` (%s, %d blocks, tip height %d `%s`), stores %s, %d ABBA pair(s) per store, cooldown %gs, pin %s.\n\n",
		corpusLabel(c.Identity.Corpus), c.Identity.Corpus.Network, c.Identity.Corpus.Blocks, c.Identity.Corpus.Height,
		c.Identity.Corpus.StopHash, strings.Join(c.Harness.Backends, ", "), c.Harness.Pairs, c.Harness.CooldownS, pinText(c.Harness.Pin))

	w("| store | status | wall control (s) | wall candidate (s) | wall_speedup | CPU control (s) | CPU candidate (s) | cpu_speedup | RSS control (MiB) | RSS candidate (MiB) | rss_ratio |\n")
	w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, sr := range c.Stores {
		if sr.Status != StoreMeasured {
			w("| %s | %s: %s | | | | | | | | | |\n", sr.Store, sr.Status, mdEscape(sr.Reason))
			continue
		}
		ct, cd := sr.Medians[Control], sr.Medians[Candidate]
		w("| %s | %s | %.3f [%.3f–%.3f] | %.3f [%.3f–%.3f] | **%s** | %.3f [%.3f–%.3f] | %.3f [%.3f–%.3f] | **%s** | %.1f | %.1f | **%s** |\n",
			sr.Store, sr.Status,
			ct.WallMedianS, ct.WallMinS, ct.WallMaxS, cd.WallMedianS, cd.WallMinS, cd.WallMaxS, fmtRatio(sr.WallSpeedup),
			ct.CPUMedianS, ct.CPUMinS, ct.CPUMaxS, cd.CPUMedianS, cd.CPUMinS, cd.CPUMaxS, fmtRatio(sr.CPUSpeedup),
			mib(ct.RSSMedianKiB), mib(cd.RSSMedianKiB), fmtRatio(sr.RSSRatio))
	}
	w("\nMedians with [min–max] over the runs; speed-ups are control/candidate, rss_ratio is candidate/control.\n\n")
	pairedTable(w, c.Stores)
	if chart != "" {
		w("![per store and arm: median bar, min–max whisker](%s)\n\n", chart)
	}
	if len(v.Falsifiers) > 0 {
		w("## Falsifiers\n\n| primary axis | store | metric | value | bound |\n|---|---|---|---:|---:|\n")
		for _, f := range v.Falsifiers {
			w("| %s | %s | %s | %s | %s %s |\n", f.Axis, f.Store, f.Metric, fmtRatio(f.Value), f.Op, fmtRatio(f.Bound))
		}
		w("\n")
	}

	w("## Correctness\n\n")
	cr := c.Correctness
	if cr.OK {
		w("All %d runs reached the same chainstate:\n\n", cr.Compared)
	} else {
		w("**Not OK** (%d runs compared):\n\n", cr.Compared)
		for _, m := range cr.Mismatches {
			w("- %s\n", mdEscape(m))
		}
		w("\n")
	}
	if d := cr.Reference; d != nil {
		w("| height | bestblock | txouts | total_amount_sat | muhash | hash_serialized_3 |\n|---:|---|---:|---:|---|---|\n")
		w("| %d | `%s` | %d | %d | `%s` | `%s` |\n\n", d.Height, d.BestBlock, d.TxOuts, d.TotalAmountSat, d.MuHash, d.HashSerialized3)
	}
	for _, n := range cr.Notes {
		w("- note: %s\n", n)
	}

	id := c.Identity
	w("## Identity\n\n")
	w("- captured: %s\n", id.CapturedAt.Format("2006-01-02T15:04:05Z07:00"))
	dirty := "unknown"
	if id.Git.Dirty != nil {
		dirty = fmt.Sprint(*id.Git.Dirty)
	}
	w("- git HEAD: `%s` (dirty: %s)\n", orNone(id.Git.Head), dirty)
	for _, arm := range []string{Control, Candidate} {
		bi := id.Binaries[arm]
		w("- %s: commit label `%s`, binary `%s` sha256 `%s`", arm, orNone(id.Commits[arm]), bi.Path, bi.SHA256)
		if bi.VCSRevision != "" {
			w(", built from `%s`", bi.VCSRevision)
		}
		w("\n")
	}
	w("- corpus: `%s` sha256 `%s`, %d bytes", id.Corpus.Path, id.Corpus.SHA256, id.Corpus.Bytes)
	if id.Corpus.Source != "" {
		w(" — the first %d blocks of `%s` (sha256 `%s`)", id.Corpus.PrefixBlocks, id.Corpus.Source, id.Corpus.SourceSHA256)
	}
	w("\n")
	var feats []string
	for _, k := range slices.Sorted(maps.Keys(id.Host.Features)) {
		if id.Host.Features[k] {
			feats = append(feats, k)
		}
	}
	w("- host: %s (%s), %d CPUs, features: %s; kernel `%s`; %s\n\n", orNone(id.Host.CPUModel), id.Host.CPUVendor,
		id.Host.Cores, orNone(strings.Join(feats, " ")), id.Host.Kernel, id.Host.GoVersion)

	w("## Harness\n\n- order: %s, sequence per store: %s\n", c.Harness.Order, strings.Join(c.Harness.Sequence, ", "))
	for _, arm := range []string{Control, Candidate} {
		w("- %s template: `%s`\n", arm, c.Harness.Templates[arm])
		if env := c.Harness.Env[arm]; len(env) > 0 {
			w("- %s environment: `%s`\n", arm, strings.Join(env, " "))
		}
	}
	w("\n## Runs\n\n| store | seq | arm | # | wall (s) | user (s) | sys (s) | max RSS (MiB) | datadir (MiB) | exit |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, sr := range c.Stores {
		for _, r := range sr.Runs {
			w("| %s | %d | %s | %d | %.3f | %.3f | %.3f | %.1f | %.1f | %d |\n", sr.Store, r.Seq, r.Arm, r.Index,
				r.WallS, r.CPUUserS, r.CPUSysS, mib(float64(r.MaxRSSKiB)), float64(r.DatadirB)/(1<<20), r.ExitCode)
		}
	}
	return b.String()
}

func corpusLabel(c bench.CorpusIdentity) string {
	if c.Source != "" {
		return fmt.Sprintf("%s (first %d blocks)", filepath.Base(c.Source), c.PrefixBlocks)
	}
	return filepath.Base(c.Path)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func pinText(p Pin) string {
	if p.CPUs == "" {
		return "none"
	}
	return p.CPUs + " via " + p.Method
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// RenderSVG draws three panels (wall, CPU, peak RSS); in each, per measured
// store, one bar per arm at the median with a whisker over the runs'
// min–max.
func RenderSVG(c *Custody) string {
	type bar struct{ med, lo, hi float64 }
	type panel struct {
		title string
		get   func(ArmSummary) bar
	}
	panels := []panel{
		{"wall time (s)", func(a ArmSummary) bar { return bar{a.WallMedianS, a.WallMinS, a.WallMaxS} }},
		{"CPU time, user+sys (s)", func(a ArmSummary) bar { return bar{a.CPUMedianS, a.CPUMinS, a.CPUMaxS} }},
		{"peak RSS (MiB)", func(a ArmSummary) bar {
			return bar{mib(a.RSSMedianKiB), mib(float64(a.RSSMinKiB)), mib(float64(a.RSSMaxKiB))}
		}},
	}
	var stores []StoreResult
	for _, sr := range c.Stores {
		if sr.Status == StoreMeasured {
			stores = append(stores, sr)
		}
	}
	const (
		pw, ph        = 320.0, 300.0 // panel size
		left, right   = 50.0, 10.0
		top, bottom   = 70.0, 40.0
		plotH         = ph - bottom - 30
		barW, barGap  = 22.0, 4.0
		groupPad      = 18.0
		ctlColor      = "#4e79a7"
		candColor     = "#f28e2b"
		whiskerColor  = "#222"
		gridColor     = "#ddd"
		fontAttribute = `font-family="sans-serif"`
	)
	width := left + float64(len(panels))*pw + right
	height := top + ph
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" %s font-size="11">`+"\n",
		width, height, width, height, fontAttribute)
	w(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	title := fmt.Sprintf("utxod gate — verdict %s — %s, %d pair(s)", strings.ToUpper(c.Verdict.Decision),
		corpusLabel(c.Identity.Corpus), c.Harness.Pairs)
	w(`<text x="%.0f" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))
	w(`<rect x="%.0f" y="32" width="12" height="12" fill="%s"/><text x="%.0f" y="42">control</text>`+"\n", left, ctlColor, left+16)
	w(`<rect x="%.0f" y="32" width="12" height="12" fill="%s"/><text x="%.0f" y="42">candidate</text>`+"\n", left+80, candColor, left+96)
	w(`<text x="%.0f" y="42" fill="#555">bar = median, whisker = min–max of the runs; ×: speed-up control/candidate, r: RSS candidate/control</text>`+"\n", left+180)
	if len(stores) == 0 {
		w(`<text x="%.0f" y="%.0f">no store measured</text>`+"\n", left, top+40)
	}
	for pi, p := range panels {
		x0 := left + float64(pi)*pw
		y0 := top + 20 // plot top
		yBase := y0 + plotH
		var hi float64
		for _, sr := range stores {
			for _, arm := range []string{Control, Candidate} {
				hi = max(hi, p.get(sr.Medians[arm]).hi)
			}
		}
		step, topV := niceScale(hi)
		scale := func(v float64) float64 { return yBase - v/topV*plotH }
		w(`<text x="%.0f" y="%.0f" font-weight="bold">%s</text>`+"\n", x0, top+8, html.EscapeString(p.title))
		for t := 0.0; t <= topV+step/2; t += step {
			y := scale(t)
			w(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>`+"\n", x0, x0+pw-40, y, y, gridColor)
			w(`<text x="%.1f" y="%.1f" text-anchor="end" fill="#555">%s</text>`+"\n", x0-4, y+4, tickLabel(t, step))
		}
		w(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#888"/>`+"\n", x0, x0, y0, yBase)
		gx := x0 + groupPad
		for _, sr := range stores {
			for ai, arm := range []string{Control, Candidate} {
				bv := p.get(sr.Medians[arm])
				color := ctlColor
				if arm == Candidate {
					color = candColor
				}
				x := gx + float64(ai)*(barW+barGap)
				w(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s median %.3f (min %.3f, max %.3f)</title></rect>`+"\n",
					x, scale(bv.med), barW, yBase-scale(bv.med), color, sr.Store, arm, bv.med, bv.lo, bv.hi)
				cx := x + barW/2
				w(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"/>`+"\n", cx, cx, scale(bv.lo), scale(bv.hi), whiskerColor)
				for _, yv := range []float64{bv.lo, bv.hi} {
					w(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"/>`+"\n", cx-5, cx+5, scale(yv), scale(yv), whiskerColor)
				}
			}
			w(`<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", gx+barW+barGap/2, yBase+14, html.EscapeString(sr.Store))
			metric := ""
			switch pi {
			case 0:
				metric = "×" + fmtRatio(sr.WallSpeedup)
			case 1:
				metric = "×" + fmtRatio(sr.CPUSpeedup)
			case 2:
				metric = "r " + fmtRatio(sr.RSSRatio)
			}
			w(`<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">%s</text>`+"\n", gx+barW+barGap/2, yBase+27, metric)
			gx += 2*barW + barGap + groupPad*2
		}
	}
	w("</svg>\n")
	return b.String()
}

// niceScale picks a tick step of 1, 2 or 5 × 10^k giving about five ticks
// and the axis top (a multiple of the step ≥ hi).
func niceScale(hi float64) (step, top float64) {
	if hi <= 0 || math.IsNaN(hi) || math.IsInf(hi, 0) {
		return 1, 1
	}
	raw := hi / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	return step, math.Ceil(hi/step-1e-9) * step
}

func tickLabel(v, step float64) string {
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step)))
	}
	return fmt.Sprintf("%.*f", dec, v)
}

// pairedTable writes the per-pair ratios of the stores that have them
// (informational: the verdict uses the medians).
func pairedTable(w func(string, ...any), stores []StoreResult) {
	have := false
	for _, sr := range stores {
		have = have || sr.Paired != nil
	}
	if !have {
		return
	}
	w("Per pair (informational, not the rule): each control run against the candidate run beside it in the ABBA order, so that the host's drift between pairs cancels; medians over the pairs, and the pairs the candidate won.\n\n")
	w("| store | pairs | wall_speedup | candidate faster (wall) | cpu_speedup | candidate cheaper (CPU) | rss_ratio |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, sr := range stores {
		if p := sr.Paired; p != nil {
			w("| %s | %d | %s | %d / %d | %s | %d / %d | %s |\n", sr.Store, p.Pairs, fmtRatio(p.WallSpeedup), p.WallWins, p.Pairs,
				fmtRatio(p.CPUSpeedup), p.CPUWins, p.Pairs, fmtRatio(p.RSSRatio))
		}
	}
	w("\n")
}
