//go:build rocksdb

package rocksdb

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/linxGnu/grocksdb"

	"utxod/backends"
	"utxod/backends/kvtest"
)

// TestKVPerEntryBatches runs the conformance suite on the control arm of
// the encoded batches.
func TestKVPerEntryBatches(t *testing.T) {
	kvtest.TestKV(t, kvtest.Open[*testing.T](Name, backends.Options{CacheBytes: 8 << 20, Extra: Extra{PerEntryBatches: true}}))
}

// TestEncodeBatchMatchesRocksDB: the representation encodeBatch writes is
// byte for byte the one RocksDB's own WriteBatch builds from the same
// operations (lengths across the varint boundaries, empty values,
// deletions, repeated keys), and RocksDB accepts it with the right count.
func TestEncodeBatchMatchesRocksDB(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 33, 127, 128, 129, 16383, 16384, 70000}
	for round := range 50 {
		b := backends.NewBatch()
		wb := grocksdb.NewWriteBatch()
		n := 1 + rng.IntN(200)
		if round == 0 {
			n = 0
		}
		for i := range n {
			key := make([]byte, 1+rng.IntN(40))
			if i%17 == 0 {
				key = make([]byte, sizes[rng.IntN(len(sizes)-1)+1])
			}
			for j := range key {
				key[j] = byte(rng.Uint32())
			}
			switch rng.IntN(3) {
			case 0:
				b.Delete(key)
				wb.Delete(key)
			default:
				val := make([]byte, sizes[rng.IntN(len(sizes))])
				for j := range val {
					val[j] = byte(rng.Uint32())
				}
				b.Put(key, val)
				wb.Put(key, val)
				if i%5 == 0 { // the same key again
					b.Put(key, val[:len(val)/2])
					wb.Put(key, val[:len(val)/2])
				}
			}
		}
		rep, err := encodeBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		if want := wb.Data(); !bytes.Equal(rep, want) {
			t.Fatalf("round %d: encoded %d bytes, RocksDB's batch %d bytes, not equal", round, len(rep), len(want))
		}
		from := grocksdb.WriteBatchFrom(rep)
		if from.Count() != wb.Count() {
			t.Fatalf("round %d: count %d, want %d", round, from.Count(), wb.Count())
		}
		from.Destroy()
		wb.Destroy()
	}
}

// TestWriteAppendIngests: ascending Puts through WriteAppend bypass the
// memtable (a table file is ingested), other batches take Write's path,
// and a table file a crashed append left is removed at the next open.
func TestWriteAppendIngests(t *testing.T) {
	dir := t.TempDir()
	kv, err := Open(dir, backends.Options{CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	d := kv.(*DB)
	memEntries := func() string { return d.db.GetProperty("rocksdb.num-entries-active-mem-table") }
	b := backends.NewBatch()
	for i := range 1000 {
		b.Put([]byte{0x10, byte(i >> 8), byte(i)}, []byte("v"))
	}
	if err := d.WriteAppend(b, backends.NoSync); err != nil {
		t.Fatal(err)
	}
	if got := memEntries(); got != "0" {
		t.Fatalf("memtable entries after an ingested append: %s", got)
	}
	b.Reset()
	b.Put([]byte{0x20}, []byte("a"))
	b.Delete([]byte{0x10, 0, 5})
	if err := d.WriteAppend(b, backends.NoSync); err != nil {
		t.Fatal(err)
	}
	if got := memEntries(); got != "2" {
		t.Fatalf("memtable entries after a batch with a deletion: %s, want 2", got)
	}
	if _, err := kv.Get([]byte{0x10, 0, 5}); err == nil {
		t.Fatal("deleted key still present")
	}
	if v, err := kv.Get([]byte{0x10, 3, 0xe7}); err != nil || string(v) != "v" {
		t.Fatalf("ingested key: %q, %v", v, err)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	stale := dir + "/utxod-append-123.sst"
	if err := os.WriteFile(stale, []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	kv, err = Open(dir, backends.Options{CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale append file: %v", err)
	}
	if v, err := kv.Get([]byte{0x10, 0, 0}); err != nil || string(v) != "v" {
		t.Fatalf("after reopen: %q, %v", v, err)
	}
}
