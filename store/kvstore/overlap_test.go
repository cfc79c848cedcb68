package kvstore

import (
	"bytes"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"utxod/backends"
	"utxod/utxo"
	"utxod/wire"
)

// heldKV holds every read of one key until release is closed, telling
// started when one begins.
type heldKV struct {
	backends.KV
	key     []byte
	started chan struct{}
	release chan struct{}
}

func (h *heldKV) Get(key []byte) ([]byte, error) {
	if bytes.Equal(key, h.key) {
		h.started <- struct{}{}
		<-h.release
	}
	return h.KV.Get(key)
}

// TestLookupsOverlapReads: while the store's read of one lookup's miss
// waits (on the disk, or a first touch of a mapped page), lookups of other
// coins, cached or not, are answered, through every read method of the
// chainstate's read lock; two lookups of the held coin read it at once,
// both answer it, and it is cached once.
func TestLookupsOverlapReads(t *testing.T) {
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			kv := openKV(t, name, filepath.Join(t.TempDir(), name))
			defer kv.Close()
			b := backends.NewBatch()
			var txids []wire.Hash
			for i := range 4 {
				h := wire.Hash{byte(i), 0x77}
				putRecord(t, b, h, utxo.IndexedCoin{Index: 1, Coin: utxo.Coin{Value: int64(500 + i), Height: 3, Script: []byte{0x51, byte(i)}}})
				txids = append(txids, h)
			}
			if err := kv.Write(b, backends.Sync); err != nil {
				t.Fatal(err)
			}
			held := &heldKV{KV: kv, key: hashKey(prefixCoins, txids[0]), started: make(chan struct{}, 2), release: make(chan struct{})}
			s := openStore(t, held, Options{CacheBytes: 1 << 20})
			if _, _, err := s.Coin(utxo.Outpoint{Hash: txids[1], Index: 1}); err != nil { // cached
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			got := make([]utxo.Coin, 2)
			for i := range got {
				wg.Go(func() {
					c, ok, err := s.Coin(utxo.Outpoint{Hash: txids[0], Index: 1})
					if err != nil || !ok {
						t.Errorf("held lookup %d: %v, %v", i, ok, err)
					}
					got[i] = c
				})
				select {
				case <-held.started:
				case <-time.After(10 * time.Second):
					t.Fatalf("held lookup %d did not read", i)
				}
			}
			answered := make(chan struct{})
			go func() {
				defer close(answered)
				if c, ok, err := s.Coin(utxo.Outpoint{Hash: txids[1], Index: 1}); err != nil || !ok || c.Value != 501 {
					t.Errorf("cached lookup: %+v, %v, %v", c, ok, err)
				}
				if c, ok, err := s.Coin(utxo.Outpoint{Hash: txids[2], Index: 1}); err != nil || !ok || c.Value != 502 {
					t.Errorf("uncached lookup: %+v, %v, %v", c, ok, err)
				}
				if ok, err := s.AnyUnspent(txids[3], 2); err != nil || !ok {
					t.Errorf("AnyUnspent: %v, %v", ok, err)
				}
				if cs, err := s.AppendTxCoins(nil, wire.Hash{0xee}); err != nil || len(cs) != 0 {
					t.Errorf("AppendTxCoins of an absent txid: %v, %v", cs, err)
				}
				if cs, _, err := s.AppendTxCoinsArena(nil, nil, txids[3]); err != nil || len(cs) != 1 || cs[0].Coin.Value != 503 {
					t.Errorf("AppendTxCoinsArena: %+v, %v", cs, err)
				}
			}()
			select {
			case <-answered:
			case <-time.After(10 * time.Second):
				t.Fatal("lookups of other coins waited for a read of the held one")
			}
			close(held.release)
			wg.Wait()
			for i, c := range got {
				if c.Value != 500 || !bytes.Equal(c.Script, []byte{0x51, 0}) {
					t.Fatalf("held lookup %d answered %+v", i, c)
				}
			}
			if n, err := s.LiveOutputs(txids[0]); err != nil || n != 1 {
				t.Fatalf("LiveOutputs of the held coin's txid: %d, %v", n, err)
			}
			// The same lookups one after another cache as much.
			plain := openStore(t, kv, Options{CacheBytes: 1 << 20})
			for _, h := range append(txids, wire.Hash{0xee}) {
				if _, err := plain.AppendTxCoins(nil, h); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := s.CacheBytes(), plain.CacheBytes(); got != want {
				t.Fatalf("cache holds %d bytes, %d after the same lookups one at a time", got, want)
			}
		})
	}
}
