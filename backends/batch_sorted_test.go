package backends

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
)

type mapWriter struct {
	m    map[string]string
	keys []string
}

func (w *mapWriter) Put(k, v []byte) error {
	w.m[string(k)] = string(v)
	w.keys = append(w.keys, string(k))
	return nil
}
func (w *mapWriter) Delete(k []byte) error {
	delete(w.m, string(k))
	w.keys = append(w.keys, string(k))
	return nil
}

// TestReplayLastEqualsReplay: applying only the last operation on each key,
// in key order, gives the same final state as applying the batch in its
// order, and keys arrive strictly ascending.
func TestReplayLastEqualsReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 50; round++ {
		b := NewBatch()
		for i := 0; i < 200; i++ {
			k := []byte(fmt.Sprintf("k%02d", rng.IntN(40)))
			if round%5 == 0 { // already in key order: replayed as it is
				k = []byte(fmt.Sprintf("k%03d", i))
			}
			if rng.IntN(3) == 0 {
				b.Delete(k)
			} else {
				b.Put(k, []byte(fmt.Sprint(i)))
			}
		}
		a := &mapWriter{m: map[string]string{}}
		if err := b.Replay(a); err != nil {
			t.Fatal(err)
		}
		l := &mapWriter{m: map[string]string{}}
		if err := b.ReplayLast(l); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(a.m, l.m) {
			t.Fatalf("round %d: last-only replay differs", round)
		}
		for i := 1; i < len(l.keys); i++ {
			if l.keys[i] <= l.keys[i-1] {
				t.Fatalf("round %d: last-only replay not strictly ascending", round)
			}
		}
	}
}

func TestAscendingPuts(t *testing.T) {
	for _, c := range []struct {
		name string
		ops  func(b *Batch)
		want bool
	}{
		{"empty", func(b *Batch) {}, false},
		{"one", func(b *Batch) { b.Put([]byte("a"), nil) }, true},
		{"ascending", func(b *Batch) { b.Put([]byte("a"), nil); b.Put([]byte("ab"), nil); b.Put([]byte("b"), []byte("v")) }, true},
		{"empty key first", func(b *Batch) { b.Put(nil, nil); b.Put([]byte("a"), nil) }, true},
		{"repeated", func(b *Batch) { b.Put([]byte("a"), nil); b.Put([]byte("a"), nil) }, false},
		{"descending", func(b *Batch) { b.Put([]byte("b"), nil); b.Put([]byte("a"), nil) }, false},
		{"deletion", func(b *Batch) { b.Put([]byte("a"), nil); b.Delete([]byte("b")) }, false},
	} {
		b := NewBatch()
		c.ops(b)
		if got := b.AscendingPuts(); got != c.want {
			t.Errorf("%s: AscendingPuts = %v, want %v", c.name, got, c.want)
		}
	}
}
