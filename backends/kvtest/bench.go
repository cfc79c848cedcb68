package kvtest

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"utxod/backends"
)

// Benchmark shape, modelled on the UTXO set: 36-byte keys (a 32-byte
// pseudo-random "txid" plus a 4-byte index, so keys arrive in random order),
// 50-byte values, written in 10 000-key NoSync batches.
const (
	benchKeyLen   = 36
	benchValueLen = 50
	benchBatch    = 10_000
	// benchKeys is the size of the store the read benchmarks run against.
	benchKeys = 500_000
)

func benchKey(dst []byte, i uint64) []byte {
	dst = dst[:0]
	// splitmix64 expands i to 32 pseudo-random bytes; the 4-byte index
	// makes the key unique.
	x := i
	for range 4 {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		dst = binary.BigEndian.AppendUint64(dst, z)
	}
	return binary.BigEndian.AppendUint32(dst, uint32(i))
}

func benchValue(dst []byte, i uint64) []byte {
	dst = dst[:0]
	for len(dst) < benchValueLen {
		dst = binary.LittleEndian.AppendUint64(dst, i*0x2545f4914f6cdd1d+uint64(len(dst)))
	}
	return dst[:benchValueLen]
}

// writeKeys writes keys [from, to) in benchBatch-key NoSync batches.
func writeKeys(tb testing.TB, kv backends.KV, from, to uint64) {
	b := backends.NewBatch()
	var k, v []byte
	for i := from; i < to; i++ {
		k, v = benchKey(k, i), benchValue(v, i)
		b.Put(k, v)
		if b.Len() == benchBatch {
			if err := kv.Write(b, backends.NoSync); err != nil {
				tb.Fatal(err)
			}
			b.Reset()
		}
	}
	if err := kv.Write(b, backends.NoSync); err != nil {
		tb.Fatal(err)
	}
}

// BenchKV runs the shared benchmarks against the store open creates. Each
// op is one key. Suggested invocation (about a minute per store):
//
//	go test -tags rocksdb -run '^$' -bench . -benchmem -benchtime 500000x ./backends/pebble/
//
// Sub-benchmarks:
//   - WriteBatch: b.N random-order keys in 10k-key NoSync batches into a
//     fresh store (the final Sync is included).
//   - GetHit / GetMiss / Has: random point reads against a store of 500k
//     keys that was closed and reopened after loading (so the data is in
//     the store's files, not only its memtable).
//   - Iterate: a full forward scan of that store, per key.
func BenchKV(b *testing.B, open func(b *testing.B, dir string) backends.KV) {
	b.Run("WriteBatch", func(b *testing.B) {
		kv := open(b, b.TempDir())
		defer kv.Close()
		b.ReportAllocs()
		b.SetBytes(benchKeyLen + benchValueLen)
		b.ResetTimer()
		writeKeys(b, kv, 0, uint64(b.N))
		if err := kv.Sync(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
	})

	// The loaded store is built once and shared by the read benchmarks.
	var loaded backends.KV
	parentDir := b.TempDir()
	get := func(b *testing.B) backends.KV {
		if loaded == nil {
			kv := open(b, parentDir)
			writeKeys(b, kv, 0, benchKeys)
			if err := kv.Close(); err != nil {
				b.Fatal(err)
			}
			loaded = open(b, parentDir)
		}
		return loaded
	}
	defer func() {
		if loaded != nil {
			loaded.Close()
		}
	}()

	b.Run("GetHit", func(b *testing.B) {
		kv := get(b)
		rng := rand.New(rand.NewPCG(1, 1))
		var k []byte
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			k = benchKey(k, rng.Uint64N(benchKeys))
			if _, err := kv.Get(k); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("GetMiss", func(b *testing.B) {
		kv := get(b)
		rng := rand.New(rand.NewPCG(2, 2))
		var k []byte
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			k = benchKey(k, benchKeys+rng.Uint64N(1<<40))
			if _, err := kv.Get(k); err == nil {
				b.Fatal("miss found")
			}
		}
	})
	b.Run("Has", func(b *testing.B) {
		kv := get(b)
		rng := rand.New(rand.NewPCG(3, 3))
		var k []byte
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			k = benchKey(k, rng.Uint64N(benchKeys))
			if ok, err := kv.Has(k); !ok || err != nil {
				b.Fatal("Has failed", err)
			}
		}
	})
	b.Run("Iterate", func(b *testing.B) {
		kv := get(b)
		b.ReportAllocs()
		b.SetBytes(benchKeyLen + benchValueLen)
		b.ResetTimer()
		var it backends.Iterator
		fresh := false
		for n := 0; n < b.N; n++ {
			if it == nil {
				var err error
				if it, err = kv.NewIterator(backends.Range{}); err != nil {
					b.Fatal(err)
				}
				fresh = true
			}
			if !it.Next() {
				if fresh {
					b.Fatal("store is empty")
				}
				if err := it.Err(); err != nil {
					b.Fatal(err)
				}
				it.Close()
				it = nil
				n--
				continue
			}
			fresh = false
			if len(it.Key()) != benchKeyLen || len(it.Value()) != benchValueLen {
				b.Fatal("bad entry")
			}
		}
		if it != nil {
			it.Close()
		}
	})
}
