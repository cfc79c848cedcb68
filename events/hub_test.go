package events

import (
	"crypto/sha256"
	"encoding/binary"
	"os"
	"runtime"
	"testing"

	"utxod/chainstate"
	"utxod/scripthash"
	"utxod/utxo"
	"utxod/wire"
)

// fakeChain is a chain at genesis with no kept blocks.
type fakeChain struct{}

func (fakeChain) Tip() chainstate.BlockInfo { return chainstate.BlockInfo{} }
func (fakeChain) Lookup(wire.Hash) (chainstate.BlockInfo, bool) {
	return chainstate.BlockInfo{}, false
}
func (fakeChain) BlockData(wire.Hash) ([]byte, error)        { return nil, nil }
func (fakeChain) SpentCoins(wire.Hash) ([]utxo.Entry, error) { return nil, nil }

// TestHubMemoryPerScript measures the heap the Hub's index and streams take
// per watched script: 10,000 streams of 100 scripts each, filters included
// (bench/results/events.md).
//
//	UTXOD_EVENTS_SCALE=1 go test -tags rocksdb -run TestHubMemoryPerScript -v ./events
func TestHubMemoryPerScript(t *testing.T) {
	if os.Getenv("UTXOD_EVENTS_SCALE") == "" {
		t.Skip("set UTXOD_EVENTS_SCALE=1")
	}
	streams, scripts := 10_000, 100
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	h := New(Config{Chain: fakeChain{}, MaxStreams: streams, MaxWatched: streams * scripts})
	defer h.Close()
	before := heap()
	var keep []*Stream
	for i := range streams {
		f := &Filter{Blocks: true}
		for j := range scripts {
			var b [8]byte
			binary.LittleEndian.PutUint32(b[:], uint32(i))
			binary.LittleEndian.PutUint32(b[4:], uint32(j))
			f.Scripts = append(f.Scripts, scripthash.Hash(sha256.Sum256(b[:])))
		}
		s, err := h.Subscribe(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		keep = append(keep, s)
	}
	after := heap()
	watched, open := h.Watched()
	t.Logf("%d streams, %d scripts: %.1f MiB, %.1f B per watched script (index, filters, streams)",
		open, watched, float64(after-before)/(1<<20), float64(after-before)/float64(watched))
	runtime.KeepAlive(keep)
}
