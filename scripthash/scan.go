package scripthash

import (
	"container/heap"
	"context"
	"errors"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"utxod/utxo"
	"utxod/wire"
)

// ProgressFunc receives a scan's progress in percent, as Core's
// scantxoutset estimates it from the position in txid order.
type ProgressFunc func(percent int)

// errStop ends a scan from inside the callback.
var errStop = errors.New("scripthash: scan stopped")

// Scan answers qs with one pass over src: the full-scan implementation of
// Index.Lookup. A ParallelCoinSource is walked on GOMAXPROCS goroutines.
// When ctx ends it returns the partial Result (what the coins visited so
// far gave, Core's "success": false) with ctx.Err(). progress (may be nil)
// is called as the scan advances, never concurrently, with percentages
// that never go down.
func Scan(ctx context.Context, src CoinSource, qs []Query, progress ProgressFunc) (Result, error) {
	return ScanWorkers(ctx, src, qs, progress, runtime.GOMAXPROCS(0))
}

// ScanWorkers is Scan on up to workers goroutines. With workers <= 1, or a
// src that is not a ParallelCoinSource, it is the ordered walk of
// ScanCoins, the control arm the parallel walk is tested against: the
// answers are the same either way.
func ScanWorkers(ctx context.Context, src CoinSource, qs []Query, progress ProgressFunc, workers int) (Result, error) {
	if err := checkQueries(qs); err != nil {
		return Result{}, err
	}
	m := newMatcher(qs)
	if ps, ok := src.(ParallelCoinSource); ok && workers > 1 {
		return m.scanParallel(ctx, ps, workers, progress)
	}
	return m.scan(ctx, src, progress)
}

// matcher finds the coins qs ask for: by script bytes when a query gives
// them, else by scripthash. It is read-only during a scan, so parallel
// workers share it.
type matcher struct {
	qs       []Query
	byScript map[string][]int
	byHash   map[Hash][]int
}

func newMatcher(qs []Query) *matcher {
	m := &matcher{qs: qs, byScript: make(map[string][]int), byHash: make(map[Hash][]int)}
	for i := range qs {
		if qs[i].Script != nil {
			m.byScript[string(qs[i].Script)] = append(m.byScript[string(qs[i].Script)], i)
		} else {
			m.byHash[qs[i].Hash] = append(m.byHash[qs[i].Hash], i)
		}
	}
	return m
}

// collectors returns one empty collector per query.
func (m *matcher) collectors() []collector {
	cols := make([]collector, len(m.qs))
	for i := range cols {
		cols[i].q = &m.qs[i]
	}
	return cols
}

// add records e in the collector of every query it matches.
func (m *matcher) add(cols []collector, e utxo.Entry) {
	if len(m.byScript) > 0 {
		for _, i := range m.byScript[string(e.Script)] {
			cols[i].add(e)
		}
	}
	if len(m.byHash) > 0 {
		for _, i := range m.byHash[Of(e.Script)] {
			cols[i].add(e)
		}
	}
}

// scan is the ordered walk; its progress is Core's (FindScriptPubKey): the
// first two txid bytes of the coin reached.
func (m *matcher) scan(ctx context.Context, src CoinSource, progress ProgressFunc) (Result, error) {
	cols := m.collectors()
	var scanned uint64
	lastPct := -1
	stats, err := src.ScanCoins(func(e utxo.Entry) error {
		scanned++
		if scanned%8192 == 0 && ctx.Err() != nil {
			return errStop
		}
		if progress != nil && scanned%256 == 0 {
			if pct := percent(txidHigh(e.Hash)); pct != lastPct {
				lastPct = pct
				progress(pct)
			}
		}
		m.add(cols, e)
		return nil
	})
	return m.result(ctx, stats, cols, scanned, err, progress)
}

// worker is one goroutine's share of a parallel scan, padded so that two
// workers' counters, written for every coin, do not share a cache line.
type worker struct {
	cols    []collector
	scanned uint64
	// reached is 1 + the first two txid bytes of a coin the worker
	// visited lately (0 before its first).
	reached atomic.Uint32
	_       [128]byte
}

// scanParallel walks src on workers goroutines, each with its own
// collectors, and merges them: counts and sums add up, and the Limit+1
// smallest positions of the union are among the Limit+1 smallest of the
// parts, so the answers are the ordered walk's.
func (m *matcher) scanParallel(ctx context.Context, src ParallelCoinSource, workers int, progress ProgressFunc) (Result, error) {
	ws := make([]worker, workers)
	for w := range ws {
		ws[w].cols = m.collectors()
	}
	pr := parallelProgress{fn: progress, ws: ws}
	pr.last.Store(-1)
	stats, err := src.ScanCoinsParallel(workers, func(w int, e utxo.Entry) error {
		s := &ws[w]
		s.scanned++
		if s.scanned%8192 == 0 && ctx.Err() != nil {
			return errStop
		}
		if progress != nil && (s.scanned == 1 || s.scanned%256 == 0) {
			s.reached.Store(1 + uint32(txidHigh(e.Hash)))
			pr.update()
		}
		m.add(s.cols, e)
		return nil
	})
	cols, scanned := ws[0].cols, ws[0].scanned
	for w := 1; w < len(ws); w++ {
		scanned += ws[w].scanned
		for i := range cols {
			cols[i].merge(&ws[w].cols[i])
		}
	}
	return m.result(ctx, stats, cols, scanned, err, progress)
}

// result builds the Result of a walk that ended with err.
func (m *matcher) result(ctx context.Context, stats utxo.Stats, cols []collector, scanned uint64, err error, progress ProgressFunc) (Result, error) {
	res := Result{
		Tip:     Tip{Height: stats.Height, Hash: stats.BestBlock, TxOuts: stats.TxOuts},
		Answers: make([]Answer, len(cols)),
		Scanned: scanned,
	}
	for i := range cols {
		res.Answers[i] = cols[i].answer()
	}
	if errors.Is(err, errStop) {
		return res, ctx.Err()
	}
	if err != nil {
		return res, err
	}
	if progress != nil {
		progress(100)
	}
	return res, nil
}

// parallelProgress is Core's progress estimate for a parallel walk, taken
// at the lowest txid the workers have reached (0 until every worker has
// reached a coin): below it every coin is done, as the parts are handed
// out in ascending order (ParallelCoinSource). It lags the coins done by
// about the parts in flight and never goes down.
type parallelProgress struct {
	fn   ProgressFunc
	ws   []worker
	mu   sync.Mutex   // serialises fn
	last atomic.Int32 // the last percent reported, -1 before any
}

// update reports the progress if it went up.
func (p *parallelProgress) update() {
	low := 1 << 16
	for w := range p.ws {
		low = min(low, int(p.ws[w].reached.Load())-1)
	}
	low = max(low, 0)
	pct := percent(low)
	if int32(pct) <= p.last.Load() {
		return
	}
	p.mu.Lock()
	if int32(pct) > p.last.Load() {
		p.last.Store(int32(pct))
		p.fn(pct)
	}
	p.mu.Unlock()
}

// txidHigh is the first two bytes of a txid, Core's progress position.
func txidHigh(h wire.Hash) int { return 0x100*int(h[0]) + int(h[1]) }

// percent is Core's progress in percent at position high.
func percent(high int) int { return int(float64(high)*100/65536 + 0.5) }

// collector keeps, for one query, the count and sum of every match and the
// Limit+1 smallest positions after Query.After (a max-heap), so a scan's
// memory is bounded by the page, not by the scripthash's outputs.
type collector struct {
	q     *Query
	count uint64
	sum   int64
	rows  rowHeap
}

func (c *collector) add(e utxo.Entry) {
	c.count++
	c.sum += e.Value
	u := UTXO{Outpoint: e.Outpoint, Value: e.Value, Height: e.Height, Coinbase: e.Coinbase}
	if c.q.After != nil && !c.q.After.Less(u.Position()) {
		return
	}
	c.keep(u)
}

// merge adds what another collector of the same query gathered.
func (c *collector) merge(o *collector) {
	c.count += o.count
	c.sum += o.sum
	for _, u := range o.rows {
		c.keep(u)
	}
}

// keep adds a row after Query.After to the page being collected.
func (c *collector) keep(u UTXO) {
	n := c.q.Limit
	if n < NoLimit {
		n++ // one more, to know whether there are more
	}
	if len(c.rows) < n {
		heap.Push(&c.rows, u)
		return
	}
	if u.Position().Less(c.rows[0].Position()) {
		c.rows[0] = u
		heap.Fix(&c.rows, 0)
	}
}

func (c *collector) answer() Answer {
	rows := []UTXO(c.rows)
	sort.Slice(rows, func(i, j int) bool { return rows[i].Position().Less(rows[j].Position()) })
	a := Answer{}
	if len(rows) > c.q.Limit {
		a.More = true
		rows = rows[:c.q.Limit]
	}
	if len(rows) > 0 {
		a.UTXOs = rows
	}
	if c.q.Summary {
		a.Count, a.Sum = c.count, c.sum
	}
	return a
}

// rowHeap is a max-heap by Position.
type rowHeap []UTXO

func (h rowHeap) Len() int           { return len(h) }
func (h rowHeap) Less(i, j int) bool { return h[j].Position().Less(h[i].Position()) }
func (h rowHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rowHeap) Push(x any)        { *h = append(*h, x.(UTXO)) }
func (h *rowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
