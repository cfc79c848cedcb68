package kvstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"

	"utxod/backends"
	"utxod/chainstate"
	"utxod/scripthash"
	"utxod/store"
	"utxod/utxo"
	"utxod/wire"
)

// mainnetStores opens an empty mainnet chainstate on the memory store and
// on every KV store (1 MiB cache), by store name.
func mainnetStores() map[string]func(t *testing.T) *chainstate.Chainstate {
	stores := map[string]func(t *testing.T) *chainstate.Chainstate{
		"memory": func(t *testing.T) *chainstate.Chainstate { return newMainnet(t, store.NewMem()) },
	}
	for _, name := range storeNames {
		stores[name] = func(t *testing.T) *chainstate.Chainstate { return newMainnetKV(t, openKV(t, name, t.TempDir()), 1<<20) }
	}
	return stores
}

// ScanCoins walks the whole coin set of the tip, in hash_serialized_3
// order, on the memory store and every KV store.
func TestScanCoins(t *testing.T) {
	blocks := mainnetBlocks(t)
	const height = 300
	// Mainnet block 1's coinbase (its only transaction), 50 BTC at height 1.
	block1, _ := wire.ParseHash("0e3e2357e806b6cdb1f70b54c3a3a17b6714ee1f0e68bebb44a74b1efd512098")
	stores := mainnetStores()
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			cs := open(t)
			for h := 1; h <= height; h++ {
				if _, err := cs.ProcessBlock(blocks[h]); err != nil {
					t.Fatalf("block %d: %v", h, err)
				}
			}
			var n uint64
			var sum int64
			var prev utxo.Outpoint
			found := false
			st, err := cs.ScanCoins(func(e utxo.Entry) error {
				if n > 0 {
					if c := bytes.Compare(prev.Hash[:], e.Hash[:]); c > 0 || c == 0 && prev.Index >= e.Index {
						return errors.New("out of order")
					}
				}
				prev = e.Outpoint
				n++
				sum += e.Value
				if e.Hash == block1 && e.Index == 0 {
					found = e.Value == 50e8 && e.Height == 1 && e.Coinbase
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if st.Height != height || st.BestBlock != cs.Tip().Hash || n != st.TxOuts || sum != st.TotalAmount {
				t.Errorf("stats height %d txouts %d total %d; scanned %d coins, %d sat", st.Height, st.TxOuts, st.TotalAmount, n, sum)
			}
			if !found {
				t.Error("block 1's coinbase output missing or wrong")
			}
			stop := errors.New("stop")
			st, err = cs.ScanCoins(func(utxo.Entry) error { return stop })
			if !errors.Is(err, stop) || st.Height != height {
				t.Errorf("stopped scan: %v, height %d", err, st.Height)
			}
		})
	}
}

// ScanCoinsParallel visits the same coins as ScanCoins, each once, every
// worker's in ascending order, on the memory store and every KV store.
func TestScanCoinsParallel(t *testing.T) {
	blocks := mainnetBlocks(t)
	stores := mainnetStores()
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			cs := open(t)
			for h := 1; h <= 400; h++ {
				if _, err := cs.ProcessBlock(blocks[h]); err != nil {
					t.Fatalf("block %d: %v", h, err)
				}
			}
			var ordered []utxo.Entry
			want, err := cs.ScanCoins(func(e utxo.Entry) error {
				e.Script = bytes.Clone(e.Script)
				ordered = append(ordered, e)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, workers := range []int{1, 2, 3, 8} {
				got := make([][]utxo.Entry, workers)
				st, err := cs.ScanCoinsParallel(workers, func(w int, e utxo.Entry) error {
					if w < 0 || w >= workers {
						return fmt.Errorf("worker %d of %d", w, workers)
					}
					if n := len(got[w]); n > 0 && !outpointLess(got[w][n-1].Outpoint, e.Outpoint) {
						return fmt.Errorf("worker %d: %v after %v", w, e.Outpoint, got[w][n-1].Outpoint)
					}
					e.Script = bytes.Clone(e.Script)
					got[w] = append(got[w], e)
					return nil
				})
				if err != nil || st != want {
					t.Fatalf("%d workers: %v, stats %+v want %+v", workers, err, st, want)
				}
				all := slices.Concat(got...)
				slices.SortFunc(all, func(a, b utxo.Entry) int {
					if outpointLess(a.Outpoint, b.Outpoint) {
						return -1
					}
					return 1
				})
				if len(all) != len(ordered) {
					t.Fatalf("%d workers: %d coins, ordered walk %d", workers, len(all), len(ordered))
				}
				for i := range all {
					if all[i].Outpoint != ordered[i].Outpoint || all[i].Value != ordered[i].Value || all[i].Height != ordered[i].Height ||
						all[i].Coinbase != ordered[i].Coinbase || !bytes.Equal(all[i].Script, ordered[i].Script) {
						t.Fatalf("%d workers: coin %d is %+v, ordered walk %+v", workers, i, all[i], ordered[i])
					}
				}
				if workers > 1 && len(got[1]) == 0 {
					t.Errorf("%d workers: worker 1 walked nothing", workers)
				}
			}
		})
	}
}

func outpointLess(a, b utxo.Outpoint) bool {
	if c := bytes.Compare(a.Hash[:], b.Hash[:]); c != 0 {
		return c < 0
	}
	return a.Index < b.Index
}

// On every store, scripthash.Scan's parallel walk gives the ordered walk's
// Result for many queries (limits, cursors, summaries); a cancel mid-scan
// returns ctx.Err() with a partial Result; fn's error and a corrupt record
// stop every worker and come back.
func TestScanParallelStores(t *testing.T) {
	const n = 60_000
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			kv := openKV(t, name, t.TempDir())
			defer kv.Close()
			needle := fillCoins(t, kv, n)
			src := storeSource{openStore(t, kv, Options{CacheBytes: 1 << 20})}
			var coins []utxo.Entry
			if _, err := src.ScanCoins(func(e utxo.Entry) error {
				e.Script = bytes.Clone(e.Script)
				coins = append(coins, e)
				return nil
			}); err != nil || len(coins) != n {
				t.Fatalf("%d coins, %v", len(coins), err)
			}
			var needles []utxo.Entry
			for _, e := range coins {
				if bytes.Equal(e.Script, needle) {
					needles = append(needles, e)
				}
			}
			rng := rand.New(rand.NewPCG(5, 5))
			var qs []scripthash.Query
			for range 60 {
				s := needle
				switch rng.IntN(4) {
				case 0:
					s = coins[rng.IntN(n)].Script
				case 1:
					s = []byte{0x51}
				}
				q := scripthash.Query{Hash: scripthash.Of(s), Limit: []int{0, 1, 5, 20, 59, scripthash.NoLimit}[rng.IntN(6)], Summary: rng.IntN(2) == 0}
				if rng.IntN(2) == 0 {
					q.Script = s
				}
				if rng.IntN(2) == 0 {
					e := needles[rng.IntN(len(needles))]
					q.After = &scripthash.Position{Height: e.Height, Txid: e.Hash, Vout: e.Index}
				}
				qs = append(qs, q)
			}
			ordered, err := scripthash.ScanWorkers(context.Background(), src, qs, nil, 1)
			rows := 0
			for _, a := range ordered.Answers {
				rows += len(a.UTXOs)
			}
			if err != nil || ordered.Scanned != n || rows < 100 {
				t.Fatalf("ordered: %d scanned, %d rows, %v", ordered.Scanned, rows, err)
			}
			for _, workers := range []int{2, 3, 4} {
				got, err := scripthash.ScanWorkers(context.Background(), src, qs, nil, workers)
				if err != nil || !reflect.DeepEqual(got, ordered) {
					t.Fatalf("%d workers: %v; results differ: %v", workers, err, !reflect.DeepEqual(got, ordered))
				}
			}

			// Cancel once the progress reaches 5% (each worker looks at ctx every
			// 8192 of its coins, so it stops well before the end).
			ctx, cancel := context.WithCancel(context.Background())
			res, err := scripthash.ScanWorkers(ctx, src, qs, func(p int) {
				if p >= 5 {
					cancel()
				}
			}, 2)
			cancel()
			if !errors.Is(err, context.Canceled) || res.Scanned == 0 || res.Scanned >= n || res.Tip != ordered.Tip {
				t.Fatalf("cancelled: %d scanned, tip %+v, %v", res.Scanned, res.Tip, err)
			}
			for i := range qs {
				if a, b := res.Answers[i], ordered.Answers[i]; a.Count > b.Count || a.Sum > b.Sum {
					t.Fatalf("cancelled: query %d counts %d, the whole set %d", i, a.Count, b.Count)
				}
			}

			// fn's error on one worker stops all.
			boom := errors.New("boom")
			snap, err := src.s.Snapshot(nil, &store.Stats{})
			if err != nil {
				t.Fatal(err)
			}
			var calls atomic.Int64
			err = snap.(store.ParallelScanner).ScanParallel(3, func(w int, e utxo.Entry) error {
				if calls.Add(1) == n/4 {
					return boom
				}
				return nil
			})
			snap.Close()
			// The other workers stop at their next record (the bound
			// leaves room for a slow scheduler).
			if !errors.Is(err, boom) || calls.Load() > n/2 {
				t.Fatalf("failing fn: %v, %d calls", err, calls.Load())
			}

			// A corrupt record in the middle of the set.
			key := []byte{prefixCoins, 0x80, 0x00, 0x01}
			key = append(key, make([]byte, 33-len(key))...)
			b := backends.NewBatch()
			b.Put(key, []byte{0xff, 0xff})
			if err := kv.Write(b, backends.NoSync); err != nil {
				t.Fatal(err)
			}
			if res, err := scripthash.ScanWorkers(context.Background(), src, qs, nil, 2); err == nil || errors.Is(err, context.Canceled) || res.Scanned >= n {
				t.Fatalf("corrupt record: %d scanned, %v", res.Scanned, err)
			}
		})
	}
}
