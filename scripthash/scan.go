package scripthash

import (
	"container/heap"
	"context"
	"errors"
	"sort"

	"utxod/utxo"
)

// ProgressFunc receives a scan's progress in percent, as Core's
// scantxoutset estimates it from the position in txid order.
type ProgressFunc func(percent int)

// errStop ends a scan from inside the callback.
var errStop = errors.New("scripthash: scan stopped")

// Scan answers qs with one pass over src: the full-scan implementation of
// Index.Lookup. When ctx ends it returns the partial Result (what the coins
// visited so far gave, Core's "success": false) with ctx.Err().
// progress (may be nil) is called as the scan advances.
func Scan(ctx context.Context, src CoinSource, qs []Query, progress ProgressFunc) (Result, error) {
	if err := checkQueries(qs); err != nil {
		return Result{}, err
	}
	cols := make([]collector, len(qs))
	byScript := make(map[string][]int)
	byHash := make(map[Hash][]int)
	for i := range qs {
		cols[i].q = &qs[i]
		if qs[i].Script != nil {
			byScript[string(qs[i].Script)] = append(byScript[string(qs[i].Script)], i)
		} else {
			byHash[qs[i].Hash] = append(byHash[qs[i].Hash], i)
		}
	}
	var scanned uint64
	lastPct := -1
	stats, err := src.ScanCoins(func(e utxo.Entry) error {
		scanned++
		if scanned%8192 == 0 && ctx.Err() != nil {
			return errStop
		}
		if progress != nil && scanned%256 == 0 {
			// Core's FindScriptPubKey: the first two txid bytes.
			high := 0x100*int(e.Hash[0]) + int(e.Hash[1])
			if pct := int(float64(high)*100/65536 + 0.5); pct != lastPct {
				lastPct = pct
				progress(pct)
			}
		}
		if len(byScript) > 0 {
			for _, i := range byScript[string(e.Script)] {
				cols[i].add(e)
			}
		}
		if len(byHash) > 0 {
			for _, i := range byHash[Of(e.Script)] {
				cols[i].add(e)
			}
		}
		return nil
	})
	res := Result{
		Tip:     Tip{Height: stats.Height, Hash: stats.BestBlock, TxOuts: stats.TxOuts},
		Answers: make([]Answer, len(qs)),
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
	keep := c.q.Limit
	if keep < NoLimit {
		keep++ // one more, to know whether there are more
	}
	if len(c.rows) < keep {
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
