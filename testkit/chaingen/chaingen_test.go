package chaingen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil/v2"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/database"
	_ "github.com/btcsuite/btcd/database/ffldb"
	"github.com/btcsuite/btcd/txscript/v2"
	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/testkit/btcdengine"
	"utxod/validate"
	"utxod/wire"
)

// The chains the tests share (generated once per test binary).
type genResult struct {
	data []byte
	sum  *Summary
}

var (
	genMu    sync.Mutex
	genCache = map[string]*genResult{}
)

func generate(t testing.TB, cfg Config) *genResult {
	t.Helper()
	key := fmt.Sprintf("%+v", cfg)
	genMu.Lock()
	defer genMu.Unlock()
	if r, ok := genCache[key]; ok {
		return r
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	s, err := g.Run(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if s.Bytes != int64(buf.Len()) {
		t.Fatalf("summary says %d bytes, wrote %d", s.Bytes, buf.Len())
	}
	r := &genResult{data: buf.Bytes(), sum: s}
	genCache[key] = r
	return r
}

// Test configurations: a few hundred blocks, at most 30 transactions a block
// so that btcd and utxod validate each chain in a few seconds.
var (
	earlyCfg  = Config{Profile: ProfileEarly, Seed: 11, Blocks: 260, MaxTxs: 30, Ramp: 150}
	modernCfg = Config{Profile: ProfileModern, Seed: 12, Blocks: 250, MaxTxs: 25}
	reorgCfg  = Config{Profile: ProfileModern, Seed: 13, Blocks: 220, MaxTxs: 20, Reorgs: 4}
)

// readBlocks splits a generated file into raw blocks.
func readBlocks(t testing.TB, data []byte) [][]byte {
	t.Helper()
	r := wire.NewBlockFileReader(bytes.NewReader(data), params.RegTest().Magic)
	var out [][]byte
	for {
		raw, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Clone(raw))
	}
}

func blockHash(raw []byte) wire.Hash { return wire.DoubleSHA256(raw[:wire.HeaderSize]) }

// newBtcd returns a btcd chain over a fresh ffldb database in a temp dir
// with chaincfg.RegressionNetParams (see doc.go for how they compare with
// Core's regtest).
func newBtcd(t testing.TB) *blockchain.BlockChain {
	t.Helper()
	db, err := database.Create("ffldb", filepath.Join(t.TempDir(), "ffldb"), btcwire.TestNet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p := chaincfg.RegressionNetParams
	chain, err := blockchain.New(&blockchain.Config{
		DB:          db,
		ChainParams: &p,
		TimeSource:  blockchain.NewMedianTime(),
		SigCache:    txscript.NewSigCache(10000),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := wire.Hash(*p.GenesisHash); got != params.RegTest().GenesisHash {
		t.Fatalf("btcd regtest genesis %s, Core's %s", got, params.RegTest().GenesisHash)
	}
	return chain
}

func newUtxod(t testing.TB) *chainstate.Chainstate {
	t.Helper()
	p := params.RegTest()
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, btcdengine.New(), nil), Store: store.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// btcdAccepts runs every block through btcd's full validation and returns
// btcd's best tip.
func btcdAccepts(t *testing.T, blocks [][]byte) wire.Hash {
	chain := newBtcd(t)
	for i, raw := range blocks {
		b, err := btcutil.NewBlockFromBytes(raw)
		if err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		_, orphan, err := chain.ProcessBlock(b, blockchain.BFNone)
		if err != nil {
			t.Fatalf("btcd rejects block %d (%s): %v", i, b.Hash(), err)
		}
		if orphan {
			t.Fatalf("btcd: block %d (%s) is an orphan", i, b.Hash())
		}
	}
	return wire.Hash(chain.BestSnapshot().Hash)
}

// utxodAccepts runs every block through utxod's chainstate and returns it
// and the number of blocks per status.
func utxodAccepts(t *testing.T, blocks [][]byte) (*chainstate.Chainstate, map[chainstate.Status]int) {
	cs := newUtxod(t)
	statuses := map[chainstate.Status]int{}
	for i, raw := range blocks {
		res, err := cs.ProcessBlock(raw)
		if err != nil {
			t.Fatalf("utxod rejects block %d (%s): %s: %v", i, blockHash(raw), validate.Reason(err), err)
		}
		statuses[res.Status]++
	}
	return cs, statuses
}

func checkSummary(t *testing.T, cs *chainstate.Chainstate, s *Summary) {
	t.Helper()
	tip := cs.Tip()
	if tip.Hash != s.Tip || tip.Height != s.Height {
		t.Fatalf("utxod tip %d %s, generator %d %s", tip.Height, tip.Hash, s.Height, s.Tip)
	}
	info, err := cs.Info("muhash")
	if err != nil {
		t.Fatal(err)
	}
	if int64(info.TxOuts) != s.UTXOs || info.TotalAmountSat != s.TotalAmount {
		t.Fatalf("utxod: %d txouts, %d sat; generator: %d, %d", info.TxOuts, info.TotalAmountSat, s.UTXOs, s.TotalAmount)
	}
}

// Test 1: both profiles are accepted block by block by btcd (full
// validation) and by utxod; every block connects and the tips agree.
func TestProfilesAccepted(t *testing.T) {
	for _, cfg := range []Config{earlyCfg, modernCfg} {
		t.Run(cfg.Profile, func(t *testing.T) {
			r := generate(t, cfg)
			blocks := readBlocks(t, r.data)
			if int64(len(blocks)) != r.sum.Blocks || len(blocks) != cfg.Blocks {
				t.Fatalf("%d blocks in the file, summary %d, config %d", len(blocks), r.sum.Blocks, cfg.Blocks)
			}
			t.Logf("%d blocks, %d txs, %d inputs, %d utxos, %d bytes", r.sum.Blocks, r.sum.Txs, r.sum.Inputs, r.sum.UTXOs, r.sum.Bytes)
			if r.sum.Inputs < 2000 {
				t.Fatalf("only %d inputs", r.sum.Inputs)
			}
			if tip := btcdAccepts(t, blocks); tip != r.sum.Tip {
				t.Fatalf("btcd tip %s, generator %s", tip, r.sum.Tip)
			}
			cs, st := utxodAccepts(t, blocks)
			if st[chainstate.StatusConnected] != len(blocks) {
				t.Fatalf("utxod statuses %v, want all %d connected", st, len(blocks))
			}
			checkSummary(t, cs, r.sum)
		})
	}
}

// bestChain filters blocks to the chain ending at tip, in order.
func bestChain(t *testing.T, blocks [][]byte, tip wire.Hash) [][]byte {
	byHash := map[wire.Hash][]byte{}
	for _, raw := range blocks {
		byHash[blockHash(raw)] = raw
	}
	var rev [][]byte
	g := params.RegTest().GenesisHash
	for h := tip; h != g; {
		raw, ok := byHash[h]
		if !ok {
			t.Fatalf("block %s of the best chain is not in the file", h)
		}
		rev = append(rev, raw)
		copy(h[:], raw[4:36])
	}
	out := make([][]byte, len(rev))
	for i := range rev {
		out[i] = rev[len(rev)-1-i]
	}
	return out
}

// Test 2: with reorg events, utxod (and btcd) end on the generator's tip
// and hash_serialized_3 equals a clean replay of the winning chain alone.
func TestReorgs(t *testing.T) {
	r := generate(t, reorgCfg)
	s := r.sum
	blocks := readBlocks(t, r.data)
	if s.StaleBlocks == 0 || int64(len(blocks)) != int64(s.Height)+s.StaleBlocks {
		t.Fatalf("%d blocks, height %d, %d stale", len(blocks), s.Height, s.StaleBlocks)
	}
	if tip := btcdAccepts(t, blocks); tip != s.Tip {
		t.Fatalf("btcd tip %s, generator %s", tip, s.Tip)
	}
	cs, st := utxodAccepts(t, blocks)
	// Each event leaves the branch's equal-work blocks (or the original
	// chain's blocks after the branch overtook it) on a side branch.
	if st[chainstate.StatusSideBranch] < s.Reorgs {
		t.Fatalf("statuses %v: fewer side-branch blocks than %d reorgs", st, s.Reorgs)
	}
	checkSummary(t, cs, s)
	full, err := cs.Info("hash_serialized_3")
	if err != nil {
		t.Fatal(err)
	}
	best := bestChain(t, blocks, s.Tip)
	if len(best) != int(s.Height) {
		t.Fatalf("best chain has %d blocks, height %d", len(best), s.Height)
	}
	replay, st2 := utxodAccepts(t, best)
	if st2[chainstate.StatusConnected] != len(best) {
		t.Fatalf("replay statuses %v", st2)
	}
	clean, err := replay.Info("hash_serialized_3")
	if err != nil {
		t.Fatal(err)
	}
	if *full.HashSerialized3 != *clean.HashSerialized3 || *full.MuHash != *clean.MuHash || full.TxOuts != clean.TxOuts {
		t.Fatalf("after reorgs: %s %s %d; clean replay: %s %s %d", full.HashSerialized3, full.MuHash, full.TxOuts,
			clean.HashSerialized3, clean.MuHash, clean.TxOuts)
	}
	t.Logf("%d blocks (%d stale, %d reorgs), tip %s, hash_serialized_3 %s", len(blocks), s.StaleBlocks, s.Reorgs, s.Tip, full.HashSerialized3)
}

// Test 3: the same configuration gives byte-identical files, whatever the
// number of signing workers; another seed gives another chain.
func TestDeterministic(t *testing.T) {
	run := func(cfg Config) []byte {
		g, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := g.Run(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for _, base := range []Config{
		{Profile: ProfileEarly, Seed: 5, Blocks: 180, MaxTxs: 25, Ramp: 100},
		{Profile: ProfileModern, Seed: 5, Blocks: 150, MaxTxs: 15, Reorgs: 2},
	} {
		a := base
		a.Workers = 1
		b := base
		b.Workers = 4
		c := base
		c.Seed = 6
		da, db, dc := run(a), run(b), run(c)
		if !bytes.Equal(da, db) {
			t.Errorf("%s: same seed, different bytes (%d vs %d)", base.Profile, len(da), len(db))
		}
		if bytes.Equal(da, dc) {
			t.Errorf("%s: seeds 5 and 6 give the same file", base.Profile)
		}
		// The chains differ from the first block (keys derive from the seed).
		ba, bc := readBlocks(t, da), readBlocks(t, dc)
		if blockHash(ba[0]) == blockHash(bc[0]) {
			t.Errorf("%s: seeds 5 and 6 share block 1", base.Profile)
		}
	}
}

// spendKinds classifies, independently of the generator, what a chain
// exercises: each input by the script it spends and its witness, lock
// times and sequences, and the shape of each transaction.
func spendKinds(t *testing.T, blocks [][]byte) map[string]int {
	type prev struct {
		script   []byte
		coinbase bool
		block    int
	}
	utxos := map[btcwire.OutPoint]prev{}
	got := map[string]int{}
	for bi, raw := range blocks {
		var b btcwire.MsgBlock
		if err := b.Deserialize(bytes.NewReader(raw)); err != nil {
			t.Fatal(err)
		}
		for ti, tx := range b.Transactions {
			if ti > 0 {
				if len(tx.TxIn) >= 10 && len(tx.TxOut) == 1 {
					got["consolidation"]++
				}
				if len(tx.TxIn) == 1 && len(tx.TxOut) >= 10 {
					got["fan-out"]++
				}
				nonFinal := false
				for i, in := range tx.TxIn {
					p, ok := utxos[in.PreviousOutPoint]
					if !ok {
						t.Fatalf("block %d tx %d input %d spends an unknown output", bi, ti, i)
					}
					delete(utxos, in.PreviousOutPoint)
					if in.Sequence != 0xffffffff {
						nonFinal = true
					}
					if p.coinbase {
						got["coinbase"]++
					}
					if p.block == bi {
						got["same-block"]++
					}
					if tx.Version >= 2 && in.Sequence&seqDisableFlag == 0 {
						if in.Sequence&seqTypeFlag != 0 {
							got["nsequence-time"]++
						} else {
							got["nsequence-height"]++
						}
					}
					s, w := p.script, in.Witness
					switch {
					case len(s) == 25 && s[0] == txscript.OP_DUP:
						got["p2pkh"]++
					case (len(s) == 35 || len(s) == 67) && s[len(s)-1] == txscript.OP_CHECKSIG:
						got["p2pk"]++
					case len(s) == 22 && s[0] == 0 && len(w) == 2:
						got["p2wpkh"]++
					case len(s) == 23 && s[0] == txscript.OP_HASH160 && len(w) == 2 && bytes.HasPrefix(in.SignatureScript, []byte{22, 0, 20}):
						got["p2sh-p2wpkh"]++
					case len(s) == 34 && s[0] == 0 && len(w) >= 2:
						ws := w[len(w)-1]
						switch {
						case ws[len(ws)-1] == txscript.OP_CHECKMULTISIG && len(w) == 4:
							got["p2wsh-multisig"]++
						case bytes.Contains(ws, []byte{txscript.OP_CHECKLOCKTIMEVERIFY, txscript.OP_DROP}):
							if tx.LockTime >= locktimeThreshold {
								got["cltv-time"]++
							} else {
								got["cltv-height"]++
							}
						case bytes.Contains(ws, []byte{txscript.OP_CHECKSEQUENCEVERIFY, txscript.OP_DROP}):
							if in.Sequence&seqTypeFlag != 0 {
								got["csv-time"]++
							} else {
								got["csv-height"]++
							}
						default:
							got["p2wsh-other"]++
						}
					case len(s) == 34 && s[0] == txscript.OP_1 && len(w) == 1:
						got["p2tr-key"]++
					case len(s) == 34 && s[0] == txscript.OP_1 && len(w) == 3:
						got["p2tr-script"]++
					default:
						got["other"]++
					}
				}
				if tx.LockTime != 0 && nonFinal {
					if tx.LockTime >= locktimeThreshold {
						got["locktime-time"]++
					} else {
						got["locktime-height"]++
					}
				}
			}
			h := tx.TxHash()
			for vout, o := range tx.TxOut {
				if len(o.PkScript) > 0 && o.PkScript[0] == txscript.OP_RETURN {
					if ti > 0 {
						got["op-return"]++
					}
					continue
				}
				utxos[btcwire.OutPoint{Hash: chainhash.Hash(h), Index: uint32(vout)}] = prev{o.PkScript, ti == 0, bi}
			}
		}
	}
	return got
}

// Test 4: the modern chain contains at least one spend of every kind the
// profile promises, the early chain only P2PK/P2PKH spends.
func TestCoverage(t *testing.T) {
	modern := spendKinds(t, readBlocks(t, generate(t, modernCfg).data))
	t.Logf("modern: %v", modern)
	for _, k := range []string{"p2wpkh", "p2sh-p2wpkh", "p2wsh-multisig", "p2tr-key", "p2tr-script", "p2pkh",
		"op-return", "consolidation", "fan-out", "cltv-height", "cltv-time", "csv-height", "csv-time",
		"nsequence-height", "nsequence-time", "locktime-height", "locktime-time", "same-block", "coinbase"} {
		if modern[k] == 0 {
			t.Errorf("modern: no %s", k)
		}
	}
	if modern["other"] != 0 || modern["p2wsh-other"] != 0 {
		t.Errorf("modern: unclassified spends %v", modern)
	}
	early := spendKinds(t, readBlocks(t, generate(t, earlyCfg).data))
	t.Logf("early: %v", early)
	for _, k := range []string{"p2pk", "p2pkh", "coinbase"} {
		if early[k] == 0 {
			t.Errorf("early: no %s", k)
		}
	}
	for k, n := range early {
		switch k {
		case "p2pk", "p2pkh", "coinbase":
		default:
			t.Errorf("early: %d unexpected %s", n, k)
		}
	}
}

// TestBury: Bury appends coinbase-only blocks to the very chain the same
// config makes without it, and the result validates.
func TestBury(t *testing.T) {
	cfg := Config{Profile: ProfileEarly, Seed: 3, TargetInputs: 300, MaxTxs: 20}
	plain, ps, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Bury = 25
	buried, bs, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buried, plain) {
		t.Fatal("the buried chain does not start with the plain one")
	}
	if bs.Height != ps.Height+25 || bs.Inputs != ps.Inputs || bs.Txs != ps.Txs+25 {
		t.Fatalf("buried %+v, plain %+v", bs, ps)
	}
	blocks := readBlocks(t, buried)
	for _, raw := range blocks[len(blocks)-25:] {
		b, err := wire.ParseBlock(raw)
		if err != nil || len(b.Txs) != 1 {
			t.Fatalf("burial block: %d txs, %v", len(b.Txs), err)
		}
	}
	p := params.RegTest()
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: store.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range blocks {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
	}
	if cs.Tip().Hash != bs.Tip {
		t.Fatal("tip differs")
	}
	if _, err := New(Config{Profile: ProfileEarly, Blocks: 5, Bury: -1}); err == nil {
		t.Fatal("negative burial accepted")
	}
}
