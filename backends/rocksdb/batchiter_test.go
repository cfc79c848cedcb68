//go:build rocksdb

package rocksdb

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/linxGnu/grocksdb"

	"utxod/backends"
	"utxod/backends/kvtest"
)

func TestBatchedIteratorLayout(t *testing.T) {
	if !iteratorLayoutOK() {
		t.Fatal("grocksdb.Iterator is no longer one pointer field: cIterator cannot read its C iterator")
	}
}

// TestKVPerEntryIterators runs the conformance suite on the control arm.
func TestKVPerEntryIterators(t *testing.T) {
	kvtest.TestKV(t, kvtest.Open[*testing.T](Name, backends.Options{CacheBytes: 8 << 20, Extra: Extra{PerEntryIterators: true}}))
}

// TestBatchedIteratorArms walks ranges whose entries straddle fill
// boundaries (empty values, values larger than the first fill and than the
// largest one) on both arms and checks they see the same entries.
func TestBatchedIteratorArms(t *testing.T) {
	open := func(perEntry bool) backends.KV {
		kv, err := Open(t.TempDir(), backends.Options{CacheBytes: 8 << 20, Extra: Extra{PerEntryIterators: perEntry}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { kv.Close() })
		return kv
	}
	var keys, vals [][]byte
	for i := range 3000 {
		n := (i * 37) % 300
		switch i {
		case 10:
			n = firstFillBytes + 1
		case 2000:
			n = maxFillBytes + 5
		case 2001:
			n = 3 * maxFillBytes
		}
		keys = append(keys, []byte(fmt.Sprintf("k%05d", i)))
		vals = append(vals, bytes.Repeat([]byte{byte(i)}, n))
	}
	arms := []backends.KV{open(false), open(true)}
	for _, kv := range arms {
		b := backends.NewBatch()
		for i := range keys {
			b.Put(keys[i], vals[i])
		}
		if err := kv.Write(b, backends.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	ranges := []backends.Range{
		{},
		{Start: []byte("k00005"), End: []byte("k00012")},
		{Start: []byte("k01999"), End: []byte("k02003")},
		{Start: []byte("k02999")},
		{Start: []byte("z")},
	}
	for _, r := range ranges {
		var got [2][]string
		for a, kv := range arms {
			it, err := kv.NewIterator(r)
			if err != nil {
				t.Fatal(err)
			}
			for it.Next() {
				k, v := it.Key(), it.Value()
				got[a] = append(got[a], fmt.Sprintf("%s:%d:%x", k, len(v), v[:min(len(v), 2)]))
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			it.Close()
		}
		var want []string
		for i := range keys {
			if (r.Start == nil || bytes.Compare(keys[i], r.Start) >= 0) && (r.End == nil || bytes.Compare(keys[i], r.End) < 0) {
				want = append(want, fmt.Sprintf("%s:%d:%x", keys[i], len(vals[i]), vals[i][:min(len(vals[i]), 2)]))
			}
		}
		for a := range arms {
			if fmt.Sprint(got[a]) != fmt.Sprint(want) {
				t.Errorf("range %q–%q arm %d: %d entries, want %d", r.Start, r.End, a, len(got[a]), len(want))
			}
		}
	}
}

// BenchmarkIterate walks n entries shaped like coin records (33-byte keys,
// 40-byte values) with the batched cursor and with the per-entry control
// arm, side by side (entries/s).
//
//	go test -tags rocksdb -run '^$' -bench BenchmarkIterate -count 5 ./backends/rocksdb/
func BenchmarkIterate(b *testing.B) {
	const n = 500_000
	for _, arm := range []struct {
		name     string
		perEntry bool
	}{{"batched", false}, {"per-entry", true}} {
		b.Run(arm.name, func(b *testing.B) {
			kv, err := Open(b.TempDir(), backends.Options{Extra: Extra{PerEntryIterators: arm.perEntry}})
			if err != nil {
				b.Fatal(err)
			}
			defer kv.Close()
			batch := backends.NewBatch()
			key := make([]byte, 33)
			val := bytes.Repeat([]byte{7}, 40)
			for i := range n {
				key[0] = 'c'
				for j := 1; j < 33; j++ {
					key[j] = byte((i * 2654435761) >> (j % 4 * 8))
				}
				key[29], key[30], key[31], key[32] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
				batch.Put(key, val)
				if batch.Len() >= 10_000 {
					if err := kv.Write(batch, backends.NoSync); err != nil {
						b.Fatal(err)
					}
					batch = backends.NewBatch()
				}
			}
			if err := kv.Write(batch, backends.NoSync); err != nil {
				b.Fatal(err)
			}
			// Read from tables, as a dump of a real store does, not from
			// the memtable.
			kv.(*DB).db.CompactRange(grocksdb.Range{})
			b.ResetTimer()
			for b.Loop() {
				it, err := kv.NewIterator(backends.Range{})
				if err != nil {
					b.Fatal(err)
				}
				seen := 0
				for it.Next() {
					seen += len(it.Key()) + len(it.Value())
				}
				if err := it.Err(); err != nil || seen != n*73 {
					b.Fatalf("%d bytes, %v", seen, err)
				}
				it.Close()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}
