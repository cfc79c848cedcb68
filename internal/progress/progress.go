// Package progress is the progress meter of utxod's long commands (import,
// snapshot verify and load, index build, drop and verify): a bar on a
// terminal, otherwise a log line at an interval, with the amount done, the
// total when known, the rates and an ETA.
package progress

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// DefaultEvery is the interval of log lines the commands' --progress
// flags default to.
const DefaultEvery = 10 * time.Second

// Config describes a meter.
type Config struct {
	// What names the work; the log lines say "<What> progress".
	What string
	// Unit is what the amount done counts ("bytes", "coins", "rows"); the
	// log lines carry it as the amount's key and <Unit>_per_s as its rate.
	// "bytes" shows sizes on the bar.
	Unit string
	// Total is the amount expected (0: unknown until Report says).
	Total int64
	// Every is the interval of log lines (0: none).
	Every time.Duration
	// Out is where the bar goes when it is a terminal; otherwise the meter
	// logs.
	Out io.Writer
	// Log receives the log lines. Nil discards them.
	Log *slog.Logger
	// Rates names counters besides the amount (Add's counts, in this
	// order), shown as <name>_per_s.
	Rates []string
}

// Meter is a progress meter. Its methods may be called from several
// goroutines.
type Meter struct {
	cfg     Config
	bar     *progressbar.ProgressBar
	mu      sync.Mutex
	start   time.Time
	lastLog time.Time
	done    int64
	total   int64
	counts  []int64
	notes   []any // key, value pairs
}

// New starts a meter.
func New(cfg Config) *Meter {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	now := time.Now()
	m := &Meter{cfg: cfg, start: now, lastLog: now, total: cfg.Total, counts: make([]int64, len(cfg.Rates))}
	if f, ok := cfg.Out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		m.bar = newBar(cfg)
	}
	return m
}

func newBar(cfg Config) *progressbar.ProgressBar {
	max := cfg.Total
	if max <= 0 {
		max = -1
	}
	opts := []progressbar.Option{progressbar.OptionSetWriter(cfg.Out), progressbar.OptionSetDescription(cfg.What),
		progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200 * time.Millisecond), progressbar.OptionSetWidth(30)}
	if cfg.Unit == "bytes" {
		opts = append(opts, progressbar.OptionShowBytes(true))
	} else {
		opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString(cfg.Unit))
	}
	return progressbar.NewOptions64(max, opts...)
}

// Add adds n to the amount done and counts to the counters of
// Config.Rates.
func (m *Meter) Add(n int64, counts ...int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done += n
	for i, c := range counts {
		m.counts[i] += c
	}
	m.update()
}

// Report sets the amount done and the total (0: unchanged); its signature
// is the progress callback of snapshot and shindex.
func (m *Meter) Report(done, total uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done = int64(done)
	if total > 0 {
		m.total = int64(total)
	}
	m.update()
}

// Note shows key = value with the next updates (the height an import
// reached, say).
func (m *Meter) Note(key string, value any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := 0; i < len(m.notes); i += 2 {
		if m.notes[i] == key {
			m.notes[i+1] = value
			return
		}
	}
	m.notes = append(m.notes, key, value)
}

// Count is the counter of Config.Rates[i] so far.
func (m *Meter) Count(i int) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[i]
}

// Finish ends the bar (a no-op for log lines).
func (m *Meter) Finish() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bar != nil {
		_ = m.bar.Finish()
		fmt.Fprintln(m.cfg.Out)
		m.bar = nil
	}
}

// update shows the state: on the bar, or as a log line once Every has
// passed since the last.
func (m *Meter) update() {
	if m.bar != nil {
		if m.total > 0 && m.bar.GetMax64() != m.total {
			m.bar.ChangeMax64(m.total)
		}
		if len(m.notes)+len(m.counts) > 0 {
			m.bar.Describe(m.describe())
		}
		_ = m.bar.Set64(m.done)
		return
	}
	if m.cfg.Every <= 0 || time.Since(m.lastLog) < m.cfg.Every {
		return
	}
	m.lastLog = time.Now()
	m.cfg.Log.Info(m.cfg.What+" progress", m.attrs()...)
}

// attrs are a log line's: the amount, the total and percentage when known,
// the rates, the notes and the ETA when the total is known.
func (m *Meter) attrs() []any {
	el := max(time.Since(m.start).Seconds(), 1e-9)
	a := []any{m.cfg.Unit, m.done}
	if m.total > 0 {
		a = append(a, "of", m.total, "percent", fmt.Sprintf("%.1f", 100*float64(m.done)/float64(m.total)))
	}
	a = append(a, m.cfg.Unit+"_per_s", int64(float64(m.done)/el))
	a = append(a, m.notes...)
	for i, name := range m.cfg.Rates {
		a = append(a, name+"_per_s", int64(float64(m.counts[i])/el))
	}
	if m.total > 0 {
		a = append(a, "eta", m.eta().String())
	}
	return a
}

// eta extrapolates the rate so far to the rest of the total.
func (m *Meter) eta() time.Duration {
	if m.done <= 0 || m.total <= m.done {
		return 0
	}
	el := time.Since(m.start)
	return time.Duration(float64(el) * float64(m.total-m.done) / float64(m.done)).Round(time.Second)
}

// describe is the bar's description: What, the notes and the rates.
func (m *Meter) describe() string {
	s := m.cfg.What
	for i := 0; i < len(m.notes); i += 2 {
		s += fmt.Sprintf("  %v %v", m.notes[i], m.notes[i+1])
	}
	el := max(time.Since(m.start).Seconds(), 1e-9)
	for i, name := range m.cfg.Rates {
		s += fmt.Sprintf("  %.0f %s/s", float64(m.counts[i])/el, name)
	}
	return s
}
