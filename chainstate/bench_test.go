package chainstate

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkConnectMainnet connects mainnet 0–14131 from genesis with full
// validation into the in-memory store (blocks/s per run).
func BenchmarkConnectMainnet(b *testing.B) {
	blocks := mainnetBlocks(b)
	b.ReportAllocs()
	for b.Loop() {
		cs := newMainnet(b, NewMemStore())
		for _, raw := range blocks {
			if _, err := cs.ProcessBlock(raw); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(blocks)*b.N)/b.Elapsed().Seconds(), "blocks/s")
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
	s := append([]time.Duration(nil), d...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[int(q*float64(len(s)-1))]
}
