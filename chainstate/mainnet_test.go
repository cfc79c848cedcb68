package chainstate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"utxod/params"
	"utxod/script"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// reference is one line of testdata/mainnet/reference-digests.jsonl: Core's
// gettxoutsetinfo at a height, from an independent implementation (origin
// in testdata/README.md).
type reference struct {
	Height          int32       `json:"height"`
	BestBlock       string      `json:"bestblock"`
	TxOuts          uint64      `json:"txouts"`
	Transactions    uint64      `json:"transactions"`
	BogoSize        uint64      `json:"bogosize"`
	TotalAmount     json.Number `json:"total_amount"`
	TotalAmountSat  int64       `json:"total_amount_sat"`
	HashSerialized3 string      `json:"hash_serialized_3"`
	MuHash          string      `json:"muhash"`
}

func loadReferences(t testing.TB) map[int32]reference {
	f, err := os.Open("../testdata/mainnet/reference-digests.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int32]reference{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r reference
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out[r.Height] = r
	}
	return out
}

// mainnetBlocks returns the raw blocks of testdata/mainnet/blk_0_to_14131.dat.
func mainnetBlocks(t testing.TB) [][]byte {
	f, err := os.Open("../testdata/mainnet/blk_0_to_14131.dat")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	blocks, err := wire.ReadAllBlocks(f, params.MainNet().Magic)
	if err != nil {
		t.Fatal(err)
	}
	return blocks
}

// newChainstate builds a chainstate for p over store with the shipped
// script engine.
func newChainstate(t testing.TB, p *params.Params, store Store) *Chainstate {
	cs, err := New(Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: store})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func newMainnet(t testing.TB, store Store) *Chainstate {
	return newChainstate(t, params.MainNet(), store)
}

func checkReference(t *testing.T, cs *Chainstate, ref reference) {
	t.Helper()
	info, err := cs.Info(HashTypeHashSerialized3)
	if err != nil {
		t.Fatal(err)
	}
	mu, _ := cs.Info(HashTypeMuHash)
	if int32(info.Height) != ref.Height || info.BestBlock.String() != ref.BestBlock {
		t.Fatalf("height %d: tip %d %s, want %s", ref.Height, info.Height, info.BestBlock, ref.BestBlock)
	}
	if info.TxOuts != ref.TxOuts || info.Transactions != ref.Transactions || info.BogoSize != ref.BogoSize || info.TotalAmountSat != ref.TotalAmountSat {
		t.Fatalf("height %d: txouts %d tx %d bogo %d total %d, want %d %d %d %d", ref.Height,
			info.TxOuts, info.Transactions, info.BogoSize, info.TotalAmountSat, ref.TxOuts, ref.Transactions, ref.BogoSize, ref.TotalAmountSat)
	}
	if info.TotalAmount.String() != ref.TotalAmount.String() {
		t.Fatalf("height %d: total_amount %s, want %s", ref.Height, info.TotalAmount, ref.TotalAmount)
	}
	if got := info.HashSerialized3.String(); got != ref.HashSerialized3 {
		t.Fatalf("height %d: hash_serialized_3 %s, want %s", ref.Height, got, ref.HashSerialized3)
	}
	if got := mu.MuHash.String(); got != ref.MuHash {
		t.Fatalf("height %d: muhash %s, want %s", ref.Height, got, ref.MuHash)
	}
}

// TestMainnetReference connects mainnet 0–14131 from genesis with full script
// checks and compares every gettxoutsetinfo field at the reference heights.
func TestMainnetReference(t *testing.T) {
	for _, e := range []script.Engine{script.NewEngine(), script.NewBtcdEngine()} {
		t.Run(e.Name(), func(t *testing.T) { mainnetReference(t, e) })
	}
}

func mainnetReference(t *testing.T, e script.Engine) {
	refs := loadReferences(t)
	p := params.MainNet()
	cs, err := New(Config{Params: p, Validator: validate.New(p, e, nil), Store: NewMemStore()})
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
			checkReference(t, cs, ref)
		}
	}
	if cs.Tip().Height != 14131 {
		t.Fatalf("tip %d", cs.Tip().Height)
	}
	checkScratchMuHash(t, cs)
}

// TestMainnetReorgRestores disconnects back and reconnects: after a
// disconnect the stats equal those recorded at that height.
func TestMainnetDisconnectRestores(t *testing.T) {
	blocks := mainnetBlocks(t)[:1200]
	cs := newMainnet(t, NewMemStore())
	var at1000 utxo.ChainstateInfo
	for h, raw := range blocks {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
		if h == 1000 {
			at1000, _ = cs.Info(HashTypeHashSerialized3)
		}
	}
	cs.mu.Lock()
	err := cs.disconnectTo(cs.chain.At(1000))
	cs.mu.Unlock()
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

func mustTxid(t testing.TB, s string) wire.Hash {
	h, err := wire.ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// scratchMuHash recomputes the MuHash3072 of the stored coin set from
// scratch (one insert per coin of a snapshot scan) and compares it with the
// incrementally maintained value Info reports.
func checkScratchMuHash(t *testing.T, cs *Chainstate) {
	t.Helper()
	cs.mu.Lock()
	st := cs.statsLocked()
	snap, err := cs.store.Snapshot(cs.index.TakeDirty(), &st)
	cs.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var m utxo.MuHash3072
	n := 0
	if err := snap.Scan(func(e utxo.Entry) error {
		m.InsertCoin(e.Outpoint, e.Coin)
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	info, err := cs.Info(HashTypeMuHash)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Finalize(); got != *info.MuHash || uint64(n) != info.TxOuts {
		t.Fatalf("from scratch: muhash %s over %d coins; incremental %s over %d", got, n, info.MuHash, info.TxOuts)
	}
}
