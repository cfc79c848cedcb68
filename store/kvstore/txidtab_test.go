package kvstore

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"utxod/wire"
)

// tableOps applies ops decoded from data to a txidTable and to a Go map, and
// fails at the first difference. Keys come from a small pool, many sharing
// their first word (the home slot's input), so runs form, wrap around the
// end of the slots and are cut by removals.
func tableOps(t *testing.T, data []byte) {
	var pool [64]wire.Hash
	for i := range pool {
		binary.LittleEndian.PutUint64(pool[i][:8], uint64(i%5)) // five homes
		pool[i][8] = byte(i)
	}
	tab := newTxidTable()
	model := map[wire.Hash]cacheEntry{}
	check := func(step int) {
		t.Helper()
		if tab.len() != len(model) {
			t.Fatalf("step %d: len %d, model %d", step, tab.len(), len(model))
		}
		for i := range pool {
			e, ok := tab.get(&pool[i])
			me, mok := model[pool[i]]
			if ok != mok || e != me {
				t.Fatalf("step %d: key %d: (%v, %v), model (%v, %v)", step, i, e, ok, me, mok)
			}
		}
		n := 0
		for k, e := range tab.all() {
			if me, ok := model[k]; !ok || me != e {
				t.Fatalf("step %d: all yields %x=%v, model (%v, %v)", step, k[:9], e, me, ok)
			}
			n++
		}
		if n != len(model) {
			t.Fatalf("step %d: all yields %d entries, model %d", step, n, len(model))
		}
	}
	for step := 0; step+1 < len(data); step += 2 {
		op, k := data[step]%4, &pool[data[step+1]%64]
		e := cacheEntry(data[step]) << 2 // any entry, 0 included
		switch op {
		case 0, 1:
			tab.set(k, e)
			model[*k] = e
		case 2:
			tab.delete(k)
			delete(model, *k)
		case 3:
			// Drop the keys whose second byte is below a threshold, change the
			// others; each entry must be seen exactly once.
			seen := map[wire.Hash]int{}
			cut := data[step+1] % 64
			tab.update(func(k *wire.Hash, e cacheEntry) (cacheEntry, bool) {
				seen[*k]++
				return e + 4, k[8] >= cut
			})
			if len(seen) != len(model) {
				t.Fatalf("step %d: update saw %d entries, model %d", step, len(seen), len(model))
			}
			for k, n := range seen {
				if n != 1 {
					t.Fatalf("step %d: update saw %x %d times", step, k[:9], n)
				}
			}
			for k, e := range model {
				if k[8] >= cut {
					model[k] = e + 4
				} else {
					delete(model, k)
				}
			}
		}
		check(step)
	}
}

// TestTxidTableSplits runs random operations on enough keys to split
// segments and double the directory, some keys sharing their first word
// (the directory index and the home slot's input) with others.
func TestTxidTableSplits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	tab := newTxidTable()
	model := map[wire.Hash]cacheEntry{}
	var keys []wire.Hash
	for round := range 6 {
		for range 20000 {
			var k wire.Hash
			if len(keys) > 0 && rng.IntN(8) == 0 {
				k = keys[rng.IntN(len(keys))] // same first word, another txid
				k[31]++
			} else {
				for j := 0; j < 32; j += 8 {
					binary.LittleEndian.PutUint64(k[j:], rng.Uint64())
				}
			}
			keys = append(keys, k)
			e := cacheEntry(rng.Uint32()) << 2
			tab.set(&k, e)
			model[k] = e
		}
		for range 8000 {
			k := keys[rng.IntN(len(keys))]
			tab.delete(&k)
			delete(model, k)
		}
		checkTable(t, &tab)
		if tab.len() != len(model) {
			t.Fatalf("round %d: len %d, model %d", round, tab.len(), len(model))
		}
		for _, k := range keys {
			e, ok := tab.get(&k)
			if me, mok := model[k]; ok != mok || e != me {
				t.Fatalf("round %d: (%v, %v), model (%v, %v)", round, e, ok, me, mok)
			}
		}
	}
	if tab.depth < 4 {
		t.Fatalf("directory depth %d: the test did not split much", tab.depth)
	}
}

func TestTxidTableModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 12))
	for range 200 {
		data := make([]byte, 2*rng.IntN(600))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		tableOps(t, data)
	}
}

func FuzzTxidTable(f *testing.F) {
	f.Add([]byte{0, 1, 0, 6, 0, 11, 2, 1, 3, 0})
	f.Fuzz(tableOps)
}

// TestTxidTableGrow fills a table far past its first size with random
// txids, removes half and reads every one back.
func TestTxidTableGrow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	tab := newTxidTable()
	keys := make([]wire.Hash, 50000)
	for i := range keys {
		for j := 0; j < 32; j += 8 {
			binary.LittleEndian.PutUint64(keys[i][j:], rng.Uint64())
		}
		tab.set(&keys[i], cacheEntry(i)<<2)
	}
	for i := 0; i < len(keys); i += 2 {
		tab.delete(&keys[i])
	}
	if tab.len() != len(keys)/2 {
		t.Fatalf("len %d, want %d", tab.len(), len(keys)/2)
	}
	for i := range keys {
		e, ok := tab.get(&keys[i])
		if ok != (i%2 == 1) || (ok && e != cacheEntry(i)<<2) {
			t.Fatalf("key %d: (%v, %v)", i, e, ok)
		}
	}
	checkTable(t, &tab)
	tab.update(func(k *wire.Hash, e cacheEntry) (cacheEntry, bool) { return e, k[1]&1 == 0 })
	checkTable(t, &tab)
	for i := range keys {
		_, ok := tab.get(&keys[i])
		if want := i%2 == 1 && keys[i][1]&1 == 0; ok != want {
			t.Fatalf("after update: key %d found %v, want %v", i, ok, want)
		}
	}
}

// checkTable checks the table's structure: each segment fills the aligned
// run of directory entries its depth says, holds only keys of that run,
// each reachable from its home, and the counts add up.
func checkTable(t *testing.T, tab *txidTable) {
	t.Helper()
	n, segs := 0, 0
	for i := 0; i < len(tab.dir); {
		s := tab.dir[i]
		span := 1 << (tab.depth - s.depth)
		if i%span != 0 {
			t.Fatalf("segment of depth %d at directory entry %d", s.depth, i)
		}
		for j := i; j < i+span; j++ {
			if tab.dir[j] != s {
				t.Fatalf("directory entries %d..%d: entry %d is another segment", i, i+span, j)
			}
		}
		m := 0
		for j := range s.slots {
			sl := &s.slots[j]
			if sl.val == 0 {
				continue
			}
			m++
			if got, _ := tab.seg(&sl.key); got != s {
				t.Fatalf("key %x in the wrong segment", sl.key[:8])
			}
			if e, ok := tab.get(&sl.key); !ok || uint64(e)|slotUsed != sl.val {
				t.Fatalf("key %x not reachable from its home", sl.key[:8])
			}
			// Robin Hood order: an entry is at most one slot farther from
			// its home than the one before it, and at its home after an
			// empty slot.
			prev := &s.slots[(j-1)&segMask]
			d := tab.dist(sl, uint64(j))
			if prev.val == 0 && d != 0 || prev.val != 0 && d > tab.dist(prev, uint64(j-1)&segMask)+1 {
				t.Fatalf("slot %d: %d from home after a slot %d from home", j, d, tab.dist(prev, uint64(j-1)&segMask))
			}
		}
		if m != s.n || m > segMax {
			t.Fatalf("segment holds %d entries, counts %d (most %d)", m, s.n, segMax)
		}
		n += m
		segs++
		i += span
	}
	if n != tab.len() || segs != tab.nSeg {
		t.Fatalf("%d entries in %d segments; the table counts %d in %d", n, segs, tab.len(), tab.nSeg)
	}
}

// BenchmarkCacheLookup compares the cache's table with the Go map it
// replaced, on random txids of a cache of early-chain size, one lookup at a
// time and after warming.
func BenchmarkCacheLookup(b *testing.B) {
	const n = 300000
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]wire.Hash, n)
	for i := range keys {
		for j := 0; j < 32; j += 8 {
			binary.LittleEndian.PutUint64(keys[i][j:], rng.Uint64())
		}
	}
	order := make([]wire.Hash, n)
	for i, j := range rng.Perm(n) {
		order[i] = keys[j]
	}
	b.Run("map", func(b *testing.B) {
		m := make(map[wire.Hash]cacheEntry)
		for i := range keys {
			m[keys[i]] = cacheEntry(i)
		}
		var acc cacheEntry
		for i := 0; b.Loop(); i++ {
			acc += m[order[i%n]]
		}
		sinkEntry = acc
	})
	b.Run("table", func(b *testing.B) {
		tab := newTxidTable()
		for i := range keys {
			tab.set(&keys[i], cacheEntry(i))
		}
		var acc cacheEntry
		for i := 0; b.Loop(); i++ {
			e, _ := tab.get(&order[i%n])
			acc += e
		}
		sinkEntry = acc
	})
}

var sinkEntry cacheEntry
