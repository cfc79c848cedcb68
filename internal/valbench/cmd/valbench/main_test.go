package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestUsageAndFailures(t *testing.T) {
	var out, errw bytes.Buffer
	if code := run(nil, &out, &errw); code != 2 || !strings.Contains(errw.String(), "Usage: valbench") {
		t.Fatalf("no args: exit %d, %s", code, errw.String())
	}
	if code := run([]string{"--corpus", "x.dat", "extra"}, &out, &errw); code != 2 {
		t.Fatalf("positional argument: exit %d", code)
	}
	errw.Reset()
	missing := filepath.Join(t.TempDir(), "missing")
	if code := run([]string{"--corpus", missing, "--utxod", missing, "--btcdreplay", missing}, &out, &errw); code != 1 ||
		!strings.Contains(errw.String(), "valbench:") {
		t.Fatalf("missing binaries: exit %d, %s", code, errw.String())
	}
}
