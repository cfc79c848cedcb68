package layout

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "utxod"

// pkg is what go list -json reports of one package that this test reads.
type pkg struct {
	ImportPath string
	Imports    []string
}

// listPackages runs go list over the whole module, with the rocksdb tag so
// that the tagged files count too.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-tags", "rocksdb", "-json", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	return pkgs
}

// area names where a package of this module lives: the product, the
// measuring harness (bench), the test kit (testkit) or internal leaves.
func area(path string) string {
	rel := strings.TrimPrefix(path, module+"/")
	switch {
	case rel == "bench" || strings.HasPrefix(rel, "bench/"):
		return "bench"
	case rel == "testkit" || strings.HasPrefix(rel, "testkit/"):
		return "testkit"
	case strings.HasPrefix(rel, "internal/"):
		return "internal"
	}
	return "product"
}

func own(path string) bool { return path == module || strings.HasPrefix(path, module+"/") }

// TestImportGraph: dependencies point inward. The product (everything outside
// bench/ and testkit/) never imports bench/ or testkit/ outside its tests;
// internal/ holds leaves only, importing nothing of this module; the test kit
// never imports the measuring harness.
func TestImportGraph(t *testing.T) {
	for _, p := range listPackages(t) {
		from := area(p.ImportPath)
		for _, imp := range p.Imports {
			if !own(imp) {
				continue
			}
			to := area(imp)
			switch {
			case from == "product" && (to == "bench" || to == "testkit"):
				t.Errorf("product package %s imports %s", p.ImportPath, imp)
			case from == "internal":
				t.Errorf("internal package %s imports %s: internal/ holds leaves only", p.ImportPath, imp)
			case from == "testkit" && to == "bench":
				t.Errorf("test kit package %s imports the harness %s", p.ImportPath, imp)
			}
		}
	}
}

func TestArea(t *testing.T) {
	for path, want := range map[string]string{
		"utxod/bench":                 "bench",
		"utxod/bench/gate":            "bench",
		"utxod/benchmarks":            "product",
		"utxod/testkit/chaingen":      "testkit",
		"utxod/internal/diskspace":    "internal",
		"utxod/chainstate":            "product",
		"utxod/store/kvstore/shindex": "product",
	} {
		if got := area(path); got != want {
			t.Errorf("area(%s) = %s, want %s", path, got, want)
		}
	}
}
