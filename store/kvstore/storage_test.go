package kvstore

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"utxod/backends"
	"utxod/chainstate"
	"utxod/internal/procstatus"
	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/testkit/btcdengine"
	"utxod/testkit/chaingen"
	"utxod/testkit/testchain"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// TestKVStoreArenaCompaction forces an arena compaction after every block
// (and keeps the cache across flushes) on the mainnet sample and on a
// generated chain with reorgs: reference digests, the in-memory store's
// answer and a reopen must agree.
func TestKVStoreArenaCompaction(t *testing.T) {
	old := compactMinDead
	compactMinDead = 1
	defer func() { compactMinDead = old }()
	refs := testchain.References(t)
	blocks := mainnetBlocks(t)
	dir := t.TempDir()
	kv := openKV(t, "pebble", dir)
	cs := newMainnetKV(t, kv, 1<<30)
	for h, raw := range blocks {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		if h%997 == 0 {
			if err := cs.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if ref, ok := refs[int32(h)]; ok {
			testchain.CheckReference(t, cs, ref)
		}
	}
	want := infoJSON(t, cs)
	if err := cs.Flush(); err != nil {
		t.Fatal(err)
	}
	kv.Close()
	kv = openKV(t, "pebble", dir)
	defer kv.Close()
	if got := infoJSON(t, newMainnetKV(t, kv, 1<<30)); got != want {
		t.Fatalf("after reopen:\n%s\nwant\n%s", got, want)
	}

	gen := testchain.Generated(t, chaingen.ProfileModern, 220, 3)
	mem := newChainstate(t, params.RegTest(), store.NewMem())
	for _, raw := range gen {
		if _, err := mem.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
	}
	kv2 := openKV(t, "pebble", filepath.Join(t.TempDir(), "r"))
	defer kv2.Close()
	p := params.RegTest()
	cs2, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, btcdengine.New(), nil), Store: openStore(t, kv2, Options{CacheBytes: 1 << 30})})
	if err != nil {
		t.Fatal(err)
	}
	for i, raw := range gen {
		if _, err := cs2.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 {
			if err := cs2.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got, want := infoJSON(t, cs2), infoJSON(t, mem); got != want {
		t.Fatalf("kv %s\nmem %s", got, want)
	}
}

// mainnetOutpoints connects the mainnet sample into a fresh store of name
// in dir (final flush) and returns every unspent outpoint, shuffled.
func mainnetOutpoints(t testing.TB, name, dir string) []utxo.Outpoint {
	kv := openKV(t, name, dir)
	defer kv.Close()
	cs := newMainnetKV(t, kv, 1<<30)
	for _, raw := range mainnetBlocks(t) {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
	}
	if err := cs.Flush(); err != nil {
		t.Fatal(err)
	}
	sc, err := cs.SnapshotCoins()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var ops []utxo.Outpoint
	if err := sc.Scan(func(e utxo.Entry) error { ops = append(ops, e.Outpoint); return nil }); err != nil {
		t.Fatal(err)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
	return ops
}

// TestKVStoreConcurrentCoin: HTTP lookups call Chainstate.Coin concurrently
// (read lock); misses insert into the cache, which must not race.
func TestKVStoreConcurrentCoin(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pebble")
	ops := mainnetOutpoints(t, "pebble", dir)
	kv := openKV(t, "pebble", dir)
	defer kv.Close()
	cs := newMainnetKV(t, kv, 1<<30)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < len(ops); i += 3 {
				if _, found, err := cs.Coin(ops[i]); err != nil || !found {
					t.Errorf("%v: found %v err %v", ops[i], found, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkCoin reads random unspent outpoints of the mainnet sample
// through Chainstate.Coin on each store: "cold" reopens the store before
// every pass (coins cache and the store's block cache empty; the OS page
// cache stays warm), "cached" repeats a pass over a warm coins cache. One
// op is one lookup.
func BenchmarkCoin(b *testing.B) {
	for _, name := range storeNames {
		b.Run(name, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), name)
			ops := mainnetOutpoints(b, name, dir)
			b.Run("cold", func(b *testing.B) {
				var kv = openKV(b, name, dir)
				cs := newMainnetKV(b, kv, 1<<30)
				i := 0
				b.ResetTimer()
				for b.Loop() {
					if i == len(ops) { // every outpoint read once: reopen
						b.StopTimer()
						kv.Close()
						kv = openKV(b, name, dir)
						cs = newMainnetKV(b, kv, 1<<30)
						i = 0
						b.StartTimer()
					}
					if _, found, err := cs.Coin(ops[i]); err != nil || !found {
						b.Fatal(found, err)
					}
					i++
				}
				b.StopTimer()
				kv.Close()
			})
			b.Run("cached", func(b *testing.B) {
				kv := openKV(b, name, dir)
				defer kv.Close()
				cs := newMainnetKV(b, kv, 1<<30)
				for _, op := range ops {
					cs.Coin(op)
				}
				i := 0
				for b.Loop() {
					if _, found, err := cs.Coin(ops[i%len(ops)]); err != nil || !found {
						b.Fatal(found, err)
					}
					i++
				}
			})
		})
	}
}

// nullKV is a store that holds nothing: every Get misses, writes vanish.
// It isolates the coins cache's own memory (no memtables, block caches or
// background work).
type nullKV struct{}

func (nullKV) Get([]byte) ([]byte, error) { return nil, backends.ErrNotFound }
func (nullKV) Has([]byte) (bool, error)   { return false, nil }
func (nullKV) NewIterator(backends.Range) (backends.Iterator, error) {
	return nullIter{}, nil
}
func (nullKV) Write(*backends.Batch, backends.SyncMode) error { return nil }
func (nullKV) Sync() error                                    { return nil }
func (nullKV) NewSnapshot() (backends.Snapshot, error) {
	return nil, errors.New("nullKV: no snapshots")
}
func (nullKV) Close() error { return nil }

type nullIter struct{}

func (nullIter) Next() bool    { return false }
func (nullIter) Key() []byte   { return nil }
func (nullIter) Value() []byte { return nil }
func (nullIter) Err() error    { return nil }
func (nullIter) Close() error  { return nil }

func vmRSS() int64 {
	kib, _ := procstatus.KiB("VmRSS:")
	return kib << 10
}

// BenchmarkCacheFootprint measures the coins cache's memory per cached
// output: connect a chain into a Store over nullKV with a budget that
// never flushes, flush (pending undo and blocks go), then drop the cache;
// the live heap and the RSS it gives back (after GC and FreeOSMemory),
// divided by the UTXO count. Corpora: the mainnet sample, and the regtest
// block file named by STOREBENCH_CORPUS if set (bench/storebench gen).
func BenchmarkCacheFootprint(b *testing.B) {
	corpora := map[string]func() (*params.Params, [][]byte){
		"mainnet": func() (*params.Params, [][]byte) { return params.MainNet(), mainnetBlocks(b) },
	}
	if f := os.Getenv("STOREBENCH_CORPUS"); f != "" {
		corpora["corpus"] = func() (*params.Params, [][]byte) {
			raw, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			r := wire.NewBlockFileReader(bytes.NewReader(raw), params.RegTest().Magic)
			var blocks [][]byte
			for {
				blk, _, err := r.Next()
				if errors.Is(err, io.EOF) {
					return params.RegTest(), blocks
				}
				if err != nil {
					b.Fatal(err)
				}
				blocks = append(blocks, bytes.Clone(blk))
			}
		}
	}
	for name, load := range corpora {
		b.Run(name, func(b *testing.B) {
			p, blocks := load()
			for b.Loop() {
				st := openStore(b, nullKV{}, Options{CacheBytes: 1 << 40})
				cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: st})
				if err != nil {
					b.Fatal(err)
				}
				for _, raw := range blocks {
					if _, err := cs.ProcessBlock(raw); err != nil {
						b.Fatal(err)
					}
				}
				if err := cs.Flush(); err != nil {
					b.Fatal(err)
				}
				debug.FreeOSMemory()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				heap1, rss1 := m.HeapAlloc, vmRSS()
				est := st.CacheBytes()
				st.Close()
				debug.FreeOSMemory()
				runtime.ReadMemStats(&m)
				heap2, rss2 := m.HeapAlloc, vmRSS()
				stats := cs.Stats()
				n := float64(stats.TxOuts)
				b.ReportMetric(float64(heap1-heap2)/n, "heap-B/output")
				b.ReportMetric(float64(rss1-rss2)/n, "rss-B/output")
				b.ReportMetric(float64(est)/n, "estimate-B/output")
				b.ReportMetric(float64(heap1-heap2)/float64(stats.Transactions), "heap-B/txid")
				b.ReportMetric(n, "outputs")
				b.ReportMetric(n/float64(stats.Transactions), "outputs/txid")
			}
		})
	}
}

// BenchmarkConnectMainnetStore is the same replay on each persistent store
// with a 16 MiB cache and a final flush; it also reports the p95 flush time.
func BenchmarkConnectMainnetStore(b *testing.B) {
	blocks := mainnetBlocks(b)
	for _, name := range storeNames {
		b.Run(name, func(b *testing.B) {
			var flushes []time.Duration
			for b.Loop() {
				dir := filepath.Join(b.TempDir(), name)
				kv := openKV(b, name, dir)
				cs := newMainnetKV(b, kv, 16<<20)
				cs.OnFlush = func(d time.Duration) { flushes = append(flushes, d) }
				for _, raw := range blocks {
					if _, err := cs.ProcessBlock(raw); err != nil {
						b.Fatal(err)
					}
				}
				if err := cs.Flush(); err != nil {
					b.Fatal(err)
				}
				kv.Close()
			}
			b.ReportMetric(float64(len(blocks)*b.N)/b.Elapsed().Seconds(), "blocks/s")
			if len(flushes) > 0 {
				b.ReportMetric(float64(percentile(flushes, 0.95).Microseconds()), "flush-p95-µs")
			}
		})
	}
}

func percentile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}
