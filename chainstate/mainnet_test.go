package chainstate

import (
	"bytes"
	"encoding/json"
	"testing"

	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/testkit/btcdengine"
	"utxod/testkit/testchain"
	"utxod/utxo"
	"utxod/validate"
)

// newChainstate builds a chainstate for p over st with the shipped script
// engine.
func newChainstate(t testing.TB, p *params.Params, st store.Store) *Chainstate {
	cs, err := New(Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func newMainnet(t testing.TB, st store.Store) *Chainstate {
	return newChainstate(t, params.MainNet(), st)
}

func newRegtest(t testing.TB, st store.Store) *Chainstate {
	return newChainstate(t, params.RegTest(), st)
}

var (
	mainnetBlocks = testchain.MainnetBlocks
	infoJSON      = func(t testing.TB, cs *Chainstate) string { return testchain.InfoJSON(t, cs) }
	storeNames    = testchain.StoreNames
	openKV        = testchain.OpenKV
	generated     = testchain.Generated
)

// TestMainnetReference connects mainnet 0–14131 from genesis with full script
// checks and compares every gettxoutsetinfo field at the reference heights.
func TestMainnetReference(t *testing.T) {
	engines := []script.Engine{script.NewEngine(), btcdengine.New()}
	if testing.Short() {
		engines = engines[:1] // make test's -race pass; its full pass runs both
	}
	for _, e := range engines {
		t.Run(e.Name(), func(t *testing.T) { mainnetReference(t, e) })
	}
}

func mainnetReference(t *testing.T, e script.Engine) {
	refs := testchain.References(t)
	p := params.MainNet()
	cs, err := New(Config{Params: p, Validator: validate.New(p, e, nil), Store: store.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	for h, raw := range mainnetBlocks(t) {
		res, err := cs.ProcessBlock(raw)
		if err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		if h > 0 && (res.Status != StatusConnected || res.Height != int32(h)) {
			t.Fatalf("height %d: %+v", h, res)
		}
		if ref, ok := refs[int32(h)]; ok {
			testchain.CheckReference(t, cs, ref)
		}
	}
	if cs.Tip().Height != 14131 {
		t.Fatalf("tip %d", cs.Tip().Height)
	}
	checkScratchMuHash(t, cs)
}

// TestMainnetDisconnectRestores disconnects back and reconnects: after a
// disconnect the stats equal those recorded at that height.
func TestMainnetDisconnectRestores(t *testing.T) {
	blocks := mainnetBlocks(t)[:1200]
	cs := newMainnet(t, store.NewMem())
	var at1000 utxo.ChainstateInfo
	for h, raw := range blocks {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
		if h == 1000 {
			at1000, _ = cs.Info(HashTypeHashSerialized3)
		}
	}
	cs.lock()
	err := cs.disconnectTo(cs.chain.At(1000))
	cs.unlock()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := cs.Info(HashTypeHashSerialized3)
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(at1000)
	if !bytes.Equal(a, b) {
		t.Fatalf("after disconnect:\n%s\nwant\n%s", a, b)
	}
}

// checkScratchMuHash recomputes the MuHash3072 of the coin set from
// scratch (one insert per coin of a snapshot scan) and compares it with the
// incrementally maintained value of the same snapshot.
func checkScratchMuHash(t *testing.T, cs *Chainstate) {
	t.Helper()
	snap, err := cs.SnapshotCoins()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	got, n := testchain.ScratchMuHash(t, snap.Scan)
	info := snap.Stats.Info()
	if got != *info.MuHash || n != info.TxOuts {
		t.Fatalf("from scratch: muhash %s over %d coins; incremental %s over %d", got, n, info.MuHash, info.TxOuts)
	}
}
