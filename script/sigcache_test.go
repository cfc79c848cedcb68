package script

import "testing"

// TestSigCacheLazyShards: a new cache holds no table; a lookup allocates
// nothing, and an insertion allocates only its own shard's.
func TestSigCacheLazyShards(t *testing.T) {
	c := NewSigCache(DefaultSigCacheEntries)
	allocated := func() int {
		n := 0
		for i := range c.shards {
			if c.shards[i].buckets != nil {
				n++
			}
		}
		return n
	}
	var k1, k2 [32]byte
	k1[8], k2[8] = 1, 2 // shards 1 and 2
	k1[0], k2[0] = 0xaa, 0xbb
	if c.contains(&k1) || allocated() != 0 {
		t.Fatalf("new cache: contains %v, %d shards allocated", c.contains(&k1), allocated())
	}
	c.insert(&k1)
	if !c.contains(&k1) || c.contains(&k2) || allocated() != 1 {
		t.Fatalf("after one insert: contains %v %v, %d shards allocated", c.contains(&k1), c.contains(&k2), allocated())
	}
	if got := len(c.shards[1].buckets); uint64(got) != c.mask+1 {
		t.Fatalf("shard of %d buckets, want %d", got, c.mask+1)
	}
}
