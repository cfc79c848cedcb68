package follow

import (
	"context"
	"testing"

	"utxod/params"
	"utxod/testkit/corerest"
)

// BenchmarkFollowMainnet follows the mainnet sample's first 5000 blocks
// (tiny 2009 blocks: the per-block cost of following, HTTP included)
// from an in-process fake Core source into memory.
func BenchmarkFollowMainnet(b *testing.B) {
	const top = 5000
	p := params.MainNet()
	src := corerest.New(p)
	if err := src.Add(mainnet(b, top)...); err != nil {
		b.Fatal(err)
	}
	src.RevealAll()
	c := serve(b, src, p)
	b.ReportAllocs()
	for b.Loop() {
		cs := newChainstate(b, p)
		f := newFollower(b, fastConfig(c, cs))
		if err := f.CatchUp(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(top*b.N)/b.Elapsed().Seconds(), "blocks/s")
}

// BenchmarkProcessMainnet is the same blocks through ProcessBlock with no
// fetching: the floor BenchmarkFollowMainnet compares with.
func BenchmarkProcessMainnet(b *testing.B) {
	const top = 5000
	blocks := mainnet(b, top)
	b.ReportAllocs()
	for b.Loop() {
		cs := newChainstate(b, params.MainNet())
		for _, raw := range blocks[1:] {
			if _, err := cs.ProcessBlock(raw); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(top*b.N)/b.Elapsed().Seconds(), "blocks/s")
}
