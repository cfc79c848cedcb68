package kvstore

import (
	"path/filepath"
	"testing"

	"utxod/utxo"
	"utxod/wire"
)

// TestAnyUnspentMatchesCoin checks the one-lookup BIP30 answer against
// Core's per-output HaveCoin loop (Coin of every index below n), with the
// record in the cache and, after a flush empties it, read from the store.
func TestAnyUnspentMatchesCoin(t *testing.T) {
	a, b := wire.Hash{0xa1}, wire.Hash{0xb2}
	coin := utxo.Coin{Value: 1000, Height: 7, Script: []byte{0x51}}
	d := &utxo.Delta{Created: []utxo.Entry{
		{Outpoint: utxo.Outpoint{Hash: a, Index: 1}, Coin: coin},
		{Outpoint: utxo.Outpoint{Hash: a, Index: 4}, Coin: coin},
	}}
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			s := openStore(t, openKV(t, name, dir), Options{CacheBytes: 1}) // a budget of one byte: every flush empties the cache
			defer s.Close()
			if err := s.Connect(wire.Hash{1}, d); err != nil {
				t.Fatal(err)
			}
			check := func(when string) {
				for _, txid := range []wire.Hash{a, b} {
					for n := uint32(0); n <= 6; n++ {
						want := false
						for i := uint32(0); i < n; i++ {
							_, found, err := s.Coin(utxo.Outpoint{Hash: txid, Index: i})
							if err != nil {
								t.Fatal(err)
							}
							want = want || found
						}
						got, err := s.AnyUnspent(txid, n)
						if err != nil || got != want {
							t.Fatalf("%s: AnyUnspent(%x…, %d) = %v, %v; want %v", when, txid[:2], n, got, err, want)
						}
					}
				}
			}
			check("cached")
			flush(t, s)
			check("read from the store")
		})
	}
}
