package kvstore

import (
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"utxod/backends"
	"utxod/utxo"
	"utxod/wire"
)

// slowKV delays each coin read and records how many were in flight at
// once, as a disk serving a queue of reads would.
type slowKV struct {
	backends.KV
	gets, now, peak atomic.Int64
}

func (s *slowKV) Get(key []byte) ([]byte, error) {
	if len(key) > 0 && key[0] == prefixCoins {
		s.gets.Add(1)
		n := s.now.Add(1)
		for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
		}
		time.Sleep(time.Millisecond)
		defer s.now.Add(-1)
	}
	return s.KV.Get(key)
}

// TestWarmOverlapsReads has Warm read the coins a block spends (half of
// them stored, some spent twice) and its own txids with the reads
// overlapping, at most prefetchReaders at once, each txid once; connect's
// lookups that follow read nothing more and answer as a store without Warm.
func TestWarmOverlapsReads(t *testing.T) {
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			kv := openKV(t, name, filepath.Join(t.TempDir(), name))
			defer kv.Close()
			b := backends.NewBatch()
			blk := &wire.Block{Txs: make([]wire.Tx, 1, 61)}
			blk.Txs[0].TxID = wire.Hash{0xcb}
			var lookups []wire.Hash
			for i := range 60 {
				prev := wire.Hash{byte(i), 0xaa}
				if i%2 == 0 {
					rec, err := utxo.EncodeRecord(nil, []utxo.IndexedCoin{{Index: uint32(i), Coin: utxo.Coin{Value: int64(1000 + i), Height: 7, Script: []byte{0x51, byte(i)}}}})
					if err != nil {
						t.Fatal(err)
					}
					b.Put(append([]byte{prefixCoins}, prev[:]...), rec.Bytes())
				}
				tx := wire.Tx{TxID: wire.Hash{byte(i), 0xbb}, Inputs: []wire.TxIn{{PrevHash: prev}, {PrevHash: wire.Hash{byte(i % 7), 0xaa}}}}
				blk.Txs = append(blk.Txs, tx)
				lookups = append(lookups, prev, tx.TxID)
			}
			lookups = append(lookups, blk.Txs[0].TxID)
			if err := kv.Write(b, backends.Sync); err != nil {
				t.Fatal(err)
			}
			slow := &slowKV{KV: kv}
			s := openStore(t, slow, Options{CacheBytes: 1 << 20})
			plain := openStore(t, kv, Options{CacheBytes: 1 << 20})
			slow.gets.Store(0)
			s.Warm(blk)
			if got := slow.gets.Load(); got != 121 { // 60 spent, 60 + 1 own
				t.Fatalf("Warm read %d coin records, want 121", got)
			}
			if p := slow.peak.Load(); p < 2 || p > prefetchReaders {
				t.Fatalf("at most %d reads in flight, want 2 to %d", p, prefetchReaders)
			}
			for _, h := range lookups {
				got, err := s.AppendTxCoins(nil, h)
				if err != nil {
					t.Fatal(err)
				}
				want, err := plain.AppendTxCoins(nil, h)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: %v after Warm, %v without", h, got, want)
				}
			}
			if got := slow.gets.Load(); got != 121 {
				t.Fatalf("the lookups after Warm read %d more coin records", got-121)
			}
		})
	}
}
