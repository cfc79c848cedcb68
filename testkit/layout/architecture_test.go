package layout

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
)

// update rewrites the imports cells of docs/ARCHITECTURE.md from go list
// (go test ./testkit/layout -run TestArchitecture -update); rows and their
// jobs stay hand-written.
var update = flag.Bool("update", false, "rewrite ARCHITECTURE.md's imports cells from go list")

const architecturePath = "../../docs/ARCHITECTURE.md"

// archRow is one row of docs/ARCHITECTURE.md's package tables.
type archRow struct {
	line    int
	area    string // from the table's heading: product, bench, testkit, internal
	pkg     string // import path inside the module: "store/kvstore"
	imports []string
}

// headingArea maps a "### " heading of the Packages section to an area.
func headingArea(h string) string {
	switch {
	case strings.Contains(h, "bench/"):
		return "bench"
	case strings.Contains(h, "testkit/"):
		return "testkit"
	case strings.Contains(h, "internal/"):
		return "internal"
	case strings.Contains(h, "Product"):
		return "product"
	}
	return ""
}

// parseArchitecture reads the rows of the tables under "## Packages": the
// first cell names the package, the last lists its module imports as
// "`a`, `b`" or "—".
func parseArchitecture(t *testing.T, text string) []archRow {
	t.Helper()
	var rows []archRow
	in, area := false, ""
	for i, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Packages"
			continue
		case !in:
			continue
		case strings.HasPrefix(line, "### "):
			area = headingArea(line)
			if area == "" {
				t.Errorf("ARCHITECTURE.md:%d: heading %q names no area (Product, bench/, testkit/, internal/)", i+1, line)
			}
			continue
		case !strings.HasPrefix(line, "| `"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 3 {
			t.Errorf("ARCHITECTURE.md:%d: want 3 cells (package | job | imports), got %d", i+1, len(cells))
			continue
		}
		r := archRow{line: i + 1, area: area, pkg: unquote(t, i+1, strings.TrimSpace(cells[0]))}
		if imps := strings.TrimSpace(cells[2]); imps != "—" {
			for imp := range strings.SplitSeq(imps, ", ") {
				r.imports = append(r.imports, unquote(t, i+1, imp))
			}
		}
		rows = append(rows, r)
	}
	return rows
}

func unquote(t *testing.T, line int, s string) string {
	t.Helper()
	if len(s) < 3 || s[0] != '`' || s[len(s)-1] != '`' || strings.ContainsAny(s[1:len(s)-1], "` ") {
		t.Errorf("ARCHITECTURE.md:%d: want one `package` per name, got %q", line, s)
		return s
	}
	return s[1 : len(s)-1]
}

// TestArchitecture: docs/ARCHITECTURE.md has exactly one row per package go
// list shows, under the heading of its area, and no row for a package that
// does not exist; each row's imports are exactly the package's module
// imports outside its tests (go list -tags rocksdb), so every arrow the page
// states is real and no real one is missing.
func TestArchitecture(t *testing.T) {
	text, err := os.ReadFile(architecturePath)
	if err != nil {
		t.Fatal(err)
	}
	rows := parseArchitecture(t, string(text))
	lines := strings.Split(string(text), "\n")
	byPkg := map[string]archRow{}
	for _, r := range rows {
		if prev, dup := byPkg[r.pkg]; dup {
			t.Errorf("ARCHITECTURE.md:%d: %s has a row already (line %d)", r.line, r.pkg, prev.line)
			continue
		}
		byPkg[r.pkg] = r
	}
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		r, ok := byPkg[rel]
		if !ok {
			t.Errorf("ARCHITECTURE.md: no row for %s (add one under the %s heading)", rel, area(p.ImportPath))
			continue
		}
		delete(byPkg, rel)
		if r.area != area(p.ImportPath) {
			t.Errorf("ARCHITECTURE.md:%d: %s is listed under %s, but it belongs to %s", r.line, rel, r.area, area(p.ImportPath))
		}
		var want []string
		for _, imp := range p.Imports {
			if own(imp) {
				want = append(want, strings.TrimPrefix(imp, module+"/"))
			}
		}
		slices.Sort(want)
		got := slices.Sorted(slices.Values(r.imports))
		if !slices.Equal(got, want) {
			cell := "—"
			if len(want) > 0 {
				cell = "`" + strings.Join(want, "`, `") + "`"
			}
			if *update {
				cells := strings.Split(lines[r.line-1], " | ")
				cells[len(cells)-1] = cell + " |"
				lines[r.line-1] = strings.Join(cells, " | ")
				continue
			}
			t.Errorf("ARCHITECTURE.md:%d: %s imports %v, the row says %v; its imports cell should be: %s", r.line, rel, want, got, cell)
		}
	}
	if *update {
		if err := os.WriteFile(architecturePath, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for pkg, r := range byPkg {
		t.Errorf("ARCHITECTURE.md:%d: %s is not a package of the module", r.line, pkg)
	}
}

func TestParseArchitecture(t *testing.T) {
	rows := parseArchitecture(t, "# x\n\n| `ignored` | before | — |\n\n## Packages\n\n### Product\n\n| package | job | imports |\n|---|---|---|\n"+
		"| `wire` | parse | `internal/diskspace` |\n| `utxo` | coins | `a`, `b` |\n\n### Internal leaves (`internal/`)\n\n| `internal/diskspace` | hash | — |\n\n## Next\n\n| `after` | x | — |\n")
	want := []archRow{
		{11, "product", "wire", []string{"internal/diskspace"}},
		{12, "product", "utxo", []string{"a", "b"}},
		{16, "internal", "internal/diskspace", nil},
	}
	if !slices.EqualFunc(rows, want, func(a, b archRow) bool {
		return a.line == b.line && a.area == b.area && a.pkg == b.pkg && slices.Equal(a.imports, b.imports)
	}) {
		t.Fatalf("got %+v, want %+v", rows, want)
	}
}
