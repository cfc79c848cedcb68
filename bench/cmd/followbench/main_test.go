package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"utxod/internal/cli/clitest"
)

func TestConventions(t *testing.T) {
	clitest.Conventions(t, "followbench", run)
}

func TestUsageAndFailures(t *testing.T) {
	var out, errw bytes.Buffer
	if code := run(context.Background(), nil, &out, &errw); code != 2 || !strings.Contains(errw.String(), "followbench: --corpus is required") {
		t.Fatalf("no args: exit %d, %s", code, errw.String())
	}
	errw.Reset()
	missing := filepath.Join(t.TempDir(), "missing")
	if code := run(context.Background(), []string{"--corpus", missing, "--utxod", missing, "--corerest", missing}, &out, &errw); code != 1 {
		t.Fatalf("missing binaries: exit %d, %s", code, errw.String())
	}
}

// TestMeasures runs one round on the first blocks of the mainnet sample
// with freshly built binaries: both arms end on the same tip.
func TestMeasures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds utxod and corerest")
	}
	dir := t.TempDir()
	for _, b := range [][]string{{"utxod", "../../../cmd/utxod"}, {"corerest", "../../../testkit/cmd/corerest"}} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, b[0]), b[1]).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	var out, errw bytes.Buffer
	code := run(context.Background(), []string{"--corpus", "../../../testdata/mainnet/blk_0_to_14131.dat", "--network", "main", "--rounds", "1",
		"--utxod", filepath.Join(dir, "utxod"), "--corerest", filepath.Join(dir, "corerest"), "--cooldown", "0", "--workdir", dir,
		"--json", filepath.Join(dir, "r.json"), "--log-level", "warn"}, &out, &errw)
	if code != 0 || !strings.Contains(out.String(), "| follow over REST |") || !strings.Contains(out.String(), "Speed ratio") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errw.String())
	}
}
