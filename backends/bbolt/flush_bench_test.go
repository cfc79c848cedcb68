package bbolt

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// The benchmarks below weigh a layout this store does not use: keys sharded
// over sub-buckets named by their first two bytes, against the one bucket of
// today. A chainstate flush is one transaction of sorted coin keys ('c' ‖
// txid); into an empty bucket every key lands in one leaf node, whose inode
// slice grows by append until Commit splits it. Results and the decision:
// bench/results/bbolt-sub-buckets.md.

const (
	flushKeys = 110_000 // the early440k corpus's first flush, in coin records
	flushVal  = 60      // a typical v5 record of one or two outputs
)

// flushSet returns n sorted 'c' ‖ SHA-256(i) keys with flushVal-byte values.
func flushSet(n int) (keys, vals [][]byte) {
	keys = make([][]byte, n)
	vals = make([][]byte, n)
	for i := range n {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		h := sha256.Sum256(b[:])
		keys[i] = append([]byte{'c'}, h[:]...)
		vals[i] = make([]byte, flushVal)
	}
	slices.SortFunc(keys, bytes.Compare)
	return keys, vals
}

// flushArm writes keys and vals in one read-write transaction.
type flushArm func(tx *bolt.Tx, keys, vals [][]byte) error

// oneBucket is this store's layout (DB.Write).
func oneBucket(tx *bolt.Tx, keys, vals [][]byte) error {
	bk, err := tx.CreateBucketIfNotExists(bucket)
	if err != nil {
		return err
	}
	for i := range keys {
		if err := bk.Put(keys[i], vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// subBuckets is the alternative: one sub-bucket per two-byte key prefix,
// which keeps the global key order.
func subBuckets(tx *bolt.Tx, keys, vals [][]byte) error {
	top, err := tx.CreateBucketIfNotExists(bucket)
	if err != nil {
		return err
	}
	var cur *bolt.Bucket
	var curPrefix [2]byte
	for i, k := range keys {
		p := [2]byte{k[0], k[1]}
		if cur == nil || p != curPrefix {
			if cur, err = top.CreateBucketIfNotExists(p[:]); err != nil {
				return err
			}
			curPrefix = p
		}
		if err := cur.Put(k, vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// benchFlush times one flush of flushKeys keys into a store that already
// holds preload keys, written beforehand in 100k-key transactions.
func benchFlush(b *testing.B, arm flushArm, preload int) {
	keys, vals := flushSet(preload + flushKeys)
	// Every (preload/flushKeys+1)-th key is the flush's, so that it scatters
	// over the preloaded leaves as a later coins flush does.
	var pre, preV, add, addV [][]byte
	step := preload/flushKeys + 1
	for i := range keys {
		if i%step == 0 && len(add) < flushKeys {
			add, addV = append(add, keys[i]), append(addV, vals[i])
		} else {
			pre, preV = append(pre, keys[i]), append(preV, vals[i])
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		db, err := bolt.Open(filepath.Join(b.TempDir(), FileName), 0o644, &bolt.Options{
			InitialMmapSize: DefaultInitialMmapSize, FreelistType: bolt.FreelistMapType, NoSync: true,
		})
		if err != nil {
			b.Fatal(err)
		}
		for j := 0; j < len(pre); j += 100_000 {
			e := min(j+100_000, len(pre))
			if err := db.Update(func(tx *bolt.Tx) error { return arm(tx, pre[j:e], preV[j:e]) }); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := db.Update(func(tx *bolt.Tx) error { return arm(tx, add, addV) }); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkFlush: go test -run '^$' -bench Flush -benchmem -benchtime 5x -count 6 ./backends/bbolt
func BenchmarkFlush(b *testing.B) {
	for _, c := range []struct {
		name    string
		preload int
	}{{"first", 0}, {"later500k", 500_000}} {
		b.Run(c.name+"/one-bucket", func(b *testing.B) { benchFlush(b, oneBucket, c.preload) })
		b.Run(c.name+"/sub-buckets", func(b *testing.B) { benchFlush(b, subBuckets, c.preload) })
	}
}

// TestFlushArmsAgree: both layouts hold the same keys in the same order, so
// the benchmark compares equal work.
func TestFlushArmsAgree(t *testing.T) {
	keys, vals := flushSet(3000)
	read := func(arm flushArm, nested bool) [][]byte {
		db, err := bolt.Open(filepath.Join(t.TempDir(), FileName), 0o644, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Update(func(tx *bolt.Tx) error { return arm(tx, keys, vals) }); err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		if err := db.View(func(tx *bolt.Tx) error {
			top := tx.Bucket(bucket)
			return top.ForEach(func(k, _ []byte) error {
				if !nested {
					got = append(got, slices.Clone(k))
					return nil
				}
				return top.Bucket(k).ForEach(func(k, _ []byte) error {
					got = append(got, slices.Clone(k))
					return nil
				})
			})
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	flat, nested := read(oneBucket, false), read(subBuckets, true)
	if !slices.EqualFunc(flat, keys, bytes.Equal) || !slices.EqualFunc(nested, keys, bytes.Equal) {
		t.Fatalf("keys differ: one bucket %d, sub-buckets %d, want %d in order", len(flat), len(nested), len(keys))
	}
}
