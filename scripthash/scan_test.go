package scripthash_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"utxod/scripthash"
	"utxod/scripthash/indextest"
	"utxod/utxo"
	"utxod/wire"
)

// parallelSource is a ParallelCoinSource over coins in txid order, cut as
// the contract says: parts of equal width on the first two txid bytes,
// worker w starting with part w, the rest handed out in ascending order.
type parallelSource struct {
	fakeSource
	parts int // 0: 8 per worker
	// done[i] is set once fn returned nil for coins[i] (if not nil).
	done []atomic.Bool
	// each, if set, is called before every coin with the number of coins
	// started so far.
	each    func(n int64)
	started atomic.Int64
	stopped atomic.Int64 // coins for which fn failed
	failAt  int          // if > 0, the coin at this index fails with errBoom
	shuffle bool         // yield at random, so workers interleave
}

var errBoom = errors.New("boom")

func high(h wire.Hash) int { return 0x100*int(h[0]) + int(h[1]) }

func (p *parallelSource) ScanCoinsParallel(workers int, fn func(int, utxo.Entry) error) (utxo.Stats, error) {
	var st utxo.Stats
	st.SetTip(p.tip.Height, p.tip.Hash)
	st.TxOuts = p.tip.TxOuts
	workers = max(workers, 1)
	n := p.parts
	if n == 0 {
		n = 8 * workers
	}
	// start[i] is the index of part i's first coin.
	start := make([]int, n+1)
	for i := range start {
		lo := i << 16 / n
		start[i] = sort.Search(len(p.coins), func(j int) bool { return high(p.coins[j].Hash) >= lo })
	}
	start[n] = len(p.coins)
	var (
		next  atomic.Int64
		stop  atomic.Bool
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			for part := w; part < n && !stop.Load(); part = workers + int(next.Add(1)-1) {
				for i := start[part]; i < start[part+1] && !stop.Load(); i++ {
					if p.each != nil {
						p.each(p.started.Add(1))
					}
					if p.shuffle && rng.IntN(64) == 0 {
						runtime.Gosched()
					}
					err := fn(w, p.coins[i])
					if err == nil && i == p.failAt && p.failAt > 0 {
						err = errBoom
					}
					if err != nil {
						p.stopped.Add(1)
						once.Do(func() { first = err })
						stop.Store(true)
						return
					}
					if p.done != nil {
						p.done[i].Store(true)
					}
				}
			}
		})
	}
	wg.Wait()
	return st, first
}

// randomCoins returns n coins in txid order paying scripts of pool, more
// often the first ones, at heights in a narrow band (so many share one)
// with up to three outputs per txid.
func randomCoins(rng *rand.Rand, n int, pool [][]byte) []utxo.Entry {
	var out []utxo.Entry
	for len(out) < n {
		var txid wire.Hash
		for i := range txid {
			txid[i] = byte(rng.Uint32())
		}
		h := uint32(100 + rng.IntN(50))
		cb := rng.IntN(20) == 0
		for v, outs := uint32(0), 1+rng.IntN(3); v < uint32(outs) && len(out) < n; v++ {
			s := pool[min(rng.IntN(len(pool)), rng.IntN(len(pool)))]
			out = append(out, utxo.Entry{
				Outpoint: utxo.Outpoint{Hash: txid, Index: v * uint32(1+rng.IntN(3))},
				Coin:     utxo.Coin{Value: int64(rng.IntN(1e8)), Height: h, Coinbase: cb, Script: s},
			})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if c := bytes.Compare(out[i].Hash[:], out[j].Hash[:]); c != 0 {
			return c < 0
		}
		return out[i].Index < out[j].Index
	})
	// Vouts within a txid must increase; drop the rare duplicates.
	return slicesCompactOutpoints(out)
}

func slicesCompactOutpoints(es []utxo.Entry) []utxo.Entry {
	out := es[:0]
	for i, e := range es {
		if i > 0 && e.Outpoint == es[i-1].Outpoint {
			continue
		}
		out = append(out, e)
	}
	return out
}

func scriptPool(n int) [][]byte {
	pool := make([][]byte, n)
	for i := range pool {
		pool[i] = append([]byte{0x00, 0x14}, bytes.Repeat([]byte{byte(i + 1)}, 20)...)
	}
	return pool
}

// randomQueries asks about every script of pool and one absent, with and
// without the script, every kind of limit, and cursors on, between and
// past rows.
func randomQueries(rng *rand.Rand, coins []utxo.Entry, pool [][]byte, n int) []scripthash.Query {
	limits := []int{0, 1, 2, 3, 7, 50, scripthash.NoLimit}
	var qs []scripthash.Query
	for len(qs) < n {
		s := []byte{0x51}
		if k := rng.IntN(len(pool) + 1); k < len(pool) {
			s = pool[k]
		}
		q := scripthash.Query{Hash: scripthash.Of(s), Limit: limits[rng.IntN(len(limits))], Summary: rng.IntN(2) == 0}
		if rng.IntN(3) == 0 {
			q.Limit = rng.IntN(500)
		}
		if rng.IntN(2) == 0 {
			q.Script = s
		}
		switch rng.IntN(4) {
		case 1, 2: // at a row (of any script)
			e := coins[rng.IntN(len(coins))]
			p := scripthash.Position{Height: e.Height, Txid: e.Hash, Vout: e.Index}
			if rng.IntN(2) == 0 {
				p.Vout++ // between rows
			}
			q.After = &p
		case 3: // past every row
			q.After = &scripthash.Position{Height: 1 << 30}
		}
		qs = append(qs, q)
	}
	return qs
}

// bruteForce answers q over the coins for which keep is true, from first
// principles; hashes are the coins' scripthashes.
func bruteForce(coins []utxo.Entry, hashes []scripthash.Hash, keep func(i int) bool, q scripthash.Query) scripthash.Answer {
	var a scripthash.Answer
	var rows []scripthash.UTXO
	for i, e := range coins {
		if !keep(i) || hashes[i] != q.Hash {
			continue
		}
		a.Count++
		a.Sum += e.Value
		p := scripthash.Position{Height: e.Height, Txid: e.Hash, Vout: e.Index}
		if q.After == nil || q.After.Less(p) {
			rows = append(rows, scripthash.UTXO{Outpoint: e.Outpoint, Value: e.Value, Height: e.Height, Coinbase: e.Coinbase})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Position().Less(rows[j].Position()) })
	if len(rows) > q.Limit {
		a.More, rows = true, rows[:q.Limit]
	}
	if len(rows) > 0 {
		a.UTXOs = rows
	}
	if !q.Summary {
		a.Count, a.Sum = 0, 0
	}
	return a
}

func all(int) bool { return true }

func hashesOf(coins []utxo.Entry) []scripthash.Hash {
	hs := make([]scripthash.Hash, len(coins))
	for i, e := range coins {
		hs[i] = scripthash.Of(e.Script)
	}
	return hs
}

func TestScanParallelConformance(t *testing.T) {
	for _, workers := range []int{2, 5} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			indextest.Run(t, func(t *testing.T, coins []utxo.Entry, tip scripthash.Tip) scripthash.Index {
				return parallelIndex{&parallelSource{fakeSource: fakeSource{coins: coins, tip: tip}}, workers}
			})
		})
	}
}

// parallelIndex is ScanWorkers as an Index.
type parallelIndex struct {
	src     scripthash.CoinSource
	workers int
}

func (s parallelIndex) Lookup(ctx context.Context, qs []scripthash.Query) (scripthash.Result, error) {
	return scripthash.ScanWorkers(ctx, s.src, qs, nil, s.workers)
}

// The parallel walk gives the ordered walk's Result, and both the brute
// force's answers, on random coin sets and queries, for several worker
// and part counts (more parts than coins' prefixes included).
func TestScanParallelMatchesOrdered(t *testing.T) {
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 11))
		pool := scriptPool(2 + rng.IntN(6))
		coins := randomCoins(rng, 500+rng.IntN(8000), pool)
		tip := scripthash.Tip{Height: 150, Hash: wire.Hash{byte(seed)}, TxOuts: uint64(len(coins))}
		qs := randomQueries(rng, coins, pool, 40+rng.IntN(60))
		hashes := hashesOf(coins)
		ordered, err := scripthash.ScanWorkers(context.Background(), &fakeSource{coins: coins, tip: tip}, qs, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range qs {
			if want := bruteForce(coins, hashes, all, q); !reflect.DeepEqual(ordered.Answers[i], want) {
				t.Fatalf("seed %d query %d (%+v): ordered walk %+v, brute force %+v", seed, i, q, ordered.Answers[i], want)
			}
		}
		for _, c := range []struct{ workers, parts int }{{2, 0}, {3, 0}, {8, 0}, {2, 1}, {4, 3}, {3, 65536}} {
			src := &parallelSource{fakeSource: fakeSource{coins: coins, tip: tip}, parts: c.parts, shuffle: true}
			got, err := scripthash.ScanWorkers(context.Background(), src, qs, nil, c.workers)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, ordered) {
				for i := range qs {
					if !reflect.DeepEqual(got.Answers[i], ordered.Answers[i]) {
						t.Errorf("seed %d, %d workers, %d parts, query %d (%+v): parallel %+v, ordered %+v",
							seed, c.workers, c.parts, i, qs[i], got.Answers[i], ordered.Answers[i])
					}
				}
				t.Fatalf("seed %d, %d workers, %d parts: parallel tip %+v scanned %d, ordered %+v %d",
					seed, c.workers, c.parts, got.Tip, got.Scanned, ordered.Tip, ordered.Scanned)
			}
		}
	}
}

// Cancelled mid-walk, the parallel scan stops every worker and returns
// ctx.Err() with the answers of exactly the coins it took in.
func TestScanParallelCancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	pool := scriptPool(4)
	coins := randomCoins(rng, 200_000, pool)
	tip := scripthash.Tip{Height: 150, TxOuts: uint64(len(coins))}
	qs := randomQueries(rng, coins, pool, 30)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := &parallelSource{fakeSource: fakeSource{coins: coins, tip: tip}, done: make([]atomic.Bool, len(coins))}
	src.each = func(n int64) {
		if n == 30_000 {
			cancel()
		}
	}
	res, err := scripthash.ScanWorkers(ctx, src, qs, nil, 4)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled scan: %v", err)
	}
	done := 0
	for i := range src.done {
		if src.done[i].Load() {
			done++
		}
	}
	// Each worker checks ctx every 8192 of its coins.
	if res.Scanned >= uint64(len(coins))/2 || res.Scanned < 30_000 || res.Scanned != uint64(done)+uint64(src.stopped.Load()) {
		t.Fatalf("scanned %d of %d: %d taken in, %d stopped on", res.Scanned, len(coins), done, src.stopped.Load())
	}
	if res.Tip != tip {
		t.Errorf("tip %+v", res.Tip)
	}
	hashes := hashesOf(coins)
	for i, q := range qs {
		if want := bruteForce(coins, hashes, func(i int) bool { return src.done[i].Load() }, q); !reflect.DeepEqual(res.Answers[i], want) {
			t.Fatalf("query %d: partial %+v, want %+v", i, res.Answers[i], want)
		}
	}
}

// A source's error stops the scan and is returned with what was gathered.
func TestScanParallelError(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	pool := scriptPool(3)
	coins := randomCoins(rng, 50_000, pool)
	src := &parallelSource{fakeSource: fakeSource{coins: coins}, failAt: len(coins) / 3}
	res, err := scripthash.ScanWorkers(context.Background(), src, randomQueries(rng, coins, pool, 5), nil, 3)
	if !errors.Is(err, errBoom) || res.Scanned == 0 || res.Scanned >= uint64(len(coins)) {
		t.Fatalf("failing source: %d scanned, %v", res.Scanned, err)
	}
}

// Parallel progress never goes down, ends at 100, and when it reports p
// percent every coin below the txid position p stands for is done.
func TestScanParallelProgress(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	pool := scriptPool(3)
	coins := randomCoins(rng, 150_000, pool)
	for _, workers := range []int{2, 3, 7} {
		src := &parallelSource{fakeSource: fakeSource{coins: coins}, done: make([]atomic.Bool, len(coins)), shuffle: true}
		var pcts []int
		var bad error
		progress := func(p int) {
			pcts = append(pcts, p)
			if p == 100 || bad != nil {
				return
			}
			// percent(low) == p implies low >= (p-0.5)*65536/100.
			low := (float64(p) - 0.5) * 65536 / 100
			for i, e := range coins {
				if float64(high(e.Hash)) >= low {
					break
				}
				if !src.done[i].Load() {
					bad = fmt.Errorf("progress %d%% with coin %d (txid %x…) not done", p, i, e.Hash[:2])
					return
				}
			}
		}
		res, err := scripthash.ScanWorkers(context.Background(), src, []scripthash.Query{{Hash: scripthash.Of(pool[0]), Limit: 1}}, progress, workers)
		if err != nil || res.Scanned != uint64(len(coins)) {
			t.Fatalf("%d workers: %d scanned, %v", workers, res.Scanned, err)
		}
		if bad != nil {
			t.Fatalf("%d workers: %v", workers, bad)
		}
		// A worker the scheduler leaves behind holds the figure back (its
		// part is not done), so only with as many workers as cores is it
		// expected to move in small steps.
		steps := 3
		if workers <= runtime.GOMAXPROCS(0) {
			steps = 10
		}
		if len(pcts) < steps || pcts[len(pcts)-1] != 100 {
			t.Fatalf("%d workers: progress %v", workers, pcts)
		}
		for i := 1; i < len(pcts); i++ {
			if pcts[i] <= pcts[i-1] {
				t.Fatalf("%d workers: progress went %d then %d: %v", workers, pcts[i-1], pcts[i], pcts)
			}
		}
	}
}

// A CoinSource without the parallel walk, or one worker, takes the ordered
// path (its progress is Core's, position by position).
func TestScanWorkersFallsBack(t *testing.T) {
	coins := indextest.Coins()
	src := &fakeSource{coins: coins, tip: indextest.Tip}
	q := []scripthash.Query{{Hash: scripthash.Of(indextest.ManyScript), Limit: 5, Summary: true}}
	a, err1 := scripthash.ScanWorkers(context.Background(), src, q, nil, 4)
	b, err2 := scripthash.ScanWorkers(context.Background(), &parallelSource{fakeSource: fakeSource{coins: coins, tip: indextest.Tip}}, q, nil, 1)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) || a.Scanned != uint64(len(coins)) {
		t.Fatalf("%+v %v / %+v %v", a, err1, b, err2)
	}
}
