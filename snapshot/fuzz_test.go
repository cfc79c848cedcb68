package snapshot

import (
	"bytes"
	"io"
	"testing"

	"utxod/params"
	"utxod/utxo"
	"utxod/wire"
)

// FuzzReader feeds arbitrary bytes to the Reader. It must never panic or
// loop; a file it reads to the end without a non-canonical report must come
// out of the Writer byte for byte (the reader and the writer agree on the
// one encoding of every coin set).
func FuzzReader(f *testing.F) {
	p := params.RegTest()
	pkh := p2pkh(bytes.Repeat([]byte{0x11}, 20))
	f.Add(craft(p.Magic, wire.Hash{9}, 0))
	f.Add(craft(p.Magic, wire.Hash{9}, 1, craftGroup{txid(1), []craftCoin{{0, coreCoin(1, 5, pkh)}}}))
	f.Add(craft(p.Magic, wire.Hash{9}, 3, craftGroup{txid(1), []craftCoin{{0, coreCoin(1, 5, pkh)}, {300, coreCoin(1, 0, nil)}}},
		craftGroup{txid(2), []craftCoin{{16600, coreCoin(7, 1e8, []byte{0x51, 0x52})}}}))
	f.Add(craft(params.MainNet().Magic, wire.Hash{9}, 1, craftGroup{txid(1), []craftCoin{{0, coreCoin(1, 5, append([]byte{0x41, 0x04}, make([]byte, 65)...))}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		rd, err := NewReader(bytes.NewReader(b), nil)
		if err != nil {
			return
		}
		var out bytes.Buffer
		w, err := NewWriter(&out, rd.Metadata())
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
