package gate

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"a b  c", []string{"a", "b", "c"}},
		{`a 'b c' "d \"e\"" f\ g`, []string{"a", "b c", `d "e"`, "f g"}},
		{`x'y'z ""`, []string{"xyz", ""}},
		{"\t a\n", []string{"a"}},
		{`$HOME * | > ;`, []string{"$HOME", "*", "|", ">", ";"}}, // nothing is interpreted
	} {
		got, err := splitArgs(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`'a`, `"a`, `a\`} {
		if _, err := splitArgs(bad); err == nil {
			t.Errorf("splitArgs(%q): no error", bad)
		}
	}
}

func TestTemplate(t *testing.T) {
	src := "{bin} import --network {network} --datadir {datadir} --backend {backend} --json --label 'arm {arm} #{run}' {{x}} {corpus}"
	tpl, err := ParseTemplate(src)
	if err != nil {
		t.Fatal(err)
	}
	if !tpl.Uses("bin") || tpl.Uses("tmp") {
		t.Error("Uses")
	}
	got, err := tpl.Expand(map[string]string{"bin": "/b/utxod", "network": "main", "datadir": "/t/d d", "backend": "pebble",
		"arm": "control", "run": "2", "corpus": "/c.dat"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/b/utxod", "import", "--network", "main", "--datadir", "/t/d d", "--backend", "pebble", "--json",
		"--label", "arm control #2", "{x}", "/c.dat"}
	if !slices.Equal(got, want) {
		t.Fatalf("Expand = %q\nwant %q", got, want)
	}
	if _, err := tpl.Expand(map[string]string{"bin": "b"}); err == nil {
		t.Error("missing value: no error")
	}
	for bad, msg := range map[string]string{
		"": "empty",
		"{bin} import {datadir} {backend} {corpus} {nope}": "unknown placeholder {nope}",
		"{bin} import {backend} {corpus}":                  "does not use {datadir}",
		"{bin} import {datadir} {corpus}":                  "does not use {backend}",
		"{bin} import {datadir} {backend}":                 "does not use {corpus}",
		"{bin} {datadir {backend} {corpus}":                "unterminated placeholder",
		"{bin} {datadir} {backend} {corpus} }":             "stray",
	} {
		if _, err := ParseTemplate(bad); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseTemplate(%q) = %v, want %q", bad, err, msg)
		}
	}
}

func TestNiceScale(t *testing.T) {
	for _, tc := range []struct{ hi, step, top float64 }{
		{0.43, 0.1, 0.5}, {1.3, 0.5, 1.5}, {9, 2, 10}, {100, 20, 100}, {0, 1, 1},
	} {
		step, top := niceScale(tc.hi)
		if !near(step, tc.step) || !near(top, tc.top) {
			t.Errorf("niceScale(%v) = %v, %v; want %v, %v", tc.hi, step, top, tc.step, tc.top)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
