package shindex

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"utxod/backends"
	"utxod/bench"
	"utxod/scripthash"
	"utxod/store"
	"utxod/testkit/testchain"
	"utxod/utxo"
	"utxod/wire"
)

// benchCoins is UTXOD_INDEX_COINS, default 1,000,000.
func benchCoins() int {
	if v, err := strconv.Atoi(os.Getenv("UTXOD_INDEX_COINS")); err == nil && v > 0 {
		return v
	}
	return 1_000_000
}

// synthCoins returns n coins: one to three outputs per random txid at
// random heights, P2WPKH and P2PKH scripts with random hashes, every
// 1000th paying needle.
func synthCoins(n int) (coins []utxo.Entry, needle []byte) {
	rng := rand.New(rand.NewPCG(1, 2))
	needle = append([]byte{0x00, 0x14}, make([]byte, 20)...)
	rnd := func(k int) []byte {
		b := make([]byte, k)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	for len(coins) < n {
		var txid wire.Hash
		copy(txid[:], rnd(32))
		height := uint32(rng.IntN(900_000))
		for v := 0; v < 1+rng.IntN(3) && len(coins) < n; v++ {
			var s []byte
			switch {
			case len(coins)%1000 == 0:
				s = needle
			case rng.IntN(2) == 0:
				s = append([]byte{0x00, 0x14}, rnd(20)...)
			default:
				s = append(append([]byte{0x76, 0xa9, 0x14}, rnd(20)...), 0x88, 0xac)
			}
			coins = append(coins, utxo.Entry{Outpoint: utxo.Outpoint{Hash: txid, Index: uint32(v)},
				Coin: utxo.Coin{Value: int64(rng.IntN(1e9)), Height: height, Script: s}})
		}
	}
	return coins, needle
}

// writeCoins writes coins as the store's coin set at a tip of height 1.
func writeCoins(b *testing.B, kv backends.KV, coins []utxo.Entry) {
	b.Helper()
	st := openStore(b, kv, 1<<40)
	defer st.Close()
	tip := wire.Hash{0x77}
	stats := store.Stats{Height: 1, BestBlock: tip, TxOuts: uint64(len(coins)), BogoSize: 100 * uint64(len(coins))}
	if err := st.SetGenesis(tip, &stats); err != nil {
		b.Fatal(err)
	}
	if err := st.Connect(tip, &utxo.Delta{Created: coins}); err != nil {
		b.Fatal(err)
	}
	if err := st.Flush(nil, &stats); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkIndexBuild: n synthetic coins (UTXOD_INDEX_COINS) written to
// two datadirs per store, one of which then builds the index; reports the
// build rate and the index's size per unspent output: the datadirs'
// bytes on disk after a clean close (and a reopen and close, so logs are
// replayed into tables), with the index minus without, over n.
//
//	go test -tags rocksdb -run '^$' -bench BenchmarkIndexBuild -benchtime 1x ./store/kvstore/shindex/
func BenchmarkIndexBuild(b *testing.B) {
	n := benchCoins()
	coins, _ := synthCoins(n)
	for _, name := range testchain.StoreNames {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				root := b.TempDir()
				plain, indexed := filepath.Join(root, "plain"), filepath.Join(root, "indexed")
				for _, dir := range []string{plain, indexed} {
					kv := testchain.OpenKV(b, name, dir)
					writeCoins(b, kv, coins)
					kv.Close()
				}
				kv := testchain.OpenKV(b, name, indexed)
				b.StartTimer()
				start := time.Now()
				if _, err := Build(context.Background(), kv, nil); err != nil {
					b.Fatal(err)
				}
				el := time.Since(start)
				b.StopTimer()
				kv.Close()
				for _, dir := range []string{plain, indexed} {
					kv := testchain.OpenKV(b, name, dir)
					kv.Close()
				}
				size := bench.DirSize
				if name == "bbolt" {
					// The file grows in big steps; count its B+tree's pages.
					size = func(dir string) int64 { return bboltPages(b, dir) }
				}
				b.ReportMetric(float64(n)/el.Seconds(), "rows/s")
				b.ReportMetric(float64(size(indexed)-size(plain))/float64(n), "index-B/utxo")
				b.ReportMetric(float64(size(plain))/float64(n), "coins-B/utxo")
				b.StartTimer()
			}
		})
	}
}

// bboltPages is the bytes of the pages bbolt's tree in dir allocates
// (branch and leaf pages, with their overflow).
func bboltPages(b *testing.B, dir string) int64 {
	db, err := bolt.Open(filepath.Join(dir, "bbolt.db"), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, bk *bolt.Bucket) error {
			st := bk.Stats()
			n += int64(st.BranchAlloc + st.LeafAlloc)
			return nil
		})
	}); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkLookup: one query of a scripthash with UTXOD_INDEX_COINS/1000
// outputs (NoLimit, with the summary) and one of a scripthash with one
// output, on an index of UTXOD_INDEX_COINS rows.
func BenchmarkLookup(b *testing.B) {
	n := benchCoins()
	coins, needle := synthCoins(n)
	for _, name := range testchain.StoreNames {
		b.Run(name, func(b *testing.B) {
			kv := testchain.OpenKV(b, name, b.TempDir())
			defer kv.Close()
			writeCoins(b, kv, coins)
			if _, err := Build(context.Background(), kv, nil); err != nil {
				b.Fatal(err)
			}
			ix, err := Open(kv)
			if err != nil {
				b.Fatal(err)
			}
			for _, c := range []struct {
				name string
				q    scripthash.Query
				rows int
			}{
				{"many", scripthash.Query{Hash: scripthash.Of(needle), Limit: scripthash.NoLimit, Summary: true}, (n + 999) / 1000},
				{"one", scripthash.Query{Hash: scripthash.Of(coins[1].Script), Limit: scripthash.NoLimit}, 1},
			} {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						res, err := ix.Lookup(context.Background(), []scripthash.Query{c.q})
						if err != nil || len(res.Answers[0].UTXOs) != c.rows {
							b.Fatalf("%d rows, %v; want %d", len(res.Answers[0].UTXOs), err, c.rows)
						}
					}
				})
			}
		})
	}
}

// BenchmarkApply: the index's in-memory side of connecting blocks of
// 2,000 new coins each, every block but the first spending the previous
// block's coins (created in the same flush window) and 500 coins the last
// flush wrote; ns/op is one block.
//
//	go test -run '^$' -bench BenchmarkApply -benchmem ./store/kvstore/shindex/
func BenchmarkApply(b *testing.B) {
	coins, _ := synthCoins(2_000 * 64)
	old, _ := synthCoins(500 * 64)
	for i := range old {
		old[i].Hash[31] ^= 0xff // not the same outpoints as coins
	}
	x := newIndex(nil, scripthash.Tip{}, NewIDKey())
	b.ResetTimer()
	for i := range b.N {
		k := i % 64
		if k == 0 {
			x.pending.Clear(true)
		}
		d := &utxo.Delta{Created: coins[k*2000 : (k+1)*2000], Spent: old[k*500 : (k+1)*500]}
		if k > 0 {
			d.Spent = append(d.Spent[:len(d.Spent):len(d.Spent)], coins[(k-1)*2000:k*2000]...)
		}
		if err := x.Apply(wire.Hash{}, d, true); err != nil {
			b.Fatal(err)
		}
	}
}
