package kvstore

import (
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"utxod/store"
	"utxod/utxo"
	"utxod/wire"
)

// TestAppendTxCoinsArenaMatchesCoin checks both per-transaction reads
// against Coin of every index, with the records cached and, after a flush
// empties the cache, read from the store by several goroutines at once
// (misses insert into the cache under rmu while others decode).
func TestAppendTxCoinsArenaMatchesCoin(t *testing.T) {
	var d utxo.Delta
	var txids []wire.Hash
	for i := range 64 {
		txid := wire.Hash{0xc0, byte(i)}
		txids = append(txids, txid)
		for j := range uint32(i%5 + 1) {
			if (i+int(j))%3 == 2 {
				continue // a gap in the indexes
			}
			script := []byte{0x76, 0xa9, 0x14, byte(i), 19: byte(j), 22: 0x88, 23: 0xac} // P2PKH: stored compressed
			if j == 1 {
				script = []byte{0x6a, byte(i), byte(j)}
			}
			d.Created = append(d.Created, utxo.Entry{Outpoint: utxo.Outpoint{Hash: txid, Index: j},
				Coin: utxo.Coin{Value: int64(1000*i) + int64(j), Height: uint32(i), Coinbase: i == 0, Script: script}})
		}
	}
	txids = append(txids, wire.Hash{0xdd}) // none
	// What each read must give: the coins connected, in index order.
	created := make(map[wire.Hash][]utxo.IndexedCoin)
	for _, e := range d.Created {
		created[e.Hash] = append(created[e.Hash], utxo.IndexedCoin{Index: e.Index, Coin: e.Coin})
	}
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			s := openStore(t, openKV(t, name, filepath.Join(t.TempDir(), name)), Options{CacheBytes: 1}) // every flush empties the cache
			defer s.Close()
			if err := s.Connect(wire.Hash{1}, &d); err != nil {
				t.Fatal(err)
			}
			want := func(txid wire.Hash) []utxo.IndexedCoin {
				var out []utxo.IndexedCoin
				for i := range uint32(6) {
					c, found, err := s.Coin(utxo.Outpoint{Hash: txid, Index: i})
					if err != nil {
						t.Fatal(err)
					}
					if found {
						c.Script = append([]byte(nil), c.Script...)
						out = append(out, utxo.IndexedCoin{Index: i, Coin: c})
					}
				}
				if !reflect.DeepEqual(out, created[txid]) {
					t.Fatalf("Coin of each index of %x: %v; connected %v", txid[:2], out, created[txid])
				}
				return out
			}
			check := func(when string, concurrent bool) {
				wants := make(map[wire.Hash][]utxo.IndexedCoin)
				for _, txid := range txids {
					wants[txid] = want(txid)
					got, err := s.AppendTxCoins(nil, txid)
					if err != nil || !reflect.DeepEqual(got, wants[txid]) {
						t.Fatalf("%s: AppendTxCoins(%x) = %v, %v; want %v", when, txid[:2], got, err, wants[txid])
					}
				}
				if concurrent {
					// Empty the cache again, so that the goroutines miss.
					s.coins.reset()
				}
				var wg sync.WaitGroup
				for range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var arena []byte
						var got []utxo.IndexedCoin
						for _, txid := range txids {
							var err error
							got, arena, err = s.AppendTxCoinsArena(got[:0], arena, txid)
							if err != nil || (len(got) > 0 || len(wants[txid]) > 0) && !reflect.DeepEqual(got, wants[txid]) {
								t.Errorf("%s: AppendTxCoinsArena(%x) = %v, %v; want %v", when, txid[:2], got, err, wants[txid])
								return
							}
						}
					}()
				}
				wg.Wait()
			}
			check("cached", false)
			flush(t, s)
			check("read from the store", true)
		})
	}
}

// flush flushes s at tip 1 (block hash 01…) and requires the cache empty:
// tests give the store a budget of one byte.
func flush(t *testing.T, s *Store) {
	t.Helper()
	var st store.Stats
	st.SetTip(1, wire.Hash{1})
	if err := s.Flush(nil, &st); err != nil {
		t.Fatal(err)
	}
	if s.coins.bytes() != 0 {
		t.Fatal("the flush left records in the cache")
	}
}
