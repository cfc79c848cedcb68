package bbolt

import (
	"fmt"
	"testing"

	"utxod/backends"
)

// TestBatchKeys: no bound while the file has no more pages than the limit;
// beyond, about as many keys as pages the limit allows, each key on a page
// of its own in a large file (at 185 M coins, 6 M pages: about the limit),
// more in a file where keys share pages; a write updates the page count.
func TestBatchKeys(t *testing.T) {
	for _, tc := range []struct {
		pages    int64
		min, max int
	}{
		{0, 0, 0},
		{maxWritePages, 0, 0},
		{6_000_000, maxWritePages, maxWritePages * 101 / 100},
		{2 * maxWritePages, maxWritePages * 13 / 10, maxWritePages * 14 / 10}, // 2·ln 2 ≈ 1.386
	} {
		if got := batchKeys(tc.pages, maxWritePages); got < tc.min || got > tc.max {
			t.Errorf("batchKeys(%d pages) = %d, want %d–%d", tc.pages, got, tc.min, tc.max)
		}
	}
	kv, err := Open(t.TempDir(), backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	d := kv.(*DB)
	before := d.pages.Load()
	b := backends.NewBatch()
	for i := range 2000 {
		b.Put([]byte(fmt.Sprintf("key-%06d", i)), make([]byte, 100))
	}
	if err := kv.Write(b, backends.Sync); err != nil {
		t.Fatal(err)
	}
	if d.pages.Load() <= before || d.MaxBatchKeys() != 0 {
		t.Fatalf("pages %d → %d, MaxBatchKeys %d", before, d.pages.Load(), d.MaxBatchKeys())
	}
}
