package btcdreplay

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/blockchain"
	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/testkit/blockgen"
	"utxod/testkit/chaingen"
	"utxod/validate"
	"utxod/wire"
)

// A small early-profile corpus (≈ 2,000 signed inputs), generated once per
// test binary.
var (
	corpusOnce sync.Once
	corpusData []byte
	corpusSum  *chaingen.Summary
	corpusErr  error
)

func corpus(t *testing.T) ([]byte, *chaingen.Summary) {
	t.Helper()
	corpusOnce.Do(func() {
		corpusData, corpusSum, corpusErr = chaingen.Generate(chaingen.Config{Profile: chaingen.ProfileEarly, Seed: 7, TargetInputs: 2000})
	})
	if corpusErr != nil {
		t.Fatal(corpusErr)
	}
	return corpusData, corpusSum
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// utxodImport feeds a block file to utxod's chainstate exactly as `utxod
// import` does without --datadir (the same chainstate, validator and
// default script engine, in memory) and returns the tip.
func utxodImport(t *testing.T, path string) (wire.Hash, int32, error) {
	t.Helper()
	p := params.RegTest()
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil),
		Store: store.NewMem(), MaxOrphanBytes: 2048 << 20})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := wire.NewBlockFileReader(f, p.Magic)
	for {
		raw, _, err := r.Next()
		if err != nil {
			break
		}
		if _, err := cs.ProcessBlock(raw); err != nil {
			tip := cs.Tip()
			return tip.Hash, tip.Height, err
		}
	}
	tip := cs.Tip()
	return tip.Hash, tip.Height, nil
}

// btcd, with full validation, reaches the same tip as utxod's import and
// the generator on the same corpus, and counts the generator's blocks,
// transactions and inputs.
func TestSameTipAsUtxodImport(t *testing.T) {
	data, sum := corpus(t)
	path := writeFile(t, "early.dat", data)
	s, err := Run(context.Background(), Config{Network: "regtest"}, []string{path})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("btcd %s: %d blocks, %d txs, %d inputs, height %d, %.2f s", s.BtcdVersion, s.Blocks, s.Txs, s.Inputs, s.Height, s.WallSeconds)
	if sum.Inputs < 2000 {
		t.Fatalf("generator made only %d inputs", sum.Inputs)
	}
	uTip, uHeight, err := utxodImport(t, path)
	if err != nil {
		t.Fatalf("utxod import: %v", err)
	}
	if s.Tip != uTip || s.Height != uHeight {
		t.Fatalf("btcd tip %d %s, utxod import %d %s", s.Height, s.Tip, uHeight, uTip)
	}
	if s.Tip != sum.Tip || s.Height != sum.Height {
		t.Fatalf("btcd tip %d %s, generator %d %s", s.Height, s.Tip, sum.Height, sum.Tip)
	}
	if s.Blocks != sum.Blocks || s.Txs != sum.Txs || s.Inputs != sum.Inputs || s.Orphans != 0 || s.Duplicates != 0 {
		t.Fatalf("btcd counted %+v; generator %d blocks, %d txs, %d inputs", s, sum.Blocks, sum.Txs, sum.Inputs)
	}
	if s.Flags != "BFNone" || s.Checkpoints != 0 || s.SigCacheEntries != DefaultSigCacheEntries ||
		s.HashCacheEntries != DefaultSigCacheEntries || s.UtxoCacheMiB != DefaultUtxoCacheMiB {
		t.Fatalf("configuration %+v is not btcd's node default", s)
	}
	if s.BtcdVersion == "" {
		t.Fatal("no btcd version")
	}
}

// badSignatureCorpus returns the corpus with one signature byte of the
// last block's first spending transaction flipped; the merkle root and
// proof of work are redone, so only script validation can catch it.
func badSignatureCorpus(t *testing.T) (data []byte, bad wire.Hash) {
	t.Helper()
	good, _ := corpus(t)
	blocks, err := wire.ReadAllBlocks(bytes.NewReader(good), params.RegTest().Magic)
	if err != nil {
		t.Fatal(err)
	}
	last := len(blocks) - 1
	var b btcwire.MsgBlock
	if err := b.Deserialize(bytes.NewReader(blocks[last])); err != nil {
		t.Fatal(err)
	}
	if len(b.Transactions) < 2 {
		t.Fatalf("last block has %d transactions", len(b.Transactions))
	}
	ss := b.Transactions[1].TxIn[0].SignatureScript
	// scriptSig = <push sig> ...; byte 10 lies inside the DER R value, so
	// the signature stays strict DER but no longer verifies.
	if len(ss) < 20 || ss[1] != 0x30 {
		t.Fatalf("unexpected scriptSig %x", ss)
	}
	ss[10] ^= 0x01
	blockgen.UpdateMerkleRoot(&b)
	if err := blockgen.Solve(&b.Header); err != nil {
		t.Fatal(err)
	}
	blocks[last] = blockgen.Serialize(&b)
	var out bytes.Buffer
	magic := params.RegTest().Magic
	for _, raw := range blocks {
		out.Write(magic[:])
		out.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(raw))))
		out.Write(raw)
	}
	return out.Bytes(), blockgen.BlockHash(&b)
}

// A block whose only defect is a bad signature stops the replay with a
// RejectError naming it and btcd's script-validation rule error; utxod's
// import rejects the same block.
func TestRejectsBadSignature(t *testing.T) {
	data, bad := badSignatureCorpus(t)
	path := writeFile(t, "bad.dat", data)
	dir := t.TempDir()
	s, err := Run(context.Background(), Config{Network: "regtest", DataDir: dir}, []string{path})
	var re *RejectError
	if !errors.As(err, &re) {
		t.Fatalf("want a RejectError, got %v", err)
	}
	if re.Hash != bad || re.File != path {
		t.Fatalf("rejected %s in %s, want %s in %s", re.Hash, re.File, bad, path)
	}
	var rule blockchain.RuleError
	if !errors.As(err, &rule) || rule.ErrorCode != blockchain.ErrScriptValidation {
		t.Fatalf("btcd error %v, want ErrScriptValidation", re.Err)
	}
	if re.Height != s.Height+1 {
		t.Fatalf("rejected at height %d, tip %d", re.Height, s.Height)
	}
	t.Logf("%v", err)
	if _, _, err := utxodImport(t, path); err == nil {
		t.Fatal("utxod accepted the block btcd rejected")
	}
	// The given datadir stays (only a temporary one is removed), and a
	// replay refuses to start over an existing database.
	if _, err := os.Stat(filepath.Join(dir, dbDirName)); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), Config{Network: "regtest", DataDir: dir}, []string{path}); err == nil {
		t.Fatal("replay over an existing database")
	}
}

func TestChainParams(t *testing.T) {
	for _, n := range []string{"main", "testnet3", "testnet4", "signet", "regtest"} {
		bp, up, err := ChainParams(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if len(bp.Checkpoints) != 0 {
			t.Fatalf("%s: %d checkpoints", n, len(bp.Checkpoints))
		}
		if up.Name == "" {
			t.Fatalf("%s: no utxod params", n)
		}
	}
	if _, _, err := ChainParams("simnet"); err == nil {
		t.Fatal("simnet accepted")
	}
}

// With a checkpoint at the block whose only defect is a bad signature,
// btcd skips its scripts and accepts it (btcd's assume-valid equivalent);
// a checkpoint one block lower verifies it and refuses it; a checkpoint
// whose hash is not the chain's block at its height refuses that block.
func TestCheckpoint(t *testing.T) {
	data, bad := badSignatureCorpus(t)
	_, sum := corpus(t)
	path := writeFile(t, "bad.dat", data)
	blocks, err := wire.ReadAllBlocks(bytes.NewReader(data), params.RegTest().Magic)
	if err != nil {
		t.Fatal(err)
	}
	parent := wire.DoubleSHA256(blocks[len(blocks)-2][:wire.HeaderSize])

	s, err := Run(context.Background(), Config{Network: "regtest", Checkpoint: &Checkpoint{Height: sum.Height, Hash: bad}}, []string{path})
	if err != nil {
		t.Fatalf("checkpoint at the bad block: %v", err)
	}
	if s.Tip != bad || s.Height != sum.Height || s.Checkpoints != 1 || *s.CheckpointHeight != sum.Height || *s.CheckpointHash != bad {
		t.Fatalf("summary %+v", s)
	}

	_, err = Run(context.Background(), Config{Network: "regtest", Checkpoint: &Checkpoint{Height: sum.Height - 1, Hash: parent}}, []string{path})
	var rule blockchain.RuleError
	if !errors.As(err, &rule) || rule.ErrorCode != blockchain.ErrScriptValidation {
		t.Fatalf("checkpoint below the bad block: %v, want ErrScriptValidation", err)
	}

	_, err = Run(context.Background(), Config{Network: "regtest", Checkpoint: &Checkpoint{Height: sum.Height, Hash: parent}}, []string{path})
	var re *RejectError
	if !errors.As(err, &re) || re.Hash != bad || !errors.As(err, &rule) || rule.ErrorCode != blockchain.ErrBadCheckpoint {
		t.Fatalf("wrong checkpoint hash: %v, want ErrBadCheckpoint for %s", err, bad)
	}
	if _, err := Open(Config{Network: "regtest", Checkpoint: &Checkpoint{Height: 0, Hash: bad}}); err == nil {
		t.Fatal("checkpoint at height 0 accepted")
	}
}

func TestParseCheckpoint(t *testing.T) {
	h := "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"
	want, _ := wire.ParseHash(h)
	cp, err := ParseCheckpoint("1234:" + h)
	if err != nil || cp.Height != 1234 || cp.Hash != want {
		t.Fatalf("%+v %v", cp, err)
	}
	for _, s := range []string{"", "1234", "x:" + h, "0:" + h, "-1:" + h, "1234:abc", "99999999999:" + h} {
		if _, err := ParseCheckpoint(s); err == nil {
			t.Errorf("ParseCheckpoint(%q) accepted", s)
		}
	}
}
