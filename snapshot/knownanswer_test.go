package snapshot

import (
	"bytes"
	"testing"

	"utxod/params"
)

// TestCoreDumptxoutsetKnownAnswer reproduces Core's
// test/functional/rpc_dumptxoutset.py: regtest, mocktime genesis+1,
// generate(100) to mjTkW3DjgyZck4KbiRusZsqTgaYTxdSz6z, then
// `dumptxoutset latest`. Core asserts base_hash, coins_written 100, the
// file's SHA-256, txoutset_hash and nchaintx 101 (values in
// ../shared/reference/interop.md, "Byte-exact known answer"). The chain is
// connected through the validator and dumped from every store.
func TestCoreDumptxoutsetKnownAnswer(t *testing.T) {
	const (
		baseHash = "220aee93f0f5409631f35488898258f0930952bd620063cb4d7d87f7c28a8f50"
		fileHash = "e8c59b1bc1f19061c67eb7a392f4ea17eea83af58646ea2909e270546699c36c"
		txoutset = "771d773b5c27b6f35f598ce764652a2cf28fbc268341eb1827844e416c629c7d"
	)
	p := params.RegTest()
	addr := base58Decode(t, "mjTkW3DjgyZck4KbiRusZsqTgaYTxdSz6z")
	if len(addr) != 21 || addr[0] != 0x6f {
		t.Fatalf("address payload %x", addr)
	}
	blocks := coreMinerChain(t, 100, p2pkh(addr[1:]))
	for _, name := range append([]string{""}, storeNames...) {
		t.Run("store="+name, func(t *testing.T) {
			if name != "" {
				skipUnavailable(t, name)
			}
			c := openChain(t, p, name, t.TempDir())
			connectAll(t, c.cs, blocks)
			if tip := c.cs.Tip(); tip.Height != 100 || tip.Hash.String() != baseHash {
				t.Fatalf("tip %d %s, Core's base_hash is %s", tip.Height, tip.Hash, baseHash)
			}
			file := dump(t, c.cs, p)
			if got := fileSHA(file); got != fileHash {
				t.Fatalf("file SHA-256 %s, Core's %s (%d bytes)", got, fileHash, len(file))
			}
			sum, err := Verify(bytes.NewReader(file), VerifyOptions{Network: p})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Stats.TxOuts != 100 || sum.HashSerialized3.String() != txoutset || sum.NonCanonical != "" {
				t.Fatalf("verify: %d coins, hash %s (Core's %s), non-canonical %q", sum.Stats.TxOuts, sum.HashSerialized3, txoutset, sum.NonCanonical)
			}
			if sum.Table != nil {
				t.Fatal("regtest height 100 is not in Core's table")
			}
		})
	}
}

// TestRegtestAssumeUTXOEntry200 rebuilds the chain of Core's fuzz target
// src/test/fuzz/utxo_snapshot.cpp (CreateBlockChain(200)), whose block 200
// and UTXO set are regtest's assumeutxo entry at height 200 in Core's
// chainparams: the block hash and hash_serialized_3 come from Core, the
// chain from its recipe. The dump must match the table, load without
// --expect-hash, and with the headers connect block 201 fully validated.
func TestRegtestAssumeUTXOEntry200(t *testing.T) {
	p := params.RegTest()
	entry, ok := p.AssumeUTXOForHeight(200)
	if !ok {
		t.Fatal("no regtest entry at 200")
	}
	blocks := fuzzTargetChain(t, 201)
	src := openChain(t, p, "", "")
	connectAll(t, src.cs, blocks[:200])
	if tip := src.cs.Tip(); tip.Hash != entry.BlockHash {
		t.Fatalf("block 200 %s, Core's table says %s", tip.Hash, entry.BlockHash)
	}
	file := dump(t, src.cs, p)
	sum, err := Verify(bytes.NewReader(file), VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Table == nil || !sum.Matches || sum.HashSerialized3 != entry.HashSerialized || !sum.HeightKnown || sum.Stats.Height != 200 {
		t.Fatalf("verify: table %v matches %v hash %s (table %s) height %d", sum.Table, sum.Matches, sum.HashSerialized3, entry.HashSerialized, sum.Stats.Height)
	}
	if sum.Network.Name != "regtest" || sum.Stats.TxOuts != 200 {
		t.Fatalf("network %s, %d coins", sum.Network.Name, sum.Stats.TxOuts)
	}
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			skipUnavailable(t, name)
			dir := t.TempDir() + "/loaded"
			if _, err := loadFile(t, file, LoadConfig{Backend: name, Datadir: dir, Headers: headerSet(t, p, rawHeaders(blocks[:200]))}); err != nil {
				t.Fatal(err)
			}
			c := openChain(t, p, name, dir)
			got := info(t, c.cs)
			if got.SnapshotBase == nil || *got.SnapshotBase != entry.BlockHash || *got.SnapshotBaseHeight != 200 {
				t.Fatalf("snapshot base %v %v", got.SnapshotBase, got.SnapshotBaseHeight)
			}
			if want := info(t, src.cs); digestJSON(got) != digestJSON(want) {
				t.Fatalf("loaded %s\nsource %s", digestJSON(got), digestJSON(want))
			}
			if again := dump(t, c.cs, p); !bytes.Equal(again, file) {
				t.Fatal("dump of the loaded state differs")
			}
			connectAll(t, c.cs, blocks[200:])
			if tip := c.cs.Tip(); tip.Height != 201 {
				t.Fatalf("tip %d after block 201", tip.Height)
			}
		})
	}
}
