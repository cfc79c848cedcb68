package progress

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// lines runs f on a meter logging as text into a buffer, with an interval
// that every update passes, and returns the log lines.
func lines(t *testing.T, cfg Config, f func(m *Meter)) []string {
	t.Helper()
	var buf bytes.Buffer
	cfg.Log = slog.New(slog.NewTextHandler(&buf, nil))
	cfg.Every = time.Nanosecond
	cfg.Out = &buf // not a terminal: log lines
	m := New(cfg)
	time.Sleep(time.Millisecond)
	f(m)
	m.Finish()
	return strings.Split(strings.TrimSpace(buf.String()), "\n")
}

// TestLogLines: the amount under its unit, the total, percentage and ETA
// once a total is known, the rates and the notes.
func TestLogLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		f    func(m *Meter)
		want []string
		not  []string
	}{
		{"total known", Config{What: "load", Unit: "coins"}, func(m *Meter) { m.Report(25, 100) },
			[]string{`msg="load progress"`, "coins=25", "of=100", "percent=25.0", "coins_per_s=", "eta="}, nil},
		{"total unknown", Config{What: "index build", Unit: "rows"}, func(m *Meter) { m.Report(7, 0) },
			[]string{`msg="index build progress"`, "rows=7", "rows_per_s="}, []string{"of=", "eta=", "percent="}},
		{"rates and notes", Config{What: "import", Unit: "bytes", Total: 1000, Rates: []string{"blocks", "tx"}}, func(m *Meter) {
			m.Note("height", 5)
			m.Add(500, 1, 3)
		}, []string{"bytes=500", "of=1000", "height=5", "blocks_per_s=", "tx_per_s=", "eta="}, nil},
	} {
		got := lines(t, tc.cfg, tc.f)
		if len(got) != 1 {
			t.Fatalf("%s: %d lines: %q", tc.name, len(got), got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got[0], w) {
				t.Errorf("%s: %q lacks %q", tc.name, got[0], w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(got[0], w) {
				t.Errorf("%s: %q has %q", tc.name, got[0], w)
			}
		}
	}
}

// TestInterval: no line before the interval has passed, none with 0; the
// counters add up.
func TestInterval(t *testing.T) {
	var buf bytes.Buffer
	for _, every := range []time.Duration{0, time.Hour} {
		m := New(Config{What: "x", Unit: "rows", Every: every, Out: &buf, Log: slog.New(slog.NewTextHandler(&buf, nil)), Rates: []string{"a"}})
		for range 10 {
			m.Add(1, 2)
		}
		m.Finish()
		if buf.Len() != 0 {
			t.Fatalf("every %v: %q", every, buf.String())
		}
		if m.Count(0) != 20 {
			t.Fatalf("count %d", m.Count(0))
		}
	}
}
