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
	if 10*tab.len() > 7*len(tab.slots) {
		t.Fatalf("%d entries in %d slots", tab.len(), len(tab.slots))
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
