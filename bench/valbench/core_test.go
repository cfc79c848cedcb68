package valbench

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestCoreArm(t *testing.T) {
	c := Config{Corpus: "/c/chain.dat", Network: "regtest", NoBtcd: true, Stores: []string{"pebble"}, UtxodBin: "u",
		Bitcoind: "/b/bitcoind", UtxodArgs: []string{"--cache-mb", "100"}}
	arms := c.Arms()
	if len(arms) != 2 || arms[1].Kind != KindCore {
		t.Fatalf("arms %+v", arms)
	}
	argv := arms[1].Argv
	for _, want := range []string{"/b/bitcoind", "-datadir={datadir}", "-loadblock=/c/chain.dat", "-assumevalid=0", "-dbcache=100",
		"-stopatheight={tip_height}", "-checkblockindex=0", "-checkmempool=0", "-regtest"} {
		if !slices.Contains(argv, want) {
			t.Errorf("core argv %v lacks %s", argv, want)
		}
	}
	c.UtxodArgs, c.CoreAssumeValid = nil, "00ff"
	argv = c.Arms()[1].Argv
	if !slices.Contains(argv, "-dbcache=450") || !slices.Contains(argv, "-assumevalid=00ff") {
		t.Errorf("core argv %v", argv)
	}
}

func TestReadCorePhases(t *testing.T) {
	log := `2026-12-07T00:40:00.000000Z Bitcoin Core version v31.99.0
2026-12-07T00:40:00.500000Z init message: Done loading
2026-12-07T00:40:03.000000Z Loaded 916 blocks from external file in 2500ms
2026-12-07T00:40:03.100000Z Disabling script verification at block #1 (ab).
2026-12-07T00:40:09.000000Z UpdateTip: new best=ab height=916
2026-12-07T00:40:10.250000Z Shutdown done
`
	p := filepath.Join(t.TempDir(), "debug.log")
	if err := os.WriteFile(p, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	ph, err := readCorePhases(p)
	if err != nil {
		t.Fatal(err)
	}
	if ph.ReadyS != 0.5 || ph.LoadedS != 3 || ph.LastTipS != 9 || ph.ShutdownS != 10.25 || !ph.AssumeValidSkipped {
		t.Errorf("phases %+v", *ph)
	}
}
