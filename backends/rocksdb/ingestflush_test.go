//go:build rocksdb

package rocksdb

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"utxod/backends"
	"utxod/backends/kvtest"
)

// TestKVIngestedFlushes runs the conformance suite with every synced write
// ingested as a table file (writeIngest), the path large flushes take.
func TestKVIngestedFlushes(t *testing.T) {
	defer func(n int) { ingestFlushBytes = n }(ingestFlushBytes)
	ingestFlushBytes = 1
	kvtest.TestKV(t, kvtest.Open[*testing.T](Name, backends.Options{CacheBytes: 8 << 20}))
}

// TestIngestedFlushMatchesWrite: random synced batches over a small key
// space (Puts and Deletes, several on one key, keys already stored or not,
// now and then the empty key) leave an ingesting store with exactly the contents RocksDB's own write
// path (Extra.LoggedFlushes, the control arm) gives, after each batch and
// after a reopen; the ingested batches bypass the memtable, the logged ones
// do not.
func TestIngestedFlushMatchesWrite(t *testing.T) {
	defer func(n int) { ingestFlushBytes = n }(ingestFlushBytes)
	ingestFlushBytes = 1
	open := func(dir string, logged bool) *DB {
		kv, err := Open(dir, backends.Options{CacheBytes: 8 << 20, Extra: Extra{LoggedFlushes: logged}})
		if err != nil {
			t.Fatal(err)
		}
		return kv.(*DB)
	}
	ingDir, refDir := t.TempDir(), t.TempDir()
	ing, ref := open(ingDir, false), open(refDir, true)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		b := backends.NewBatch()
		for range 1 + rng.IntN(3000) {
			k := []byte{byte(rng.IntN(4)), byte(rng.IntN(256)), byte(rng.IntN(8))}
			if rng.IntN(1000) == 0 {
				k = k[:0] // RocksDB holds the empty key too
			}
			if rng.IntN(3) == 0 {
				b.Delete(k)
			} else {
				v := make([]byte, rng.IntN(40))
				for i := range v {
					v[i] = byte(rng.Uint32())
				}
				b.Put(k, v)
			}
		}
		if err := ing.Write(b, backends.Sync); err != nil {
			t.Fatalf("round %d: ingesting write: %v", round, err)
		}
		if got := ing.db.GetProperty("rocksdb.num-entries-active-mem-table"); got != "0" {
			t.Fatalf("round %d: %s memtable entries after an ingested write", round, got)
		}
		if err := ref.Write(b, backends.Sync); err != nil {
			t.Fatal(err)
		}
		if got := ref.db.GetProperty("rocksdb.num-entries-active-mem-table"); got == "0" {
			t.Fatalf("round %d: the control arm (LoggedFlushes) left its memtable empty", round)
		}
		if g, w := dump(t, ing), dump(t, ref); !bytes.Equal(g, w) {
			t.Fatalf("round %d: contents differ from RocksDB's write path", round)
		}
	}
	want := dump(t, ref)
	if err := ing.Close(); err != nil {
		t.Fatal(err)
	}
	ref.Close()
	ing = open(ingDir, false)
	defer ing.Close()
	if !bytes.Equal(dump(t, ing), want) {
		t.Fatal("contents differ after a reopen")
	}
}

// dump is every key and value of kv, length-prefixed, in key order.
func dump(t *testing.T, kv backends.KV) []byte {
	t.Helper()
	it, err := kv.NewIterator(backends.Range{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []byte
	for it.Next() {
		out = append(out, byte(len(it.Key())))
		out = append(out, it.Key()...)
		out = append(out, byte(len(it.Value())))
		out = append(out, it.Value()...)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
