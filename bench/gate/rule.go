package gate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Rule holds the promotion thresholds.
type Rule struct {
	// RequiredSpeedup is the control/candidate ratio a primary axis (wall
	// or CPU time) must reach on every store (default 1.05).
	RequiredSpeedup float64
	// MaxRegression bounds how much worse the candidate may be on the other
	// axis and on peak RSS: candidate/control ≤ 1 + MaxRegression (0.03).
	MaxRegression float64
}

// DefaultRule is the gate's documented rule: 5% on one primary axis, no
// more than 3% regression elsewhere.
var DefaultRule = Rule{RequiredSpeedup: 1.05, MaxRegression: 0.03}

// Text states the rule as recorded in the verdict.
func (r Rule) Text() string {
	return fmt.Sprintf("promote iff for a primary axis X in {wall, cpu}: X_speedup (control median / candidate median) >= %s on every store, "+
		"and on every store the other axis does not regress by more than %s%% (other_speedup >= 1/(1+%s)) and rss_ratio (candidate/control) <= %s; "+
		"otherwise revert; invalid if any run failed or any digest differs",
		fmtRatio(r.RequiredSpeedup), strconv.FormatFloat(r.MaxRegression*100, 'f', -1, 64),
		fmtRatio(r.MaxRegression), fmtRatio(1+r.MaxRegression))
}

// Ratios is the rule's input for one store.
type Ratios struct {
	Store       string
	WallSpeedup float64 // control median wall / candidate median wall
	CPUSpeedup  float64 // control median CPU / candidate median CPU
	RSSRatio    float64 // candidate median peak RSS / control median
}

// Decide applies the rule. problems are correctness failures (digest
// mismatches, failed runs); any makes the verdict invalid. stores are the
// measured stores; none is invalid too. It is a pure function.
func Decide(r Rule, stores []Ratios, problems []string) Verdict {
	v := Verdict{Rule: r.Text(), Falsifiers: []Falsifier{}}
	if len(problems) > 0 {
		v.Decision = Invalid
		v.Reason = "correctness: " + strings.Join(problems, "; ")
		return v
	}
	if len(stores) == 0 {
		v.Decision = Invalid
		v.Reason = "no store was measured"
		return v
	}
	for _, s := range stores {
		for _, m := range []struct {
			name string
			v    float64
		}{{"wall_speedup", s.WallSpeedup}, {"cpu_speedup", s.CPUSpeedup}, {"rss_ratio", s.RSSRatio}} {
			if math.IsNaN(m.v) || math.IsInf(m.v, 0) || m.v <= 0 {
				v.Decision = Invalid
				v.Reason = fmt.Sprintf("%s %s is %v, not a positive finite ratio", s.Store, m.name, m.v)
				return v
			}
		}
	}
	otherBound := 1 / (1 + r.MaxRegression)
	rssBound := 1 + r.MaxRegression
	for _, axis := range []string{"wall", "cpu"} {
		var fs []Falsifier
		for _, s := range stores {
			primary, other, otherName := s.WallSpeedup, s.CPUSpeedup, "cpu"
			if axis == "cpu" {
				primary, other, otherName = s.CPUSpeedup, s.WallSpeedup, "wall"
			}
			if primary < r.RequiredSpeedup {
				fs = append(fs, Falsifier{Axis: axis, Store: s.Store, Metric: axis + "_speedup", Value: primary, Bound: r.RequiredSpeedup, Op: "<"})
			}
			if other < otherBound {
				fs = append(fs, Falsifier{Axis: axis, Store: s.Store, Metric: otherName + "_speedup", Value: other, Bound: otherBound, Op: "<"})
			}
			if s.RSSRatio > rssBound {
				fs = append(fs, Falsifier{Axis: axis, Store: s.Store, Metric: "rss_ratio", Value: s.RSSRatio, Bound: rssBound, Op: ">"})
			}
		}
		if len(fs) == 0 {
			v.Axes = append(v.Axes, axis)
		}
		v.Falsifiers = append(v.Falsifiers, fs...)
	}
	if len(v.Axes) > 0 {
		v.Decision = Promote
		v.Falsifiers = []Falsifier{}
		var parts []string
		for _, axis := range v.Axes {
			worst := stores[0]
			for _, s := range stores[1:] {
				if axisValue(s, axis) < axisValue(worst, axis) {
					worst = s
				}
			}
			parts = append(parts, fmt.Sprintf("%s_speedup >= %s on every store (lowest %s on %s)",
				axis, fmtRatio(r.RequiredSpeedup), fmtRatio(axisValue(worst, axis)), worst.Store))
		}
		v.Reason = strings.Join(parts, " and ") + fmt.Sprintf("; no other axis or RSS regresses by more than %s%%",
			strconv.FormatFloat(r.MaxRegression*100, 'f', -1, 64))
		return v
	}
	v.Decision = Revert
	v.Reason = revertReason(v.Falsifiers, r.MaxRegression)
	return v
}

// revertReason names the falsifiers once per store and metric, keeping the
// strongest statement: "cpu_speedup 0.96 < 0.971" (a regression, which
// falsifies the wall axis) implies "cpu_speedup 0.96 < 1.05".
func revertReason(fs []Falsifier, maxReg float64) string {
	type key struct{ store, metric string }
	var order []key
	pick := map[key]Falsifier{}
	for _, f := range fs {
		k := key{f.Store, f.Metric}
		old, ok := pick[k]
		if !ok {
			order = append(order, k)
		}
		if !ok || (f.Op == "<" && f.Bound < old.Bound) || (f.Op == ">" && f.Bound > old.Bound) {
			pick[k] = f
		}
	}
	parts := make([]string, 0, len(order))
	for _, k := range order {
		f := pick[k]
		s := f.String()
		if f.Metric != f.Axis+"_speedup" {
			s += " (regresses by more than " + strconv.FormatFloat(maxReg*100, 'f', -1, 64) + "%)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " and ")
}

func axisValue(s Ratios, axis string) float64 {
	if axis == "cpu" {
		return s.CPUSpeedup
	}
	return s.WallSpeedup
}

// fmtRatio prints a ratio with up to three decimals, at least two.
func fmtRatio(x float64) string {
	s := strconv.FormatFloat(x, 'f', 3, 64)
	if strings.HasSuffix(s, "0") && !strings.HasSuffix(s, ".00") {
		s = s[:len(s)-1]
	}
	return s
}
