package api

import (
	"fmt"
	"strings"
	"testing"

	"utxod/backends"
	"utxod/params"
)

// TestDiskFullIs503 checks how a store failure caused by a full disk is
// rendered: 503 problem+json, reason disk-full, a detail naming ENOSPC and no
// path of the data directory.
func TestDiskFullIs503(t *testing.T) {
	cs := newChainstate(t, params.MainNet())
	fail := fmt.Errorf("chainstate: flush: pebble: commit: %w: write /secret/datadir/000004.log: no space left on device", backends.ErrDiskFull)
	s := newServer(t, panicChain{Chain: cs, fail: fail}, params.MainNet())
	for _, tc := range []struct {
		method, target string
		body           []byte
	}{
		{"POST", "/v1/blocks", mainnetBlocks(t)[1]},
		{"GET", "/v1/chainstate?hash_type=hash_serialized_3", nil},
	} {
		rec := do(t, s, tc.method, tc.target, tc.body, "Authorization", "Bearer "+testToken)
		if rec.Code != 503 {
			t.Fatalf("%s %s: %d %s", tc.method, tc.target, rec.Code, rec.Body)
		}
		p := problemOf(t, rec)
		if p.Reason != "disk-full" || !strings.Contains(p.Detail, "ENOSPC") || !strings.Contains(p.Detail, "disk is full") {
			t.Fatalf("%s %s: %s", tc.method, tc.target, rec.Body)
		}
		if strings.Contains(rec.Body.String(), "/secret") {
			t.Fatalf("%s %s leaks a path: %s", tc.method, tc.target, rec.Body)
		}
	}
}
