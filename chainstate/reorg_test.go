package chainstate

import (
	"bytes"
	"path/filepath"
	"testing"

	"utxod/internal/chaingen"
	"utxod/params"
	"utxod/script"
	"utxod/validate"
	"utxod/wire"
)

// generated builds a deterministic regtest chain with reorg branches.
func generated(t testing.TB, profile string, blocks, reorgs int) [][]byte {
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

func newRegtest(t testing.TB, store Store) *Chainstate {
	return newChainstate(t, params.RegTest(), store)
}

// TestReorgsSameOnEveryStore replays a generated chain with reorg branches
// on the in-memory store and on every persistent store (a small cache, so
// flushes land between and inside reorgs) and requires identical
// gettxoutsetinfo objects, also after reopening.
func TestReorgsSameOnEveryStore(t *testing.T) {
	blocks := generated(t, chaingen.ProfileModern, 220, 3)
	mem := newRegtest(t, NewMemStore())
	reorged := false
	for _, raw := range blocks {
		before := mem.Tip()
		if _, err := mem.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
		if after := mem.Tip(); after.Parent != before && after != before {
			reorged = true
		}
	}
	if !reorged {
		t.Fatal("the generated chain caused no reorg")
	}
	want := infoJSON(t, mem)
	checkScratchMuHash(t, mem)
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			kv := openKV(t, name, dir)
			p := params.RegTest()
			cs, err := New(Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: NewKVStore(kv, 64<<10)})
			if err != nil {
				t.Fatal(err)
			}
			for _, raw := range blocks {
				if _, err := cs.ProcessBlock(raw); err != nil {
					t.Fatal(err)
				}
			}
			if got := infoJSON(t, cs); got != want {
				t.Fatalf("%s:\n%s\nmemory:\n%s", name, got, want)
			}
			checkScratchMuHash(t, cs)
			if err := cs.Flush(); err != nil {
				t.Fatal(err)
			}
			kv.Close()
			kv = openKV(t, name, dir)
			defer kv.Close()
			cs, err = New(Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: NewKVStore(kv, 64<<10)})
			if err != nil {
				t.Fatal(err)
			}
			if got := infoJSON(t, cs); got != want {
				t.Fatalf("%s after reopen:\n%s\nmemory:\n%s", name, got, want)
			}
		})
	}
}
