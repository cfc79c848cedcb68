package fuzz

import (
	"bufio"
	"os"
	"sync"
	"testing"

	"utxod/follow"
	"utxod/params"
	"utxod/wire"
)

var mainnetBlocks = sync.OnceValues(func() ([][]byte, error) {
	f, err := os.Open("../../testdata/mainnet/blk_0_to_14131.dat")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return wire.ReadAllBlocks(bufio.NewReader(f), params.MainNet().Magic)
})

// mainnet returns the bundled mainnet sample's blocks 0..top (from btcd's
// blockchain/testdata, see testdata/README).
func mainnet(t testing.TB, top int) [][]byte {
	t.Helper()
	blocks, err := mainnetBlocks()
	if err != nil {
		t.Fatal(err)
	}
	return blocks[:top+1]
}

func headersOf(blocks [][]byte) []byte {
	var b []byte
	for _, raw := range blocks {
		b = append(b, raw[:wire.HeaderSize]...)
	}
	return b
}

func FuzzParseHeaders(f *testing.F) {
	blocks := mainnet(f, 5)
	f.Add(headersOf(blocks[1:4]), 3)
	f.Add(headersOf(blocks[1:2])[:79], 1)
	f.Add([]byte{}, 5)
	from := wire.DoubleSHA256(blocks[1][:wire.HeaderSize])
	p := params.MainNet()
	f.Fuzz(func(t *testing.T, body []byte, count int) {
		if count < 1 || count > follow.MaxHeaders {
			return
		}
		hs, err := follow.ParseHeaders(body, from, count, p)
		if err != nil {
			return
		}
		// Whatever is accepted starts at from and chains.
		if len(hs)*wire.HeaderSize != len(body) || (len(hs) > 0 && hs[0].Hash != from) {
			t.Fatalf("accepted %d headers from %d bytes", len(hs), len(body))
		}
		for i := 1; i < len(hs); i++ {
			if hs[i].PrevBlock != hs[i-1].Hash {
				t.Fatal("accepted a broken chain")
			}
		}
	})
}

func FuzzCheckBlock(f *testing.F) {
	blocks := mainnet(f, 200)
	want := wire.DoubleSHA256(blocks[170][:wire.HeaderSize])
	f.Add(blocks[170])
	f.Add(blocks[170][:100])
	f.Add(blocks[171])
	f.Fuzz(func(t *testing.T, raw []byte) {
		if follow.CheckBlock(raw, want) == nil {
			if wire.DoubleSHA256(raw[:wire.HeaderSize]) != want {
				t.Fatal("accepted another block")
			}
			if _, err := wire.ParseBlock(raw); err != nil {
				t.Fatal("accepted a block that does not parse")
			}
		}
	})
}
