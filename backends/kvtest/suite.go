package kvtest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"utxod/backends"
)

// TestKV runs the conformance suite against the store open creates. Run it
// with -race: several subtests are concurrent.
func TestKV(t *testing.T, open func(t *testing.T, dir string) backends.KV) {
	// fresh opens a store in a new directory and closes it at the end.
	fresh := func(t *testing.T) backends.KV {
		kv := open(t, t.TempDir())
		t.Cleanup(func() { _ = kv.Close() })
		return kv
	}
	t.Run("GetPutDelete", func(t *testing.T) { testGetPutDelete(t, fresh(t)) })
	t.Run("EmptyValue", func(t *testing.T) { testEmptyValue(t, fresh(t)) })
	t.Run("EmptyKey", func(t *testing.T) { testEmptyKey(t, fresh(t)) })
	t.Run("OwnedCopy", func(t *testing.T) { testOwnedCopy(t, fresh(t)) })
	t.Run("Iterate", func(t *testing.T) { testIterate(t, fresh(t)) })
	t.Run("IteratorSnapshot", func(t *testing.T) { testIteratorSnapshot(t, fresh(t)) })
	t.Run("BatchAtomicity", func(t *testing.T) { testBatchAtomicity(t, fresh(t)) })
	t.Run("BatchReplay", func(t *testing.T) { testBatchReplay(t, fresh(t)) })
	t.Run("WriteAppend", func(t *testing.T) { testWriteAppend(t, fresh(t)) })
	t.Run("LargeValues", func(t *testing.T) { testLargeValues(t, fresh(t)) })
	t.Run("SnapshotIsolation", func(t *testing.T) { testSnapshotIsolation(t, fresh(t)) })
	t.Run("SnapshotParallelRanges", func(t *testing.T) { testSnapshotParallelRanges(t, fresh(t)) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, fresh(t)) })
	t.Run("Reopen", func(t *testing.T) { testReopen(t, open) })
	t.Run("UseAfterClose", func(t *testing.T) { testUseAfterClose(t, open) })
	t.Run("Crash", func(t *testing.T) { testCrash(t, open) })
}

// ---- helpers ----

type kvPair struct{ k, v string }

func write(t testing.TB, kv backends.KV, mode backends.SyncMode, ops ...kvPair) {
	t.Helper()
	b := backends.NewBatch()
	for _, o := range ops {
		b.Put([]byte(o.k), []byte(o.v))
	}
	if err := kv.Write(b, mode); err != nil {
		t.Fatalf("Write(%d ops, %v): %v", len(ops), mode, err)
	}
}

func del(t testing.TB, kv backends.KV, keys ...string) {
	t.Helper()
	b := backends.NewBatch()
	for _, k := range keys {
		b.Delete([]byte(k))
	}
	if err := kv.Write(b, backends.NoSync); err != nil {
		t.Fatalf("Write(delete %q): %v", keys, err)
	}
}

// wantGet checks r.Get(k) == v; v == nil means absent.
func wantGet(t testing.TB, r backends.Reader, k string, v *string) {
	t.Helper()
	got, err := r.Get([]byte(k))
	has, herr := r.Has([]byte(k))
	if herr != nil {
		t.Fatalf("Has(%q): %v", k, herr)
	}
	if v == nil {
		if !errors.Is(err, backends.ErrNotFound) {
			t.Fatalf("Get(%q) = %q, %v; want ErrNotFound", k, got, err)
		}
		if got != nil {
			t.Fatalf("Get(%q) returned %q with ErrNotFound", k, got)
		}
		if has {
			t.Fatalf("Has(%q) = true for an absent key", k)
		}
		return
	}
	if err != nil {
		t.Fatalf("Get(%q): %v", k, err)
	}
	if got == nil || string(got) != *v {
		t.Fatalf("Get(%q) = %q (nil=%v), want %q", k, got, got == nil, *v)
	}
	if !has {
		t.Fatalf("Has(%q) = false for a present key", k)
	}
}

func ptr(s string) *string { return &s }

// collect drains an iterator over r, copying keys and values.
func collect(t testing.TB, r backends.Reader, rg backends.Range) []kvPair {
	t.Helper()
	it, err := r.NewIterator(rg)
	if err != nil {
		t.Fatalf("NewIterator(%+v): %v", rg, err)
	}
	if it.Key() != nil || it.Value() != nil {
		t.Fatalf("Key/Value before Next are not nil")
	}
	var out []kvPair
	for it.Next() {
		if it.Key() == nil || it.Value() == nil {
			t.Fatalf("nil Key/Value on a valid position")
		}
		out = append(out, kvPair{string(it.Key()), string(it.Value())})
	}
	if err := it.Err(); err != nil {
		t.Fatalf("iterator Err: %v", err)
	}
	if it.Next() {
		t.Fatalf("Next after exhaustion returned true")
	}
	if err := it.Close(); err != nil {
		t.Fatalf("iterator Close: %v", err)
	}
	if err := it.Close(); err != nil {
		t.Fatalf("second iterator Close: %v", err)
	}
	if it.Next() {
		t.Fatalf("Next after Close returned true")
	}
	return out
}

// ---- subtests ----

func testGetPutDelete(t *testing.T, kv backends.KV) {
	wantGet(t, kv, "a", nil)
	write(t, kv, backends.NoSync, kvPair{"a", "1"}, kvPair{"b", "2"})
	wantGet(t, kv, "a", ptr("1"))
	wantGet(t, kv, "b", ptr("2"))
	write(t, kv, backends.Sync, kvPair{"a", "11"})
	wantGet(t, kv, "a", ptr("11"))
	del(t, kv, "a", "never-there")
	wantGet(t, kv, "a", nil)
	wantGet(t, kv, "b", ptr("2"))
	// Keys that are prefixes of each other are distinct.
	write(t, kv, backends.NoSync, kvPair{"b\x00", "3"}, kvPair{"\xff\xff", "4"})
	wantGet(t, kv, "b", ptr("2"))
	wantGet(t, kv, "b\x00", ptr("3"))
	wantGet(t, kv, "\xff", nil)
	wantGet(t, kv, "\xff\xff", ptr("4"))
	// Empty batches are no-ops in both modes.
	for _, m := range []backends.SyncMode{backends.NoSync, backends.Sync} {
		if err := kv.Write(backends.NewBatch(), m); err != nil {
			t.Fatalf("empty Write(%v): %v", m, err)
		}
	}
	if err := kv.Write(nil, backends.Sync); err != nil {
		t.Fatalf("Write(nil batch): %v", err)
	}
	if err := kv.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

func testEmptyValue(t *testing.T, kv backends.KV) {
	write(t, kv, backends.NoSync, kvPair{"e", ""}, kvPair{"f", "x"})
	wantGet(t, kv, "e", ptr(""))
	got := collect(t, kv, backends.Range{})
	want := []kvPair{{"e", ""}, {"f", "x"}}
	if !slices.Equal(got, want) {
		t.Fatalf("iteration = %q, want %q", got, want)
	}
	snap, err := kv.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	wantGet(t, snap, "e", ptr(""))
}

// testEmptyKey accepts either behaviour a store may document: empty keys
// fully supported, or refused with ErrEmptyKey leaving nothing of the batch.
func testEmptyKey(t *testing.T, kv backends.KV) {
	b := backends.NewBatch()
	b.Put(nil, []byte("empty"))
	b.Put([]byte("a"), []byte("x"))
	err := kv.Write(b, backends.NoSync)
	if err != nil {
		if !errors.Is(err, backends.ErrEmptyKey) {
			t.Fatalf("Write with empty key: %v; want nil or ErrEmptyKey", err)
		}
		t.Logf("store refuses empty keys: %v", err)
		wantGet(t, kv, "a", nil)
		wantGet(t, kv, "", nil)
		return
	}
	t.Logf("store supports empty keys")
	wantGet(t, kv, "", ptr("empty"))
	got := collect(t, kv, backends.Range{})
	want := []kvPair{{"", "empty"}, {"a", "x"}}
	if !slices.Equal(got, want) {
		t.Fatalf("iteration = %q, want %q", got, want)
	}
	del(t, kv, "")
	wantGet(t, kv, "", nil)
}

func testOwnedCopy(t *testing.T, kv backends.KV) {
	key := []byte("k")
	val := []byte("value")
	b := backends.NewBatch()
	b.Put(key, val)
	// The batch copied its arguments.
	key[0], val[0] = 'X', 'X'
	if err := kv.Write(b, backends.NoSync); err != nil {
		t.Fatal(err)
	}
	wantGet(t, kv, "k", ptr("value"))
	got, err := kv.Get([]byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = 0
	}
	got = append(got[:0], "clobbered-and-longer"...)
	_ = got
	wantGet(t, kv, "k", ptr("value"))
	snap, err := kv.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	sg, err := snap.Get([]byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	sg[0] = 0
	wantGet(t, snap, "k", ptr("value"))
	wantGet(t, kv, "k", ptr("value"))
}

var iterKeys = []string{
	"\x00", "\x00\x00", "\x01", "a", "a\x00", "a\xff", "a\xff\xff", "ab", "b",
	"b\xff", "\xfe\xff", "\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff",
}

func testIterate(t *testing.T, kv backends.KV) {
	b := backends.NewBatch()
	// Insert in shuffled order.
	r := rand.New(rand.NewPCG(1, 2))
	for _, i := range r.Perm(len(iterKeys)) {
		b.Put([]byte(iterKeys[i]), []byte("v"+iterKeys[i]))
	}
	if err := kv.Write(b, backends.NoSync); err != nil {
		t.Fatal(err)
	}
	s := func(x string) []byte { return []byte(x) }
	cases := []struct {
		name string
		r    backends.Range
	}{
		{"all", backends.Range{}},
		{"start", backends.Range{Start: s("a\xff")}},
		{"start-absent", backends.Range{Start: s("a\x01")}},
		{"end", backends.Range{End: s("b")}},
		{"end-ff", backends.Range{End: s("\xff\xff")}},
		{"start-end", backends.Range{Start: s("\x01"), End: s("ab")}},
		{"start=end", backends.Range{Start: s("a"), End: s("a")}},
		{"start>end", backends.Range{Start: s("b"), End: s("a")}},
		{"empty-bounds", backends.Range{Start: []byte{}, End: []byte{}, Prefix: []byte{}}},
		{"prefix-a", backends.PrefixRange(s("a"))},
		{"prefix-a-ff", backends.PrefixRange(s("a\xff"))},
		{"prefix-ff", backends.PrefixRange(s("\xff"))},
		{"prefix-ff-ff", backends.PrefixRange(s("\xff\xff"))},
		{"prefix-00", backends.PrefixRange(s("\x00"))},
		{"prefix-none", backends.PrefixRange(s("c"))},
		{"prefix-start", backends.Range{Prefix: s("a"), Start: s("a\x01")}},
		{"prefix-start-before", backends.Range{Prefix: s("b"), Start: s("a")}},
		{"prefix-end", backends.Range{Prefix: s("a"), End: s("a\xff\x00")}},
		{"prefix-end-after", backends.Range{Prefix: s("a"), End: s("z")}},
		{"prefix-disjoint", backends.Range{Prefix: s("a"), Start: s("b")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []kvPair
			for _, k := range slices.Sorted(slices.Values(iterKeys)) {
				if k < string(c.r.Start) || (len(c.r.End) > 0 && k >= string(c.r.End)) ||
					!bytes.HasPrefix([]byte(k), c.r.Prefix) {
					continue
				}
				want = append(want, kvPair{k, "v" + k})
			}
			for _, few := range []bool{false, true} { // Few changes how a store reads, not what
				r := c.r
				r.Few = few
				if got := collect(t, kv, r); !slices.Equal(got, want) {
					t.Fatalf("range %+v:\n got %q\nwant %q", r, got, want)
				}
			}
		})
	}
	// The iterator does not retain the caller's bound slices.
	start := s("b")
	it, err := kv.NewIterator(backends.Range{Start: start})
	if err != nil {
		t.Fatal(err)
	}
	start[0] = 0
	if !it.Next() || string(it.Key()) != "b" {
		t.Fatalf("after mutating Start, first key = %q, want \"b\"", it.Key())
	}
	_ = it.Close()
}

func testIteratorSnapshot(t *testing.T, kv backends.KV) {
	write(t, kv, backends.NoSync, kvPair{"k1", "a"}, kvPair{"k3", "a"})
	it, err := kv.NewIterator(backends.Range{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	write(t, kv, backends.NoSync, kvPair{"k2", "b"}, kvPair{"k3", "b"})
	var got []kvPair
	for it.Next() {
		got = append(got, kvPair{string(it.Key()), string(it.Value())})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	want := []kvPair{{"k1", "a"}, {"k3", "a"}}
	if !slices.Equal(got, want) {
		t.Fatalf("iterator saw %q, want the state at its creation %q", got, want)
	}
}

func testBatchAtomicity(t *testing.T, kv backends.KV) {
	// An unwritten batch leaves nothing; a Reset batch writes nothing.
	b := backends.NewBatch()
	b.Put([]byte("u"), []byte("1"))
	wantGet(t, kv, "u", nil)
	b.Reset()
	if b.Len() != 0 || b.Size() != 0 {
		t.Fatalf("after Reset Len=%d Size=%d", b.Len(), b.Size())
	}
	if err := kv.Write(b, backends.NoSync); err != nil {
		t.Fatal(err)
	}
	wantGet(t, kv, "u", nil)

	// Later operations on the same key win.
	write(t, kv, backends.NoSync, kvPair{"d", "old"})
	b.Reset()
	b.Put([]byte("k"), []byte("1"))
	b.Put([]byte("k"), []byte("2"))
	b.Delete([]byte("d"))
	b.Put([]byte("d"), []byte("new"))
	b.Put([]byte("x"), []byte("1"))
	b.Delete([]byte("x"))
	if b.Len() != 6 {
		t.Fatalf("Len = %d, want 6", b.Len())
	}
	if err := kv.Write(b, backends.NoSync); err != nil {
		t.Fatal(err)
	}
	wantGet(t, kv, "k", ptr("2"))
	wantGet(t, kv, "d", ptr("new"))
	wantGet(t, kv, "x", nil)
	// Write neither consumes nor changes the batch: writing it again is
	// idempotent here.
	if err := kv.Write(b, backends.NoSync); err != nil {
		t.Fatal(err)
	}
	wantGet(t, kv, "k", ptr("2"))

	// A batch that fails applies nothing. The only failure every store can
	// be made to produce is writing after Close (covered by UseAfterClose);
	// stores refusing empty keys fail here.
	b.Reset()
	b.Put([]byte("fail-a"), []byte("1"))
	b.Put(nil, []byte("1"))
	if err := kv.Write(b, backends.NoSync); err != nil {
		wantGet(t, kv, "fail-a", nil)
	}

	// Readers see every batch whole or not at all.
	const keys = 50
	var stop atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	wg.Add(2)
	go func() { // snapshot reader
		defer wg.Done()
		for !stop.Load() {
			if err := checkUniform(kv, true); err != nil {
				errc <- err
				return
			}
		}
	}()
	go func() { // iterator reader
		defer wg.Done()
		for !stop.Load() {
			if err := checkUniform(kv, false); err != nil {
				errc <- err
				return
			}
		}
	}()
	wb := backends.NewBatch()
	for gen := 0; gen < 100; gen++ {
		wb.Reset()
		for i := 0; i < keys; i++ {
			wb.Put(fmt.Appendf(nil, "atom/%03d", i), fmt.Appendf(nil, "%d", gen))
		}
		if err := kv.Write(wb, backends.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// checkUniform checks that all atom/ keys hold the same generation, reading
// through a snapshot or a plain iterator.
func checkUniform(kv backends.KV, viaSnapshot bool) error {
	var r backends.Reader = kv
	if viaSnapshot {
		s, err := kv.NewSnapshot()
		if err != nil {
			return err
		}
		defer s.Close()
		r = s
	}
	it, err := r.NewIterator(backends.PrefixRange([]byte("atom/")))
	if err != nil {
		return err
	}
	defer it.Close()
	var first []byte
	n := 0
	for it.Next() {
		if first == nil {
			first = append([]byte(nil), it.Value()...)
		} else if !bytes.Equal(first, it.Value()) {
			return fmt.Errorf("torn batch: %q has %q, first key had %q", it.Key(), it.Value(), first)
		}
		n++
	}
	if n != 0 && n != 50 {
		return fmt.Errorf("torn batch: saw %d of 50 keys", n)
	}
	return it.Err()
}

type recorder struct{ ops []string }

func (r *recorder) Put(k, v []byte) error {
	if k == nil || v == nil {
		return errors.New("nil slice from Replay")
	}
	r.ops = append(r.ops, "put "+string(k)+"="+string(v))
	return nil
}

func (r *recorder) Delete(k []byte) error {
	if k == nil {
		return errors.New("nil slice from Replay")
	}
	r.ops = append(r.ops, "del "+string(k))
	return nil
}

type copier struct{ b *backends.Batch }

func (c copier) Put(k, v []byte) error { c.b.Put(k, v); return nil }
func (c copier) Delete(k []byte) error { c.b.Delete(k); return nil }

func testBatchReplay(t *testing.T, kv backends.KV) {
	b := backends.NewBatch()
	b.Put([]byte("a"), []byte("1"))
	b.Delete([]byte("b"))
	b.Put([]byte("c"), nil)
	b.Put([]byte("a"), []byte("2"))
	if b.Size() != 1+1+1+1+1+1 {
		t.Fatalf("Size = %d, want 6", b.Size())
	}
	var r recorder
	if err := b.Replay(&r); err != nil {
		t.Fatal(err)
	}
	want := []string{"put a=1", "del b", "put c=", "put a=2"}
	if !slices.Equal(r.ops, want) {
		t.Fatalf("Replay = %q, want %q", r.ops, want)
	}
	// Replaying into another batch and writing that gives the same state.
	write(t, kv, backends.NoSync, kvPair{"b", "old"})
	b2 := backends.NewBatch()
	if err := b.Replay(copier{b2}); err != nil {
		t.Fatal(err)
	}
	if err := kv.Write(b2, backends.NoSync); err != nil {
		t.Fatal(err)
	}
	wantGet(t, kv, "a", ptr("2"))
	wantGet(t, kv, "b", nil)
	wantGet(t, kv, "c", ptr(""))
	// Replay stops at the first error.
	stopErr := errors.New("stop")
	n := 0
	err := b.Replay(writerFunc(func() error { n++; return stopErr }))
	if !errors.Is(err, stopErr) || n != 1 {
		t.Fatalf("Replay with failing writer: err=%v after %d ops", err, n)
	}
	// Reset keeps the batch usable.
	b.Reset()
	b.Put([]byte("z"), []byte("9"))
	r.ops = nil
	if err := b.Replay(&r); err != nil || !slices.Equal(r.ops, []string{"put z=9"}) {
		t.Fatalf("after Reset Replay = %q, %v", r.ops, err)
	}
	// A zero Batch is usable.
	var zb backends.Batch
	zb.Put([]byte("zero"), []byte("ok"))
	if err := kv.Write(&zb, backends.NoSync); err != nil {
		t.Fatal(err)
	}
	wantGet(t, kv, "zero", ptr("ok"))
}

type writerFunc func() error

func (f writerFunc) Put(_, _ []byte) error { return f() }
func (f writerFunc) Delete(_ []byte) error { return f() }

func testLargeValues(t *testing.T, kv backends.KV) {
	big := make([]byte, 4<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	b := backends.NewBatch()
	b.Put([]byte("big1"), big)
	b.Put([]byte("big2"), big[:1<<20+3])
	if err := kv.Write(b, backends.Sync); err != nil {
		t.Fatal(err)
	}
	got, err := kv.Get([]byte("big1"))
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("Get(big1): len %d, err %v", len(got), err)
	}
	it, err := kv.NewIterator(backends.Range{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	wantLens := []int{4 << 20, 1<<20 + 3}
	i := 0
	for it.Next() {
		if i >= len(wantLens) || len(it.Value()) != wantLens[i] || !bytes.Equal(it.Value(), big[:wantLens[i]]) {
			t.Fatalf("iterated value %d (%q) has len %d", i, it.Key(), len(it.Value()))
		}
		i++
	}
	if err := it.Err(); err != nil || i != 2 {
		t.Fatalf("iterated %d values, err %v", i, err)
	}
}

func testSnapshotIsolation(t *testing.T, kv backends.KV) {
	write(t, kv, backends.NoSync, kvPair{"a", "1"}, kvPair{"c", "1"}, kvPair{"d", "1"})
	snap, err := kv.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	write(t, kv, backends.Sync, kvPair{"a", "2"}, kvPair{"b", "2"})
	del(t, kv, "c")
	// The snapshot sees the old state, the store the new one.
	wantGet(t, snap, "a", ptr("1"))
	wantGet(t, snap, "b", nil)
	wantGet(t, snap, "c", ptr("1"))
	wantGet(t, kv, "a", ptr("2"))
	wantGet(t, kv, "b", ptr("2"))
	wantGet(t, kv, "c", nil)
	want := []kvPair{{"a", "1"}, {"c", "1"}, {"d", "1"}}
	if got := collect(t, snap, backends.Range{}); !slices.Equal(got, want) {
		t.Fatalf("snapshot iteration = %q, want %q", got, want)
	}
	if got := collect(t, snap, backends.Range{Start: []byte("b"), End: []byte("d")}); !slices.Equal(got, want[1:2]) {
		t.Fatalf("snapshot range iteration = %q, want %q", got, want[1:2])
	}
	// A snapshot is safe for concurrent readers.
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 50; n++ {
				if v, err := snap.Get([]byte("a")); err != nil || string(v) != "1" {
					errc <- fmt.Errorf("concurrent snapshot Get = %q, %v", v, err)
					return
				}
				it, err := snap.NewIterator(backends.Range{})
				if err != nil {
					errc <- err
					return
				}
				n := 0
				for it.Next() {
					n++
				}
				it.Close()
				if n != 3 {
					errc <- fmt.Errorf("concurrent snapshot iteration saw %d keys", n)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	// Closing the snapshot closes its iterators.
	it, err := snap.NewIterator(backends.Range{})
	if err != nil {
		t.Fatal(err)
	}
	if !it.Next() {
		t.Fatal("snapshot iterator empty")
	}
	if err := snap.Close(); err != nil {
		t.Fatalf("snapshot Close: %v", err)
	}
	if err := snap.Close(); err != nil {
		t.Fatalf("second snapshot Close: %v", err)
	}
	if it.Next() {
		t.Fatal("iterator of a closed snapshot still advances")
	}
	if err := it.Err(); !errors.Is(err, backends.ErrClosed) {
		t.Fatalf("iterator of a closed snapshot: Err = %v, want ErrClosed", err)
	}
	if err := it.Close(); err != nil {
		t.Fatalf("closing an iterator of a closed snapshot: %v", err)
	}
	if _, err := snap.Get([]byte("a")); !errors.Is(err, backends.ErrClosed) {
		t.Fatalf("Get on closed snapshot: %v", err)
	}
	if _, err := snap.Has([]byte("a")); !errors.Is(err, backends.ErrClosed) {
		t.Fatalf("Has on closed snapshot: %v", err)
	}
	if _, err := snap.NewIterator(backends.Range{}); !errors.Is(err, backends.ErrClosed) {
		t.Fatalf("NewIterator on closed snapshot: %v", err)
	}
	// The store is unaffected.
	wantGet(t, kv, "a", ptr("2"))
}

// testSnapshotParallelRanges is the parallel coin scan's use of a
// snapshot: many iterators of one snapshot on contiguous sub-ranges, all
// live at once, walked from several goroutines (one goroutine holding two
// and stepping them in turn), while the store keeps being written. Every
// range sees exactly the snapshot's keys.
func testSnapshotParallelRanges(t *testing.T, kv backends.KV) {
	const keys = 4096
	key := func(i int) []byte { return []byte{'p', byte(i >> 8), byte(i), 'k'} }
	b := backends.NewBatch()
	for i := 0; i < keys; i++ {
		b.Put(key(i), fmt.Appendf(nil, "v%d", i))
	}
	b.Put([]byte("o"), []byte("outside"))
	b.Put([]byte("q"), []byte("outside"))
	if err := kv.Write(b, backends.NoSync); err != nil {
		t.Fatal(err)
	}
	snap, err := kv.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	// The store moves on: values change, keys come and go, in every range.
	writerDone := make(chan error, 1)
	go func() {
		for g := 0; g < 20; g++ {
			b := backends.NewBatch()
			for i := g; i < keys; i += 37 {
				b.Put(key(i), []byte("new"))
				b.Put(append(key(i), 'x'), []byte("added"))
				b.Delete(key(i + 1))
			}
			if err := kv.Write(b, backends.NoSync); err != nil {
				writerDone <- err
				return
			}
		}
		writerDone <- nil
	}()
	// ranges[r] is [bound(r), bound(r+1)); the first and last open-ended
	// on the prefix, as the coin scan cuts them.
	const ranges = 16
	bound := func(r int) []byte { return []byte{'p', byte(r * keys / ranges >> 8), byte(r * keys / ranges)} }
	its := make([]backends.Iterator, ranges)
	for r := range its {
		rg := backends.PrefixRange([]byte{'p'})
		if r > 0 {
			rg.Start = bound(r)
		}
		if r < ranges-1 {
			rg.End = bound(r + 1)
		}
		if its[r], err = snap.NewIterator(rg); err != nil {
			t.Fatal(err)
		}
	}
	// walk drains iterators in turn, one step each, and checks that range
	// r holds keys r*keys/ranges up to the next range's first.
	walk := func(rs ...int) error {
		next := make([]int, len(rs))
		for j, r := range rs {
			next[j] = r * keys / ranges
		}
		for live := len(rs); live > 0; {
			live = 0
			for j, r := range rs {
				it := its[r]
				if next[j] < 0 {
					continue
				}
				if !it.Next() {
					if err := it.Err(); err != nil {
						return fmt.Errorf("range %d: %w", r, err)
					}
					if next[j] != (r+1)*keys/ranges {
						return fmt.Errorf("range %d ends before key %d", r, next[j])
					}
					next[j] = -1
					continue
				}
				live++
				i := next[j]
				if !bytes.Equal(it.Key(), key(i)) || string(it.Value()) != fmt.Sprintf("v%d", i) {
					return fmt.Errorf("range %d: %q=%q, want key %d", r, it.Key(), it.Value(), i)
				}
				next[j]++
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	errc := make(chan error, ranges)
	for r := 0; r < ranges; r += 2 {
		wg.Go(func() { errc <- walk(r, r+1) })
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Error(err)
		}
	}
	for _, it := range its {
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
}

func testConcurrent(t *testing.T, kv backends.KV) {
	const (
		readers  = 4
		batches  = 60
		perBatch = 40
	)
	// Batch g writes keys c/g/i = g, and deletes batch g-10.
	var written atomic.Int64 // batches fully written
	written.Store(-1)
	var started atomic.Int64 // batches whose Write has begun (may be visible)
	started.Store(-1)
	var done atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, readers+1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		b := backends.NewBatch()
		for g := 0; g < batches; g++ {
			b.Reset()
			for i := 0; i < perBatch; i++ {
				b.Put(fmt.Appendf(nil, "c/%03d/%03d", g, i), fmt.Appendf(nil, "%d", g))
			}
			if g >= 10 {
				for i := 0; i < perBatch; i++ {
					b.Delete(fmt.Appendf(nil, "c/%03d/%03d", g-10, i))
				}
			}
			mode := backends.NoSync
			if g%10 == 0 {
				mode = backends.Sync
			}
			started.Store(int64(g))
			if err := kv.Write(b, mode); err != nil {
				errc <- err
				return
			}
			written.Store(int64(g))
		}
	}()
	for r := 0; r < readers; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 9))
			for !done.Load() {
				w := written.Load()
				if w < 0 {
					runtime.Gosched()
					continue
				}
				// A batch known to be written and not yet deleted is readable.
				g := w - rng.Int64N(min(w+1, 5))
				i := rng.IntN(perBatch)
				v, err := kv.Get(fmt.Appendf(nil, "c/%03d/%03d", g, i))
				// Deleted meanwhile by batch g+10, whose Write may be
				// visible before it returns and `written` moves.
				if errors.Is(err, backends.ErrNotFound) && started.Load() >= g+10 {
					continue
				}
				if err != nil {
					errc <- fmt.Errorf("reader %d: Get batch %d key %d (written %d): %w", r, g, i, w, err)
					return
				}
				if string(v) != fmt.Sprint(g) {
					errc <- fmt.Errorf("reader %d: value %q for batch %d", r, v, g)
					return
				}
				if r%2 == 0 {
					if err := checkLive(kv); err != nil {
						errc <- fmt.Errorf("reader %d: %w", r, err)
						return
					}
				}
			}
		}(r)
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if got := len(collect(t, kv, backends.PrefixRange([]byte("c/")))); got != 10*perBatch {
		t.Fatalf("%d keys left, want %d", got, 10*perBatch)
	}
}

// checkLive iterates c/ in one snapshot: it must hold whole batches only, at
// most 10 consecutive ones.
func checkLive(kv backends.KV) error {
	it, err := kv.NewIterator(backends.PrefixRange([]byte("c/")))
	if err != nil {
		return err
	}
	defer it.Close()
	counts := map[string]int{}
	for it.Next() {
		counts[string(it.Key()[2:5])]++
	}
	if err := it.Err(); err != nil {
		return err
	}
	if len(counts) > 10 {
		return fmt.Errorf("%d live batches in one view, want <= 10", len(counts))
	}
	for g, n := range counts {
		if n != 40 {
			return fmt.Errorf("batch %s has %d keys in one view", g, n)
		}
	}
	return nil
}

func testReopen(t *testing.T, open func(t *testing.T, dir string) backends.KV) {
	dir := t.TempDir()
	kv := open(t, dir)
	write(t, kv, backends.Sync, kvPair{"sync", "1"})
	write(t, kv, backends.NoSync, kvPair{"nosync-then-sync", "2"})
	if err := kv.Sync(); err != nil {
		t.Fatal(err)
	}
	write(t, kv, backends.NoSync, kvPair{"nosync-then-close", "3"})
	del(t, kv, "never")
	if err := kv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	kv = open(t, dir)
	defer kv.Close()
	wantGet(t, kv, "sync", ptr("1"))
	wantGet(t, kv, "nosync-then-sync", ptr("2"))
	wantGet(t, kv, "nosync-then-close", ptr("3"))
	// And once more after writes on the reopened store.
	del(t, kv, "sync")
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	kv = open(t, dir)
	defer kv.Close()
	wantGet(t, kv, "sync", nil)
	wantGet(t, kv, "nosync-then-sync", ptr("2"))
}

func testUseAfterClose(t *testing.T, open func(t *testing.T, dir string) backends.KV) {
	kv := open(t, t.TempDir())
	write(t, kv, backends.NoSync, kvPair{"a", "1"}, kvPair{"b", "2"})
	// Live readers at Close time must be released, not crash the process.
	it1, err := kv.NewIterator(backends.Range{})
	if err != nil {
		t.Fatal(err)
	}
	it1.Next()
	it2, err := kv.NewIterator(backends.Range{Prefix: []byte("b")})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := kv.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	sit, err := snap.NewIterator(backends.Range{})
	if err != nil {
		t.Fatal(err)
	}
	sit.Next()
	closedIt, err := kv.NewIterator(backends.Range{})
	if err != nil {
		t.Fatal(err)
	}
	_ = closedIt.Close()

	if err := kv.Close(); err != nil {
		t.Fatalf("Close with live iterators/snapshot: %v", err)
	}
	if err := kv.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	isClosed := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, backends.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", what, err)
		}
	}
	_, err = kv.Get([]byte("a"))
	isClosed("Get", err)
	_, err = kv.Has([]byte("a"))
	isClosed("Has", err)
	_, err = kv.NewIterator(backends.Range{})
	isClosed("NewIterator", err)
	b := backends.NewBatch()
	b.Put([]byte("c"), []byte("3"))
	isClosed("Write", kv.Write(b, backends.Sync))
	isClosed("Write(empty)", kv.Write(backends.NewBatch(), backends.NoSync))
	isClosed("Sync", kv.Sync())
	_, err = kv.NewSnapshot()
	isClosed("NewSnapshot", err)
	_, err = snap.Get([]byte("a"))
	isClosed("snapshot Get", err)
	_, err = snap.NewIterator(backends.Range{})
	isClosed("snapshot NewIterator", err)
	for i, it := range []backends.Iterator{it1, it2, sit} {
		if it.Next() {
			t.Errorf("iterator %d advances after store Close", i)
		}
		isClosed(fmt.Sprintf("iterator %d Err", i), it.Err())
		if it.Key() != nil || it.Value() != nil {
			t.Errorf("iterator %d has a key/value after Close and Next", i)
		}
		if err := it.Close(); err != nil {
			t.Errorf("iterator %d Close after store Close: %v", i, err)
		}
	}
	if err := snap.Close(); err != nil {
		t.Errorf("snapshot Close after store Close: %v", err)
	}
	isClosed("closed iterator Err", closedIt.Err())

	// Close racing with readers: no panic, only ErrClosed.
	kv = open(t, t.TempDir())
	write(t, kv, backends.NoSync, kvPair{"a", "1"})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				it, err := kv.NewIterator(backends.Range{})
				if err != nil {
					return
				}
				for it.Next() {
				}
				_ = it.Close()
				if _, err := kv.Get([]byte("a")); errors.Is(err, backends.ErrClosed) {
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if err := kv.Close(); err != nil {
		t.Fatalf("Close under load: %v", err)
	}
	wg.Wait()
}

// testWriteAppend: WriteAppend (the store's own, or Write where it has
// none) applies appended batches, and a batch that is not an append, as
// Write does: every key reads back, in order, with its last value.
func testWriteAppend(t *testing.T, kv backends.KV) {
	want := map[string]string{}
	key := func(i int) string { return fmt.Sprintf("k%08d", i) }
	for round := range 3 {
		b := backends.NewBatch()
		for i := round * 5000; i < (round+1)*5000; i++ {
			v := fmt.Sprintf("v%d-%s", i, bytes.Repeat([]byte{'x'}, i%97))
			b.Put([]byte(key(i)), []byte(v))
			want[key(i)] = v
		}
		if err := backends.WriteAppend(kv, b, backends.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	// Not an append: keys before, among and after the existing ones, a
	// deletion, an overwrite.
	b := backends.NewBatch()
	b.Put([]byte("a"), []byte("first"))
	want["a"] = "first"
	b.Put([]byte(key(7)+"-between"), []byte("mid"))
	want[key(7)+"-between"] = "mid"
	b.Delete([]byte(key(100)))
	delete(want, key(100))
	b.Put([]byte(key(200)), []byte("new"))
	want[key(200)] = "new"
	b.Put([]byte("z"), []byte("last"))
	want["z"] = "last"
	if err := backends.WriteAppend(kv, b, backends.Sync); err != nil {
		t.Fatal(err)
	}
	it, err := kv.NewIterator(backends.Range{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	prev := ""
	for it.Next() {
		k, v := string(it.Key()), string(it.Value())
		if n > 0 && k <= prev {
			t.Fatalf("key %q after %q", k, prev)
		}
		if w, ok := want[k]; !ok || w != v {
			t.Fatalf("key %q = %q, want %q (present %v)", k, v, w, ok)
		}
		prev = k
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Fatalf("%d keys, want %d", n, len(want))
	}
}
