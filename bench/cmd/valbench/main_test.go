package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"utxod/internal/cli/clitest"
)

func TestUsageAndFailures(t *testing.T) {
	var out, errw bytes.Buffer
	if code := run(context.Background(), nil, &out, &errw); code != 2 || !strings.Contains(errw.String(), "valbench: --corpus is required") {
		t.Fatalf("no args: exit %d, %s", code, errw.String())
	}
	if code := run(context.Background(), []string{"--corpus", "x.dat", "extra"}, &out, &errw); code != 2 {
		t.Fatalf("positional argument: exit %d", code)
	}
	errw.Reset()
	missing := filepath.Join(t.TempDir(), "missing")
	if code := run(context.Background(), []string{"--corpus", missing, "--utxod", missing, "--btcdreplay", missing}, &out, &errw); code != 1 ||
		!strings.Contains(errw.String(), "valbench:") {
		t.Fatalf("missing binaries: exit %d, %s", code, errw.String())
	}
}

func TestConventions(t *testing.T) {
	clitest.Conventions(t, "valbench", run)
}
