package validate

import (
	"bytes"
	"math/big"
	"runtime"
	"slices"
	"testing"

	"utxod/params"
	"utxod/wire"
)

// TestLoadCompact: loading a persisted index, entries in hash order as a
// store walks them, allocates no object per node and holds about a node's
// size per header (before the arena, each node cost three allocations and
// ~600 bytes of heap at the peak of a 880k-header open).
func TestLoadCompact(t *testing.T) {
	p := params.RegTest()
	const n = 100_000
	g := NewBlockIndex(p).Genesis()
	entries := make([]IndexEntry, 0, n+100)
	prev, tm := g.Hash, g.Header.Time
	var fork wire.Hash
	for i := range n {
		tm += 600
		h := wire.Header{Version: 4, PrevBlock: prev, Time: tm, Bits: p.PowLimitBits, Nonce: uint32(i)}
		entries = append(entries, IndexEntry{Header: h, Status: StatusHeaderValid})
		prev = h.BlockHash()
		if i == n/2 {
			fork = prev
		}
	}
	for i := range 100 { // a side branch from the middle
		h := wire.Header{Version: 4, PrevBlock: fork, Time: tm, Bits: p.PowLimitBits, Nonce: uint32(n + i)}
		entries = append(entries, IndexEntry{Header: h, Status: StatusHeaderValid})
		fork = h.BlockHash()
	}
	slices.SortFunc(entries, func(a, b IndexEntry) int {
		x, y := a.Header.BlockHash(), b.Header.BlockHash()
		return bytes.Compare(x[:], y[:])
	})

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	bi := NewBlockIndex(p)
	if err := bi.InsertAll(entries); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if bi.Len() != n+101 || bi.BestHeader().Hash != prev || bi.BestHeader().Height != n {
		t.Fatalf("%d nodes, best header %s at %d; want %d, %s at %d", bi.Len(), bi.BestHeader().Hash, bi.BestHeader().Height, n+101, prev, n)
	}
	if want := WorkFromBig(big.NewInt(2 * (n + 1))); bi.BestHeader().ChainWork != want {
		t.Errorf("best header's chain work %s, want %s (2 a regtest block)", bi.BestHeader().ChainWork, want)
	}
	allocs := after.Mallocs - before.Mallocs
	perNode := float64(after.HeapAlloc-before.HeapAlloc) / float64(bi.Len())
	t.Logf("%d allocations, %.0f bytes of heap a node", allocs, perNode)
	if allocs > n/100 {
		t.Errorf("%d allocations for %d nodes: more than one per 100", allocs, bi.Len())
	}
	if perNode > 250 {
		t.Errorf("%.0f bytes of heap a node, want ≤ 250", perNode)
	}
	runtime.KeepAlive(bi)
	runtime.KeepAlive(entries) // live through both readings, so the difference is the index
}
