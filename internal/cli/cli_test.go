package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestTool(t *testing.T) {
	var stdout, stderr bytes.Buffer
	tool := New("demo", "Usage: demo [flags]", &stdout, &stderr)
	n := tool.Flags.Int("n", 1, "a number")
	if code, done := tool.Parse([]string{"--n", "3", "--log-level", "warn"}); done || code != 0 || *n != 3 || tool.Log == nil {
		t.Fatalf("parse: exit %d done %v, n %d, stderr %s", code, done, *n, stderr.String())
	}
	tool.Log.Info("hidden")
	tool.Log.Warn("shown")
	if s := stderr.String(); strings.Contains(s, "hidden") || !strings.Contains(s, "shown") {
		t.Fatalf("log level not applied: %s", s)
	}
	for _, h := range []string{"--help", "-h", "-help"} {
		stdout.Reset()
		stderr.Reset()
		code, done := New("demo", "Usage: demo [flags]", &stdout, &stderr).Parse([]string{h})
		if !done || code != ExitOK || !strings.HasPrefix(stdout.String(), "Usage: demo [flags]\nFlags:\n") ||
			!strings.Contains(stdout.String(), "-log-level") || stderr.Len() != 0 {
			t.Fatalf("%s: exit %d done %v, stdout %q, stderr %q", h, code, done, stdout.String(), stderr.String())
		}
	}
	for _, args := range [][]string{{"--nope"}, {"--log-level", "loud"}, {"--n", "many"}} {
		stdout.Reset()
		stderr.Reset()
		code, done := New("demo", "Usage: demo [flags]", &stdout, &stderr).Parse(args)
		if !done || code != ExitUsage || strings.Count(stderr.String(), "\n") != 1 ||
			!strings.HasPrefix(stderr.String(), "demo: ") || !strings.HasSuffix(stderr.String(), " (see demo --help)\n") || stdout.Len() != 0 {
			t.Errorf("%q: exit %d done %v, stderr %q", args, code, done, stderr.String())
		}
	}
	stderr.Reset()
	if code := tool.Fail(errors.New("boom")); code != ExitFail || stderr.String() != "demo: boom\n" {
		t.Fatalf("fail %d: %q", code, stderr.String())
	}
	stderr.Reset()
	if code := tool.UsageError(errors.New("bad")); code != ExitUsage || stderr.String() != "demo: bad (see demo --help)\n" {
		t.Fatalf("usage error %d: %q", code, stderr.String())
	}
}
