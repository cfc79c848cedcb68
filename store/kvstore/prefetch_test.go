package kvstore

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"utxod/backends"
	"utxod/utxo"
	"utxod/wire"
)

// slowKV delays each coin read and records how many were in flight at
// once, as a disk serving a queue of reads would, and the coin keys read
// and advised (backends.Advisor).
type slowKV struct {
	backends.KV
	gets, now, peak atomic.Int64
	mu              sync.Mutex
	read, advised   [][]byte
}

func (s *slowKV) Advise(keys [][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		s.advised = append(s.advised, bytes.Clone(k))
	}
}

func (s *slowKV) Get(key []byte) ([]byte, error) {
	if len(key) > 0 && key[0] == prefixCoins {
		s.mu.Lock()
		s.read = append(s.read, bytes.Clone(key))
		s.mu.Unlock()
		s.gets.Add(1)
		n := s.now.Add(1)
		for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
		}
		time.Sleep(time.Millisecond)
		defer s.now.Add(-1)
	}
	return s.KV.Get(key)
}

// TestWarmOverlapsReads has Warm start reading the coins a block spends
// (half of them stored, some spent twice) and its own txids, with the reads
// overlapping, at most prefetchReaders at once, each txid once, every key
// advised to the store beforehand or alongside; connect's
// lookups that follow wait for those reads, read nothing more and answer as
// a store without Warm.
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
					putRecord(t, b, prev, utxo.IndexedCoin{Index: uint32(i), Coin: utxo.Coin{Value: int64(1000 + i), Height: 7, Script: []byte{0x51, byte(i)}}})
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
			s.Warm(blk, true)
			for _, h := range lookups {
				sameTxCoins(t, h, s, plain, "after Warm", "without")
			}
			if got := slow.gets.Load(); got != 121 { // 60 spent, 60 + 1 own
				t.Fatalf("Warm and the lookups read %d coin records, want 121", got)
			}
			if p := slow.peak.Load(); p < 2 || p > prefetchReaders {
				t.Fatalf("at most %d reads in flight, want 2 to %d", p, prefetchReaders)
			}
			// A store that takes advice is told every key Warm reads, once.
			slices.SortFunc(slow.read, bytes.Compare)
			slices.SortFunc(slow.advised, bytes.Compare)
			if !slices.EqualFunc(slow.read, slow.advised, bytes.Equal) {
				t.Fatalf("advised %d keys, read %d, not the same", len(slow.advised), len(slow.read))
			}
		})
	}
}

// badReadKV fails every read of one coin key.
type badReadKV struct {
	backends.KV
	bad  []byte
	gets atomic.Int64
}

var errRead = errors.New("read failed")

func (f *badReadKV) Get(key []byte) ([]byte, error) {
	if len(key) > 0 && key[0] == prefixCoins {
		f.gets.Add(1)
	}
	if bytes.Equal(key, f.bad) {
		return nil, errRead
	}
	return f.KV.Get(key)
}

// TestWarmReadFails: a prefetched read that failed is not cached; the
// lookup reads again and reports the error, and the other lookups answer.
func TestWarmReadFails(t *testing.T) {
	kv := openKV(t, "pebble", filepath.Join(t.TempDir(), "pebble"))
	defer kv.Close()
	bad := wire.Hash{0x0b}
	f := &badReadKV{KV: kv, bad: hashKey(prefixCoins, bad)}
	s := openStore(t, f, Options{CacheBytes: 1 << 20})
	blk := &wire.Block{Txs: []wire.Tx{{TxID: wire.Hash{0xcb}}, {TxID: wire.Hash{0x01}, Inputs: []wire.TxIn{{PrevHash: bad}, {PrevHash: wire.Hash{0x0c}}}}}}
	s.Warm(blk, true)
	if _, err := s.AppendTxCoins(nil, bad); !errors.Is(err, errRead) {
		t.Fatalf("lookup after a failed read: %v, want %v", err, errRead)
	}
	if _, err := s.AppendTxCoins(nil, bad); !errors.Is(err, errRead) {
		t.Fatalf("second lookup: %v, want %v (the error is not cached)", err, errRead)
	}
	for _, h := range []wire.Hash{{0x0c}, {0x01}, {0xcb}} {
		if got, err := s.AppendTxCoins(nil, h); err != nil || len(got) != 0 {
			t.Fatalf("%s: %v, %v; want no coin", h, got, err)
		}
	}
	if got := f.gets.Load(); got != 6 { // 4 prefetched, 2 reads again of bad
		t.Fatalf("%d coin reads, want 6", got)
	}
}

// TestWarmSettles: reads Warm started that no lookup took are dropped by
// the next Warm and by a flush; the lookups after read the store again.
func TestWarmSettles(t *testing.T) {
	kv := openKV(t, "pebble", filepath.Join(t.TempDir(), "pebble"))
	defer kv.Close()
	slow := &slowKV{KV: kv}
	s := openStore(t, slow, Options{CacheBytes: 1 << 20})
	blk := &wire.Block{Txs: []wire.Tx{{TxID: wire.Hash{0xcb}}, {TxID: wire.Hash{0x01}, Inputs: []wire.TxIn{{PrevHash: wire.Hash{0x0b}}}}}}
	s.Warm(blk, true)
	s.Warm(blk, true)
	if err := s.Flush(nil, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(s.coins.fly.slot); n != 0 {
		t.Fatalf("%d reads still in flight after a flush", n)
	}
	if got := slow.gets.Load(); got != 6 { // 3 txids, warmed twice
		t.Fatalf("%d coin reads, want 6", got)
	}
	if _, err := s.AppendTxCoins(nil, wire.Hash{0x0b}); err != nil {
		t.Fatal(err)
	}
	if got := slow.gets.Load(); got != 7 {
		t.Fatalf("%d coin reads after a lookup, want 7", got)
	}
}

// TestFreshConnectReadsNoOwnTxid: where Core's BIP30 check is implied
// (Warm without own, a Fresh delta), a connect reads the records its inputs
// spend and nothing for its own txids, and leaves the records a connect
// that read them leaves.
func TestFreshConnectReadsNoOwnTxid(t *testing.T) {
	kv := openKV(t, "pebble", filepath.Join(t.TempDir(), "pebble"))
	defer kv.Close()
	b := backends.NewBatch()
	blk := &wire.Block{Txs: []wire.Tx{{TxID: wire.Hash{0xcb}}}}
	d := &utxo.Delta{}
	coin := func(i int) utxo.Coin {
		return utxo.Coin{Value: int64(1000 + i), Height: 7, Script: []byte{0x51, byte(i)}}
	}
	for i := range 20 {
		prev := wire.Hash{byte(i), 0xaa}
		putRecord(t, b, prev, utxo.IndexedCoin{Index: 0, Coin: coin(i)}, utxo.IndexedCoin{Index: 1, Coin: coin(i + 100)})
		tx := wire.Tx{TxID: wire.Hash{byte(i), 0xbb}, Inputs: []wire.TxIn{{PrevHash: prev}}}
		blk.Txs = append(blk.Txs, tx)
		d.Spent = append(d.Spent, utxo.Entry{Outpoint: utxo.Outpoint{Hash: prev}, Coin: coin(i)})
		d.Created = append(d.Created, utxo.Entry{Outpoint: utxo.Outpoint{Hash: tx.TxID, Index: 0}, Coin: coin(i + 200)},
			utxo.Entry{Outpoint: utxo.Outpoint{Hash: tx.TxID, Index: 1}, Coin: coin(i + 300)})
	}
	if err := kv.Write(b, backends.Sync); err != nil {
		t.Fatal(err)
	}
	count := &countingKV{KV: kv}
	fresh := openStore(t, count, Options{CacheBytes: 1 << 20})
	plain := openStore(t, kv, Options{CacheBytes: 1 << 20})
	fresh.Warm(blk, false)
	fd := *d
	fd.Fresh = true
	if err := fresh.Connect(blk.Hash, &fd); err != nil {
		t.Fatal(err)
	}
	if got := count.coinGets.Load(); got != 20 {
		t.Fatalf("a fresh connect read %d coin records, want the 20 it spends from", got)
	}
	plain.Warm(blk, true)
	if err := plain.Connect(blk.Hash, d); err != nil {
		t.Fatal(err)
	}
	for i := range blk.Txs {
		for _, h := range []wire.Hash{blk.Txs[i].TxID, {byte(i), 0xaa}} {
			sameTxCoins(t, h, fresh, plain, "after a fresh connect", "after one that read")
		}
	}
}

// sameTxCoins requires txid h's unspent outputs to read the same from a and b.
func sameTxCoins(t *testing.T, h wire.Hash, a, b *Store, aName, bName string) {
	t.Helper()
	got, err := a.AppendTxCoins(nil, h)
	if err != nil {
		t.Fatal(err)
	}
	want, err := b.AppendTxCoins(nil, h)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: %v %s, %v %s", h, got, aName, want, bName)
	}
}

// putRecord puts txid's record of coins (in vout order) in b, as the store
// writes it.
func putRecord(t *testing.T, b *backends.Batch, txid wire.Hash, coins ...utxo.IndexedCoin) {
	t.Helper()
	rec, err := utxo.EncodeRecord(nil, coins)
	if err != nil {
		t.Fatal(err)
	}
	b.Put(hashKey(prefixCoins, txid), rec.Bytes())
}
