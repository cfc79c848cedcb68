package kvstore

import (
	"math/rand/v2"
	"testing"

	"utxod/wire"
)

// TestCoinTableModel drives the table with random inserts, updates,
// deletes and filters against a Go map. Txids come from a small pool whose
// members often share their first 8 bytes (the tag), and the table stays
// small, so probes wrap around and backward shifts cross the end.
func TestCoinTableModel(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		pool := make([]wire.Hash, 3000)
		for i := range pool {
			for j := range pool[i] {
				pool[i][j] = byte(r.Uint32())
			}
			if r.IntN(3) == 0 && i > 0 { // same tag as an earlier txid
				copy(pool[i][:8], pool[r.IntN(i)][:8])
			}
		}
		tab, a := newCoinTable(), newArena()
		model := map[wire.Hash]uint64{}
		check := func(step int) {
			t.Helper()
			if tab.len() != len(model) {
				t.Fatalf("seed %d step %d: len %d, model %d", seed, step, tab.len(), len(model))
			}
			for _, h := range pool {
				i, found := tab.find(&h, &a)
				v, want := model[h]
				if found != want || found && uint64(tab.slots[i].e.len()) != v {
					t.Fatalf("seed %d step %d: find %x = %v, model %v", seed, step, h[:4], found, want)
				}
			}
		}
		for step := range 6000 {
			h := pool[r.IntN(len(pool))]
			i, found := tab.find(&h, &a)
			switch op := r.IntN(10); {
			case op < 5 && !found:
				v := uint64(r.IntN(1000) + 1)
				tab.insertAt(i, tagOf(&h), packEntry(a.put(&h, make([]byte, v)), int(v), 0))
				model[h] = v
			case op < 7 && found:
				v := uint64(r.IntN(1000) + 1)
				tab.slots[i].e = packEntry(a.put(&h, make([]byte, v)), int(v), 0)
				model[h] = v
			case op < 9 && found:
				tab.deleteAt(i)
				delete(model, h)
			case op == 9 && r.IntN(50) == 0:
				tab.filter(func(e cacheEntry) (cacheEntry, bool) { return e, e.len()%2 == 0 })
				for k, v := range model {
					if v%2 != 0 {
						delete(model, k)
					}
				}
			}
			if step%500 == 0 {
				check(step)
			}
		}
		check(-1)
	}
}

// TestCoinCacheBytesEmpty: an empty cache holds no table memory, so a
// flush over budget leaves it at zero bytes.
func TestCoinCacheBytesEmpty(t *testing.T) {
	c := newCoinCache(nil)
	if c.bytes() != 0 {
		t.Fatalf("new cache: %d bytes", c.bytes())
	}
	if err := c.setRecord(wire.Hash{1}, slotRef{i: -1}, 0, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if got, want := c.bytes(), int64(tableMinSlots*16+32+3); got != want {
		t.Fatalf("one entry: %d bytes, want %d", got, want)
	}
	c.reset()
	if c.bytes() != 0 {
		t.Fatalf("reset cache: %d bytes", c.bytes())
	}
}
