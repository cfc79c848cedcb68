package chainstate

import (
	"testing"

	"utxod/store"
)

// BenchmarkConnectMainnet connects mainnet 0–14131 from genesis with full
// validation into the in-memory store (blocks/s per run).
func BenchmarkConnectMainnet(b *testing.B) {
	blocks := mainnetBlocks(b)
	b.ReportAllocs()
	for b.Loop() {
		cs := newMainnet(b, store.NewMem())
		for _, raw := range blocks {
			if _, err := cs.ProcessBlock(raw); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(blocks)*b.N)/b.Elapsed().Seconds(), "blocks/s")
}
