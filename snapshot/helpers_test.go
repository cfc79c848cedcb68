package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"utxod/backends"
	_ "utxod/backends/all"
	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/store/kvstore"
	"utxod/testkit/blockgen"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

var storeNames = []string{"pebble", "rocksdb", "bbolt"}

// openKV opens store name in dir, skipping the test when the store is not
// part of this build.
func openKV(t testing.TB, name, dir string) backends.KV {
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

// skipUnavailable skips the test when store name is not in this build.
func skipUnavailable(t testing.TB, name string) {
	t.Helper()
	kv := openKV(t, name, t.TempDir())
	kv.Close()
}

// testChain is a chainstate over a store, closed with the test.
type testChain struct {
	cs    *chainstate.Chainstate
	store store.Store
	kv    backends.KV
}

func (c *testChain) close(t testing.TB) {
	t.Helper()
	if err := c.cs.Flush(); err != nil {
		t.Fatal(err)
	}
	c.store.Close()
	if c.kv != nil {
		if err := c.kv.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// openChain opens a chainstate for p over store name in dir ("" for the
// memory store).
func openChain(t testing.TB, p *params.Params, name, dir string) *testChain {
	t.Helper()
	c := &testChain{}
	if name == "" {
		c.store = store.NewMem()
	} else {
		c.kv = openKV(t, name, dir)
		kvs, err := kvstore.Open(c.kv, kvstore.Options{CacheBytes: 8 << 20})
		if err != nil {
			c.kv.Close()
			t.Fatal(err)
		}
		c.store = kvs
	}
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: c.store,
		Now: func() time.Time { return time.Unix(1<<31, 0) }})
	if err != nil {
		if c.kv != nil {
			c.kv.Close()
		}
		t.Fatal(err)
	}
	c.cs = cs
	t.Cleanup(func() {
		c.store.Close()
		if c.kv != nil {
			c.kv.Close()
		}
	})
	return c
}

func connectAll(t testing.TB, cs *chainstate.Chainstate, blocks [][]byte) {
	t.Helper()
	for i, raw := range blocks {
		res, err := cs.ProcessBlock(raw)
		if err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		if res.Status != chainstate.StatusConnected && res.Status != chainstate.StatusDuplicate {
			t.Fatalf("block %d: %s", i, res.Status)
		}
	}
}

// dump writes the chainstate's snapshot into memory.
func dump(t testing.TB, cs *chainstate.Chainstate, p *params.Params) []byte {
	t.Helper()
	snap, err := cs.SnapshotCoins()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var buf bytes.Buffer
	m := Metadata{MessageStart: p.Magic, BaseHash: snap.Stats.BestBlock, Coins: snap.Stats.TxOuts}
	n, err := Dump(&buf, m, snap.Scanner)
	if err != nil {
		t.Fatal(err)
	}
	if n != snap.Stats.TxOuts {
		t.Fatalf("dumped %d coins of %d", n, snap.Stats.TxOuts)
	}
	return buf.Bytes()
}

func info(t testing.TB, cs *chainstate.Chainstate) utxo.ChainstateInfo {
	t.Helper()
	i, err := cs.Info(chainstate.HashTypeHashSerialized3)
	if err != nil {
		t.Fatal(err)
	}
	mu, err := cs.Info(chainstate.HashTypeMuHash)
	if err != nil {
		t.Fatal(err)
	}
	i.MuHash = mu.MuHash
	return i
}

// digestJSON is the gettxoutsetinfo answer without the snapshot fields,
// for comparing a loaded chainstate with the one it was dumped from.
func digestJSON(i utxo.ChainstateInfo) string {
	i.SnapshotBase, i.SnapshotBaseHeight = nil, nil
	b, _ := json.Marshal(i)
	return string(b)
}

// rawHeaders concatenates the 80-byte headers of blocks (Core's REST
// headers .bin form).
func rawHeaders(blocks [][]byte) []byte {
	var out []byte
	for _, b := range blocks {
		out = append(out, b[:wire.HeaderSize]...)
	}
	return out
}

func headerSet(t testing.TB, p *params.Params, files ...[]byte) *HeaderSet {
	t.Helper()
	hs := NewHeaderSet(p)
	for _, f := range files {
		if err := hs.Read(bytes.NewReader(f)); err != nil {
			t.Fatal(err)
		}
	}
	return hs
}

// loadFile runs Load of file into a fresh datadir under dir.
func loadFile(t testing.TB, file []byte, cfg LoadConfig) (*Summary, error) {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Unix(1<<31, 0) }
	}
	return Load(context.Background(), bytes.NewReader(file), cfg)
}

func fileSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// base58Decode decodes a Base58Check string and verifies its checksum
// (for Core's test addresses).
func base58Decode(t testing.TB, s string) []byte {
	t.Helper()
	const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	n := new(big.Int)
	for _, c := range s {
		i := bytes.IndexRune([]byte(alphabet), c)
		if i < 0 {
			t.Fatalf("bad base58 %q", s)
		}
		n.Mul(n, big.NewInt(58)).Add(n, big.NewInt(int64(i)))
	}
	b := n.Bytes()
	for _, c := range s {
		if c != '1' {
			break
		}
		b = append([]byte{0}, b...)
	}
	payload, sum := b[:len(b)-4], b[len(b)-4:]
	h1 := sha256.Sum256(payload)
	h2 := sha256.Sum256(h1[:])
	if !bytes.Equal(h2[:4], sum) {
		t.Fatalf("base58 checksum of %q", s)
	}
	return payload
}

func p2pkh(hash []byte) []byte {
	return append(append([]byte{0x76, 0xa9, 0x14}, hash...), 0x88, 0xac)
}

// writeFile writes b to a temporary file and returns its path.
func writeFile(t testing.TB, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// coreMinerChain builds the chain of Core's test/functional
// rpc_dumptxoutset.py: generate(100) on regtest with mocktime genesis+1,
// paying payTo, as BlockAssembler::CreateNewBlock and generateBlocks build
// it (interop.md): version 0x20000000, nTime max(MTP+1, mocktime), nonce
// from 0, a version-2 coinbase with scriptSig <height> (OP_0 appended up to
// height 16), nSequence 0xfffffffe, nLockTime height−1, the 50 BTC output
// then the witness commitment.
func coreMinerChain(t testing.TB, n int, payTo []byte) [][]byte {
	t.Helper()
	p := params.RegTest()
	c, err := blockgen.NewChain(p)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := wire.ParseHeader(p.GenesisBlock)
	mocktime := int64(g.Time) + 1
	var out [][]byte
	parent := c.Genesis
	for h := 1; h <= n; h++ {
		tpl := c.Template(parent, payTo)
		tpl.SetTime(max(parent.MedianTimePast()+1, mocktime))
		cb := tpl.Coinbase()
		cb.TxIn[0].Sequence = 0xfffffffe
		cb.LockTime = uint32(h - 1)
		blockgen.AddWitnessCommitment(tpl.Block)
		blockgen.UpdateMerkleRoot(tpl.Block)
		if err := blockgen.Solve(&tpl.Block.Header); err != nil {
			t.Fatal(err)
		}
		parent = tpl.Record()
		out = append(out, parent.Raw)
	}
	return out
}

// fuzzTargetChain builds Core's CreateBlockChain(200) (src/test/util/mining.cpp),
// the chain behind regtest's assumeutxo entry at height 200: one coinbase
// per block paying the subsidy to P2WSH(OP_TRUE), scriptSig <height> OP_0,
// nLockTime height−1, nSequence 0xfffffffe, header version 4, nTime
// genesis+height, genesis's nBits, nonce from 0.
func fuzzTargetChain(t testing.TB, n int) [][]byte {
	t.Helper()
	p := params.RegTest()
	c, err := blockgen.NewChain(p)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := wire.ParseHeader(p.GenesisBlock)
	opTrueHash := sha256.Sum256([]byte{0x51})
	p2wsh := append([]byte{0x00, 0x20}, opTrueHash[:]...)
	var out [][]byte
	parent := c.Genesis
	for h := 1; h <= n; h++ {
		tpl := c.Template(parent, p2wsh)
		tpl.Block.Header.Version = 4
		tpl.SetTime(int64(g.Time) + int64(h))
		cb := tpl.Coinbase()
		cb.TxIn[0].SignatureScript = append(blockgen.HeightScript(int64(h)), 0x00)
		cb.TxIn[0].Sequence = 0xfffffffe
		cb.LockTime = uint32(h - 1)
		blockgen.UpdateMerkleRoot(tpl.Block)
		if err := blockgen.Solve(&tpl.Block.Header); err != nil {
			t.Fatal(err)
		}
		parent = tpl.Record()
		out = append(out, parent.Raw)
	}
	return out
}
