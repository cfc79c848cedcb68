package shindex

import (
	"bytes"
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"utxod/backends"
	"utxod/testkit/testchain"
	"utxod/utxo"
	"utxod/wire"
)

// TestSorter: rows added in txid order come out in key order, each once,
// with their values, through many spilled runs and the last one in memory;
// scripts long enough to be hashed as they come (and shared scripts, whose
// rows tie on the key's prefix) included; the run files are gone after
// Close. In TestSorterBigBucket one script has more rows than a bucket
// holds in memory: its bucket is sorted in chunks and merged.
func TestSorter(t *testing.T) { testSorter(t, 4, 1) }

func TestSorterBigBucket(t *testing.T) { testSorter(t, 2, 3) }

// testSorter adds 3000 txids of 1–4 rows; of every kinds rows, shared ones
// use one of three scripts.
func testSorter(t *testing.T, kinds, shared int) {
	defer func(r int) { minRunRows = r }(minRunRows)
	minRunRows = 50
	rng := rand.New(rand.NewPCG(1, 2))
	scripts := [][]byte{{0x51}, bytes.Repeat([]byte{0x6a}, 5000), {0x00, 0x14, 1, 2, 3}}
	var coins []utxo.Entry
	tmp := t.TempDir()
	srt := NewSorter(SorterConfig{Dir: tmp, Memory: 1})
	for n := 0; n < 3000; n++ {
		var txid wire.Hash
		for i := range txid {
			txid[i] = byte(rng.Uint32())
		}
		var outs []utxo.IndexedCoin
		for v := range 1 + rng.IntN(4) {
			var script []byte
			switch k := rng.IntN(kinds); {
			case k < shared:
				script = scripts[rng.IntN(len(scripts))]
			case k == shared:
				script = bytes.Repeat([]byte{byte(n)}, 4<<10+rng.IntN(6000))
			default:
				script = bytes.Repeat([]byte{byte(n), byte(v)}, 1+rng.IntN(20))
			}
			c := utxo.Coin{Value: rng.Int64N(1 << 40), Height: uint32(rng.IntN(900000)), Coinbase: rng.IntN(9) == 0, Script: script}
			outs = append(outs, utxo.IndexedCoin{Index: uint32(v * 3), Coin: c})
			coins = append(coins, utxo.Entry{Outpoint: utxo.Outpoint{Hash: txid, Index: uint32(v * 3)}, Coin: c})
		}
		if err := srt.AddTx(txid, outs); err != nil {
			t.Fatal(err)
		}
	}
	want := rowsOf(coins, srt.Key())
	kv := testchain.OpenKV(t, "pebble", filepath.Join(t.TempDir(), "kv"))
	defer kv.Close()
	n, err := srt.Write(context.Background(), kv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if srt.spills < 10 {
		t.Fatalf("only %d runs spilled", srt.spills)
	}
	if big := slices.Max(srt.counts); (big > uint64(srt.bucketCap())) != (shared > 1) {
		t.Fatalf("largest bucket %d rows, %d fit in memory", big, srt.bucketCap())
	}
	if err := srt.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	if n != uint64(len(want)) {
		t.Fatalf("%d rows written, want %d", n, len(want))
	}
	it, err := kv.NewIterator(backends.PrefixRange([]byte{Prefix}))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	got := 0
	for it.Next() {
		if v, ok := want[string(it.Key())]; !ok || !bytes.Equal(v, it.Value()) {
			t.Fatalf("row %x = %x: want %x (present %v)", it.Key(), it.Value(), v, ok)
		}
		got++
	}
	if got != len(want) {
		t.Fatalf("%d rows read, want %d", got, len(want))
	}
}
