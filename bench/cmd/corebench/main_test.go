package main

import (
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	res = result{}
	for r := 1; r <= 3; r++ {
		add(Sample{WallS: float64(r), CPUS: 0.5, RSSMiB: 40}, "dump", "utxod", r)
		add(Sample{WallS: 2 * float64(r), CPUS: 1}, "dump", "core", r)
		add(Sample{WallS: 10, CPUS: 9, ReqPerS: 1000 * float64(r), CPUPerReq: 30}, "rest", "utxod-getutxos", r)
		add(Sample{WallS: 20, CPUS: 1, SourceCPUS: 0.3}, "follow", "follow", r)
	}
	res.Notes = []string{"a note"}
	md := render()
	for _, want := range []string{
		"| dump | utxod | 3 | 2.000 (1.000–3.000) | 0.50 (0.50–0.50) | 40 |",
		"| dump | core | 3 | 4.000 (2.000–6.000) |",
		"| rest | utxod-getutxos | 3 | 10.000 (10.000–10.000) | 9.00 (9.00–9.00) |  | 2000 (1000–3000) | 30 |",
		"source (bitcoind) CPU 0.30 s",
		"- a note",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("render lacks %q:\n%s", want, md)
		}
	}
}

func TestOrder(t *testing.T) {
	if got := order([]string{"a", "b"}, 1); strings.Join(got, ",") != "b,a" {
		t.Errorf("round 2 of two arms: %v, want b,a (ABBA)", got)
	}
	if got := order([]string{"a", "b", "c"}, 1); strings.Join(got, ",") != "b,c,a" {
		t.Errorf("round 2 of three arms: %v, want b,c,a (rotation)", got)
	}
}
