//go:build rocksdb

package rocksdb

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"utxod/backends"
)

// TestLastLevelCompression: appended (ingested, last-level) tables of rows
// shaped as the scripthash index's (store/kvstore/shindex: prefix, random
// 8-byte id, 3-byte height, random txid, vout, a uvarint value) take fewer
// bytes than the rows' keys with RocksDB's 8-byte trailer, which is what
// uncompressed blocks cost; a batch of random bytes, as coin records
// mostly are, is not worth compressing, and both read back the same.
func TestLastLevelCompression(t *testing.T) {
	const rows = 60_000
	rng := rand.New(rand.NewPCG(7, 8))
	type kv struct{ k, v []byte }
	index := make([]kv, rows)
	for i := range index {
		k := make([]byte, 0, 45)
		k = append(k, 'S')
		// Ids as dense as 185 M rows make them: neighbours share 3–4 bytes.
		k = binary.BigEndian.AppendUint64(k, rng.Uint64()>>12)
		// Heights skewed to recent blocks, as mainnet's coins are.
		h := max(0, 880_000-int(rng.ExpFloat64()*150_000))
		k = append(k, byte(h>>16), byte(h>>8), byte(h))
		for range 4 {
			k = binary.LittleEndian.AppendUint64(k, rng.Uint64())
		}
		k = append(k, byte(min(rng.ExpFloat64(), 20)))
		v := int64(math.Exp(10 + 2.5*rng.NormFloat64())) // log-normal satoshis
		index[i] = kv{k, binary.AppendUvarint(nil, uint64(min(max(v, 1), 21e14))<<1)}
	}
	slices.SortFunc(index, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
	size := func(dir string) (n int64) {
		ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
		for _, f := range ssts {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			n += st.Size()
		}
		return n
	}
	dir := t.TempDir()
	db, err := Open(dir, backends.Options{CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := backends.NewBatch()
	raw := 0
	for _, r := range index {
		b.Put(r.k, r.v)
		raw += len(r.k) + 8 + len(r.v) // a block entry's key, trailer, value
	}
	if err := db.(backends.Appender).WriteAppend(b, backends.Sync); err != nil {
		t.Fatal(err)
	}
	if !compressible(b) {
		t.Error("index rows: compressible = false")
	}
	if got := size(dir); got >= int64(raw) {
		t.Errorf("index rows: %.1f bytes a row on disk, %.1f of keys, trailers and values", float64(got)/rows, float64(raw)/rows)
	}

	// Coin-like records: random bytes, which zstd cannot shrink by the
	// eighth RocksDB asks, stored as they are.
	dir2 := t.TempDir()
	db2, err := Open(dir2, backends.Options{CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	coins := make([]kv, 20_000)
	for i := range coins {
		k, v := make([]byte, 33), make([]byte, 40+rng.IntN(40))
		k[0] = 'c'
		for j := 1; j < len(k); j++ {
			k[j] = byte(rng.Uint32())
		}
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		coins[i] = kv{k, v}
	}
	slices.SortFunc(coins, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
	b = backends.NewBatch()
	raw = 0
	for _, r := range coins {
		b.Put(r.k, r.v)
		raw += len(r.k) + len(r.v)
	}
	if compressible(b) {
		t.Error("random records: compressible = true")
	}
	if err := db2.(backends.Appender).WriteAppend(b, backends.Sync); err != nil {
		t.Fatal(err)
	}
	if got := size(dir2); got < int64(raw) {
		t.Errorf("random records: %d bytes on disk, less than their %d", got, raw)
	}
	for _, r := range coins[:500] {
		v, err := db2.Get(r.k)
		if err != nil || !bytes.Equal(v, r.v) {
			t.Fatalf("Get(%x) = %x, %v", r.k, v, err)
		}
	}
	for _, r := range index[:500] {
		v, err := db.Get(r.k)
		if err != nil || !bytes.Equal(v, r.v) {
			t.Fatalf("Get(%x) = %x, %v", r.k, v, err)
		}
	}
}
