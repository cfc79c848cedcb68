package fuzz

import (
	"bytes"
	"io"
	"testing"

	"utxod/params"
	"utxod/snapshot"
	"utxod/utxo"
	"utxod/wire"
)

// group is one transaction's coins in a seed file.
type group struct {
	txid  wire.Hash
	coins []utxo.IndexedCoin
}

// file is a snapshot of count coins in groups, written by snapshot.Writer
// (the seeds; the fuzzer damages them from there).
func file(t testing.TB, magic [4]byte, count uint64, groups ...group) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := snapshot.NewWriter(&out, snapshot.Metadata{MessageStart: magic, BaseHash: wire.Hash{9}, Coins: count})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		if err := w.WriteTx(g.txid, g.coins); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func txid(b byte) wire.Hash {
	var h wire.Hash
	h[0], h[31] = b, 0x42
	return h
}

// FuzzReader feeds arbitrary bytes to the Reader. It must never panic or
// loop; a file it reads to the end without a non-canonical report must come
// out of the Writer byte for byte (the reader and the writer agree on the
// one encoding of every coin set).
func FuzzReader(f *testing.F) {
	p := params.RegTest()
	pkh := append(append([]byte{0x76, 0xa9, 0x14}, bytes.Repeat([]byte{0x11}, 20)...), 0x88, 0xac)
	coin := func(index uint32, height uint32, value int64, script []byte) utxo.IndexedCoin {
		return utxo.IndexedCoin{Index: index, Coin: utxo.Coin{Height: height, Value: value, Script: script}}
	}
	f.Add(file(f, p.Magic, 0))
	f.Add(file(f, p.Magic, 1, group{txid(1), []utxo.IndexedCoin{coin(0, 1, 5, pkh)}}))
	f.Add(file(f, p.Magic, 3, group{txid(1), []utxo.IndexedCoin{coin(0, 1, 5, pkh), coin(300, 1, 0, nil)}},
		group{txid(2), []utxo.IndexedCoin{coin(16600, 7, 1e8, []byte{0x51, 0x52})}}))
	f.Add(file(f, params.MainNet().Magic, 1, group{txid(1), []utxo.IndexedCoin{coin(0, 1, 5, append([]byte{0x41, 0x04}, make([]byte, 65)...))}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		rd, err := snapshot.NewReader(bytes.NewReader(b), nil)
		if err != nil {
			return
		}
		var out bytes.Buffer
		w, err := snapshot.NewWriter(&out, rd.Metadata())
		if err != nil {
			t.Fatal(err)
		}
		for {
			id, coins, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return
			}
			if len(coins) == 0 {
				t.Fatal("empty group returned")
			}
			for i := 1; i < len(coins); i++ {
				if coins[i].Index <= coins[i-1].Index {
					t.Fatal("coins not in vout order")
				}
			}
			if err := w.WriteTx(id, append([]utxo.IndexedCoin(nil), coins...)); err != nil {
				t.Fatal(err)
			}
		}
		if rd.NonCanonical() != "" {
			return
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), b) {
			t.Fatalf("canonical file does not round-trip:\n in %x\nout %x", b, out.Bytes())
		}
	})
}
