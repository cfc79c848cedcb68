// Package clitest checks that a tool's run function keeps the conventions
// of internal/cli; every tool's main_test calls Conventions.
package clitest

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// Conventions runs the tool as `name args... --help` (and -h, -help), which
// must print a usage on stdout alone and exit 0, and with an unknown flag,
// which must print one line on stderr naming the tool and exit 2.
func Conventions(t *testing.T, name string, run func(ctx context.Context, args []string, stdout, stderr io.Writer) int, args ...string) {
	t.Helper()
	for _, h := range []string{"--help", "-h", "-help"} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append(append([]string{}, args...), h), &stdout, &stderr)
		if code != 0 || !strings.Contains(stdout.String(), "Usage: "+name) || stderr.Len() != 0 {
			t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want 0 with the usage on stdout only", name, h, code, stdout.String(), stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append(append([]string{}, args...), "--no-such-flag"), &stdout, &stderr)
	if e := stderr.String(); code != 2 || strings.Count(e, "\n") != 1 || !strings.HasPrefix(e, name) || !strings.Contains(e, "no-such-flag") {
		t.Errorf("%s --no-such-flag: exit %d, stderr %q; want 2 and one line", name, code, e)
	}
}
