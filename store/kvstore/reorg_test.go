package kvstore

import (
	"path/filepath"
	"testing"

	"utxod/params"
	"utxod/store"
	"utxod/testkit/chaingen"
	"utxod/testkit/testchain"
)

// TestReorgsSameOnEveryStore replays a generated chain with reorg branches
// on the in-memory store and on every persistent store (a small cache, so
// flushes land between and inside reorgs) and requires identical
// gettxoutsetinfo objects, also after reopening.
func TestReorgsSameOnEveryStore(t *testing.T) {
	blocks := testchain.Generated(t, chaingen.ProfileModern, 220, 3)
	mem := newChainstate(t, params.RegTest(), store.NewMem())
	reorged := false
	for _, raw := range blocks {
		before := mem.Tip()
		if _, err := mem.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
		if after := mem.Tip(); after.Header.PrevBlock != before.Hash && after.Hash != before.Hash {
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
			cs := newChainstate(t, params.RegTest(), openStore(t, kv, Options{CacheBytes: 64 << 10}))
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
			cs = newChainstate(t, params.RegTest(), openStore(t, kv, Options{CacheBytes: 64 << 10}))
			if got := infoJSON(t, cs); got != want {
				t.Fatalf("%s after reopen:\n%s\nmemory:\n%s", name, got, want)
			}
		})
	}
}
