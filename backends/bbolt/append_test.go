package bbolt

import (
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"

	"utxod/backends"
)

// TestWriteAppendPacksPages: the same sorted keys written in batches take
// far fewer leaf pages through WriteAppend than through Write (bbolt's
// default fill leaves each page of an append half empty).
func TestWriteAppendPacksPages(t *testing.T) {
	leafPages := func(appendMode bool) int {
		kv, err := Open(t.TempDir(), backends.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer kv.Close()
		d := kv.(*DB)
		for round := range 4 {
			b := backends.NewBatch()
			for i := range 20000 {
				b.Put(fmt.Appendf(nil, "c%02d%07d", round, i), make([]byte, 40))
			}
			write := d.Write
			if appendMode {
				write = d.WriteAppend
			}
			if err := write(b, backends.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		var n int
		if err := d.db.View(func(tx *bolt.Tx) error {
			n = tx.Bucket(bucket).Stats().LeafPageN
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	plain, packed := leafPages(false), leafPages(true)
	if packed*10 > plain*6 {
		t.Fatalf("leaf pages: WriteAppend %d, Write %d; want at most 60 %%", packed, plain)
	}
	t.Logf("leaf pages: Write %d, WriteAppend %d", plain, packed)
}
