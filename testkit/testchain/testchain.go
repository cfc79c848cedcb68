// Package testchain holds the fixtures the chainstate and store tests
// share: the bundled mainnet sample and its reference digests, generated
// regtest chains, and the persistent stores of this build. It imports no
// chainstate package, so chainstate's own tests can use it.
package testchain

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"utxod/backends"
	_ "utxod/backends/all"
	"utxod/params"
	"utxod/testkit/chaingen"
	"utxod/utxo"
	"utxod/wire"
)

// StoreNames are the persistent stores every store test runs on (OpenKV
// skips those not in the build).
var StoreNames = []string{"pebble", "rocksdb", "bbolt"}

// testdata is the module's testdata directory, wherever the test runs.
func testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata")
}

var (
	mainnetOnce sync.Once
	mainnetRaw  [][]byte
	mainnetErr  error
)

// MainnetBlocks returns the raw blocks of testdata/mainnet/blk_0_to_14131.dat
// (heights 0-14131 in order). The slices are shared: do not modify them.
func MainnetBlocks(t testing.TB) [][]byte {
	t.Helper()
	mainnetOnce.Do(func() {
		f, err := os.Open(filepath.Join(testdata(), "mainnet", "blk_0_to_14131.dat"))
		if err != nil {
			mainnetErr = err
			return
		}
		defer f.Close()
		mainnetRaw, mainnetErr = wire.ReadAllBlocks(f, params.MainNet().Magic)
	})
	if mainnetErr != nil {
		t.Fatal(mainnetErr)
	}
	return mainnetRaw
}

// Reference is one line of testdata/mainnet/reference-digests.jsonl: Core's
// gettxoutsetinfo at a height, from an independent implementation (origin
// in testdata/README.md).
type Reference struct {
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

// References returns the reference digests by height.
func References(t testing.TB) map[int32]Reference {
	t.Helper()
	f, err := os.Open(filepath.Join(testdata(), "mainnet", "reference-digests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int32]Reference{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r Reference
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out[r.Height] = r
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Infoer is the part of a chainstate the checks read.
type Infoer interface {
	Info(hashType string) (utxo.ChainstateInfo, error)
}

// CheckReference compares every gettxoutsetinfo field of c with ref.
func CheckReference(t testing.TB, c Infoer, ref Reference) {
	t.Helper()
	info, err := c.Info("hash_serialized_3")
	if err != nil {
		t.Fatal(err)
	}
	mu, err := c.Info("muhash")
	if err != nil {
		t.Fatal(err)
	}
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

// InfoJSON is c's gettxoutsetinfo with hash_serialized_3, as JSON.
func InfoJSON(t testing.TB, c Infoer) string {
	t.Helper()
	info, err := c.Info("hash_serialized_3")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(info)
	return string(b)
}

// Generated builds a deterministic regtest chain (seed 42, at most 40
// transactions a block) with reorg branches, in file order.
func Generated(t testing.TB, profile string, blocks, reorgs int) [][]byte {
	t.Helper()
	data, _, err := chaingen.Generate(chaingen.Config{Profile: profile, Seed: 42, Blocks: blocks, Reorgs: reorgs, MaxTxs: 40})
	if err != nil {
		t.Fatal(err)
	}
	raws, err := wire.ReadAllBlocks(bytes.NewReader(data), params.RegTest().Magic)
	if err != nil {
		t.Fatal(err)
	}
	return raws
}

// OpenKV opens store name in dir, skipping the test when the store is not
// part of this build.
func OpenKV(t testing.TB, name, dir string) backends.KV {
	t.Helper()
	kv, err := backends.Open(name, dir, backends.Options{})
	if errors.Is(err, backends.ErrUnavailable) || errors.Is(err, backends.ErrUnknownBackend) {
		t.Skipf("store %s not in this build: %v", name, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// ScratchMuHash recomputes the MuHash3072 of the coins scan yields from
// scratch (one insert per coin) and counts them.
func ScratchMuHash(t testing.TB, scan func(fn func(utxo.Entry) error) error) (wire.Hash, uint64) {
	t.Helper()
	var m utxo.MuHash3072
	var n uint64
	if err := scan(func(e utxo.Entry) error {
		m.InsertCoin(e.Outpoint, e.Coin)
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return m.Finalize(), n
}

// MustHash parses a display-order hash.
func MustHash(t testing.TB, s string) wire.Hash {
	t.Helper()
	h, err := wire.ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
