package kvstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"utxod/backends"
	"utxod/scripthash"
	"utxod/store"
	"utxod/utxo"
	"utxod/wire"
)

// BenchmarkScanCoins is the scan rate without a scripthash index: n coins
// (UTXOD_SCAN_COINS, default 1,000,000: P2WPKH and P2PKH scripts, one to
// three outputs per txid) written to each store, then scanned through the
// store snapshot ScanCoins uses: "walk" visits every coin, "script"
// answers one address query (scripts compared by bytes, as for
// /api/address and /v1/scan), "scripthash" one /api/scripthash query
// (SHA-256 of every script). Each runs as "seq", the ordered walk on one
// goroutine, and "par", the parallel walk on GOMAXPROCS, side by side.
// coins/s is the figure; cores is the process's CPU time (user+system) over
// the wall time, which shows a parallel run the machine's other work
// slowed (cores well under GOMAXPROCS).
//
//	UTXOD_SCAN_COINS=1000000 go test -tags rocksdb -run '^$' -bench BenchmarkScanCoins -benchtime 3x -count 3 ./store/kvstore/
func BenchmarkScanCoins(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("UTXOD_SCAN_COINS")); err == nil && v > 0 {
		n = v
	}
	workers := runtime.GOMAXPROCS(0)
	for _, name := range storeNames {
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			open := func() backends.KV {
				kv, err := backends.Open(name, dir, backends.Options{})
				if errors.Is(err, backends.ErrUnavailable) {
					b.Skip(err)
				}
				if err != nil {
					b.Fatal(err)
				}
				return kv
			}
			kv := open()
			needle := fillCoins(b, kv, n)
			// Reopen, as serve opens an imported datadir: RocksDB then
			// reads tables, not the memtable the writes left.
			if err := kv.Close(); err != nil {
				b.Fatal(err)
			}
			kv = open()
			defer kv.Close()
			st := openStore(b, kv, Options{CacheBytes: 1 << 20})
			src := storeSource{st}
			for _, mode := range []string{"walk", "script", "scripthash"} {
				for _, arm := range []string{"seq", "par"} {
					w := 1
					if arm == "par" {
						w = workers
					}
					b.Run(mode+"/"+arm, func(b *testing.B) {
						var q []scripthash.Query
						switch mode {
						case "script":
							q = []scripthash.Query{{Hash: scripthash.Of(needle), Script: needle, Limit: scripthash.NoLimit}}
						case "scripthash":
							q = []scripthash.Query{{Hash: scripthash.Of(needle), Limit: scripthash.NoLimit}}
						}
						start, cpu0 := time.Now(), cpuSeconds(b)
						for b.Loop() {
							if mode == "walk" {
								if seen := walkCoins(b, src, w); seen != n {
									b.Fatalf("%d coins", seen)
								}
								continue
							}
							res, err := scripthash.ScanWorkers(context.Background(), src, q, nil, w)
							if err != nil || res.Scanned != uint64(n) || len(res.Answers[0].UTXOs) == 0 {
								b.Fatalf("%+v %v", res.Answers, err)
							}
						}
						wall := time.Since(start).Seconds()
						b.ReportMetric(float64(n)*float64(b.N)/wall, "coins/s")
						b.ReportMetric((cpuSeconds(b)-cpu0)/wall, "cores")
					})
				}
			}
		})
	}
}

// cpuSeconds is the process's CPU time so far, every thread.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// walkCoins counts the coins of src on workers goroutines (the ordered
// walk for one), each into its own cache line.
func walkCoins(b *testing.B, src storeSource, workers int) int {
	if workers == 1 {
		seen := 0
		if _, err := src.ScanCoins(func(utxo.Entry) error { seen++; return nil }); err != nil {
			b.Fatal(err)
		}
		return seen
	}
	seen := make([]struct {
		n int
		_ [120]byte
	}, workers)
	if _, err := src.ScanCoinsParallel(workers, func(w int, _ utxo.Entry) error { seen[w].n++; return nil }); err != nil {
		b.Fatal(err)
	}
	total := 0
	for _, s := range seen {
		total += s.n
	}
	return total
}

// storeSource scans a store's snapshot (ScanCoins without a chainstate).
type storeSource struct{ s *Store }

func (ss storeSource) ScanCoins(fn func(utxo.Entry) error) (utxo.Stats, error) {
	var st store.Stats
	snap, err := ss.s.Snapshot(nil, &st)
	if err != nil {
		return st, err
	}
	defer snap.Close()
	return st, snap.Scan(fn)
}

func (ss storeSource) ScanCoinsParallel(workers int, fn func(int, utxo.Entry) error) (utxo.Stats, error) {
	var st store.Stats
	snap, err := ss.s.Snapshot(nil, &st)
	if err != nil {
		return st, err
	}
	defer snap.Close()
	return st, snap.(store.ParallelScanner).ScanParallel(workers, fn)
}

// fillCoins writes n coins as coin records and returns a script that some
// of them pay.
func fillCoins(b testing.TB, kv backends.KV, n int) []byte {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	needle := append([]byte{0x00, 0x14}, make([]byte, 20)...)
	batch := backends.NewBatch()
	var rec []byte
	key := make([]byte, 33)
	key[0] = prefixCoins
	for written := 0; written < n; {
		var txid wire.Hash
		for i := range txid {
			txid[i] = byte(rng.Uint32())
		}
		outs := make([]utxo.IndexedCoin, 0, 3)
		height := uint32(rng.IntN(900_000))
		for v := 0; v < 1+rng.IntN(3) && written < n; v++ {
			var s []byte
			switch {
			case written%1000 == 0:
				s = needle
			case rng.IntN(2) == 0:
				s = append([]byte{0x00, 0x14}, randBytes(rng, 20)...)
			default:
				s = append(append([]byte{0x76, 0xa9, 0x14}, randBytes(rng, 20)...), 0x88, 0xac)
			}
			outs = append(outs, utxo.IndexedCoin{Index: uint32(v), Coin: utxo.Coin{Value: int64(rng.IntN(1e9)), Height: height, Script: s}})
			written++
		}
		r, err := utxo.EncodeRecord(rec[:0], outs)
		if err != nil {
			b.Fatal(err)
		}
		rec = r.Bytes()
		copy(key[1:], txid[:])
		batch.Put(key, rec)
		if batch.Len() >= 10_000 {
			if err := kv.Write(batch, backends.NoSync); err != nil {
				b.Fatal(err)
			}
			batch = backends.NewBatch()
		}
	}
	if err := kv.Write(batch, backends.Sync); err != nil {
		b.Fatal(err)
	}
	return needle
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}
