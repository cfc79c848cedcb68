package bbolt

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"utxod/backends"
)

// TestChunksAgainstModel applies random batches, Write and WriteAppend,
// of keys that share long prefixes (as txids' vouts and scripthash rows
// do), with values from empty to several pages, and after each compares
// Get, Has and iterators over random ranges with a map, and the chunks
// with their budget.
func TestChunksAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	dir := t.TempDir()
	kv, err := Open(dir, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	model := map[string]string{}
	key := func() []byte {
		switch rng.IntN(4) {
		case 0: // below and above everything
			return []byte{byte(rng.IntN(2) * 0xff), byte(rng.IntN(3))}
		case 1: // one "txid", many outputs
			return fmt.Appendf(nil, "c%030d/%d", rng.IntN(40), rng.IntN(300))
		default:
			return fmt.Appendf(nil, "S%08x%04d", rng.Uint32()%5000, rng.IntN(50))
		}
	}
	value := func() []byte {
		switch rng.IntN(20) {
		case 0:
			return []byte{}
		case 1:
			return bytes.Repeat([]byte{byte(rng.Uint32())}, 1+rng.IntN(9000))
		}
		v := make([]byte, 1+rng.IntN(60))
		for i := range v {
			v[i] = byte(rng.Uint32())
		}
		return v
	}
	appended := []byte("z")
	for round := range 120 {
		b := backends.NewBatch()
		appendOnly := round%7 == 3
		for range rng.IntN(400) + 1 {
			if appendOnly {
				appended = fmt.Appendf(appended[:0], "z%08d", round*1000+b.Len())
				v := value()
				b.Put(appended, v)
				model[string(appended)] = string(v)
				continue
			}
			k := key()
			if rng.IntN(3) == 0 {
				b.Delete(k)
				delete(model, string(k))
			} else {
				v := value()
				b.Put(k, v)
				model[string(k)] = string(v)
			}
		}
		write := kv.Write
		if appendOnly {
			write = kv.(*DB).WriteAppend
		}
		if err := write(b, backends.NoSync); err != nil {
			t.Fatal(err)
		}
		if round%30 == 29 {
			if err := kv.Close(); err != nil {
				t.Fatal(err)
			}
			if kv, err = Open(dir, backends.Options{}); err != nil {
				t.Fatal(err)
			}
		}
		checkModel(t, kv.(*DB), model, rng, key)
	}
	kv.Close()
}

func checkModel(t *testing.T, d *DB, model map[string]string, rng *rand.Rand, key func() []byte) {
	t.Helper()
	keys := make([]string, 0, len(model))
	for k := range model {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for range 50 {
		k := key()
		v, err := d.Get(k)
		want, ok := model[string(k)]
		switch {
		case ok && (err != nil || string(v) != want):
			t.Fatalf("Get %q: %q, %v; want %q", k, v, err, want)
		case !ok && !errors.Is(err, backends.ErrNotFound):
			t.Fatalf("Get %q: %q, %v; want not found", k, v, err)
		}
		if has, err := d.Has(k); err != nil || has != ok {
			t.Fatalf("Has %q: %v, %v; want %v", k, has, err, ok)
		}
	}
	for i := range 10 {
		var r backends.Range
		if i > 0 {
			r.Start, r.End = key(), key()
			if bytes.Compare(r.Start, r.End) > 0 {
				r.Start, r.End = r.End, r.Start
			}
		}
		lo, hi := string(r.Start), string(r.End)
		var want []string
		for _, k := range keys {
			if k >= lo && (hi == "" || k < hi) {
				want = append(want, k)
			}
		}
		it, err := d.NewIterator(r)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for it.Next() {
			got = append(got, string(it.Key()))
			if v := string(it.Value()); v != model[string(it.Key())] {
				t.Fatalf("iterator %q: value %q, want %q", it.Key(), v, model[string(it.Key())])
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("range [%q, %q): %d keys, want %d", lo, hi, len(got), len(want))
		}
	}
	// Every chunk keeps to its budget, unless it holds one record.
	budget := chunkBudget(int(d.pageSize))
	if err := d.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucket).ForEach(func(k, v []byte) error {
			var r chunkReader
			r.reset(k, v)
			n := 0
			for r.next() {
				n++
			}
			if r.err != nil {
				return r.err
			}
			if n > 1 && len(v) > maxValue(budget, len(k)) {
				return fmt.Errorf("chunk %q: %d records in %d bytes, over %d", k, n, len(v), maxValue(budget, len(k)))
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
}

// TestOldLayoutRefused: a file that keeps one record to a key (the
// bucket "kv" of utxod before chunks) is refused, read-only too.
func TestOldLayoutRefused(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucket(oldBucket)
		if err != nil {
			return err
		}
		return bk.Put([]byte("k"), []byte("v"))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, ro := range []bool{false, true} {
		if _, err := Open(dir, backends.Options{ReadOnly: ro}); !errors.Is(err, ErrOldLayout) {
			t.Errorf("read-only %v: %v, want ErrOldLayout", ro, err)
		}
	}
}

// TestChunksPack: a scripthash index's rows (45-byte keys sharing their
// first bytes, 4-byte values) appended take at most 52 bytes each in the
// file's leaf pages, against 65 one to a key.
func TestChunksPack(t *testing.T) {
	kv, err := Open(t.TempDir(), backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	d := kv.(*DB)
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 200_000
	keys := make([][]byte, n)
	for i := range keys {
		k := make([]byte, 45)
		k[0] = 'S'
		for j := 1; j < len(k); j++ {
			k[j] = byte(rng.Uint32())
		}
		keys[i] = k
	}
	slices.SortFunc(keys, bytes.Compare)
	for i := 0; i < n; i += 50_000 {
		b := backends.NewBatch()
		for _, k := range keys[i : i+50_000] {
			b.Put(k, []byte{1, 2, 3, 4})
		}
		if err := d.WriteAppend(b, backends.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	var leaf int
	if err := d.db.View(func(tx *bolt.Tx) error {
		leaf = tx.Bucket(bucket).Stats().LeafAlloc
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if per := float64(leaf) / n; per > 52 {
		t.Fatalf("%.1f bytes of leaf pages a row, want at most 52", per)
	} else {
		t.Logf("%.1f bytes of leaf pages a row", per)
	}
}

// FuzzChunk: any bytes decode without panicking, and records encoded
// with appendRecord decode to themselves.
func FuzzChunk(f *testing.F) {
	f.Add([]byte("key"), []byte{1, 'v', 2, 1, 'x', 0})
	f.Add([]byte("a"), []byte{0x80})
	f.Fuzz(func(t *testing.T, ck, cv []byte) {
		var r chunkReader
		r.reset(ck, cv)
		var recs []record
		for r.next() {
			recs = append(recs, record{k: slices.Clone(r.key), v: slices.Clone(r.val)})
		}
		if r.err != nil {
			return
		}
		v := appendFirst(nil, recs[0].v)
		for i := 1; i < len(recs); i++ {
			v = appendRecord(v, recs[i-1].k, recs[i].k, recs[i].v)
		}
		var back chunkReader
		back.reset(ck, v)
		for i := 0; back.next(); i++ {
			if i >= len(recs) || !bytes.Equal(back.key, recs[i].k) || !bytes.Equal(back.val, recs[i].v) {
				t.Fatalf("record %d differs after re-encoding", i)
			}
		}
		if back.err != nil {
			t.Fatal(back.err)
		}
	})
}
