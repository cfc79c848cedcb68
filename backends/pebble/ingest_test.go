package pebble

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"utxod/backends"
)

// TestWriteAppendIngests: ascending Puts through WriteAppend become a
// bottom-level table without passing the memtable, other batches take
// Write's path, and a table file a crashed append left is removed at the
// next open.
func TestWriteAppendIngests(t *testing.T) {
	dir := t.TempDir()
	kv, err := Open(dir, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := kv.(*DB)
	b := backends.NewBatch()
	for i := range 1000 {
		b.Put([]byte{0x10, byte(i >> 8), byte(i)}, []byte("v"))
	}
	if err := d.WriteAppend(b, backends.NoSync); err != nil {
		t.Fatal(err)
	}
	m := d.db.Metrics()
	if n := m.Levels[len(m.Levels)-1].TablesCount; n != 1 {
		t.Fatalf("bottom-level tables after an append: %d, want 1", n)
	}
	// The last level's tables carry no bloom filter (pebble never reads it).
	levels, err := d.db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range levels[len(levels)-1] {
		if tab.Properties.FilterSize != 0 || tab.Properties.FilterPolicyName != "" {
			t.Fatalf("bottom-level table with a %q filter of %d bytes", tab.Properties.FilterPolicyName, tab.Properties.FilterSize)
		}
	}
	b.Reset()
	b.Put([]byte{0x20}, []byte("a"))
	b.Delete([]byte{0x10, 0, 5})
	if err := d.WriteAppend(b, backends.NoSync); err != nil {
		t.Fatal(err)
	}
	if m := d.db.Metrics(); m.Levels[len(m.Levels)-1].TablesCount != 1 {
		t.Fatal("a batch with a deletion was ingested")
	}
	if _, err := kv.Get([]byte{0x10, 0, 5}); err == nil {
		t.Fatal("deleted key still present")
	}
	if v, err := kv.Get([]byte{0x10, 3, 0xe7}); err != nil || string(v) != "v" {
		t.Fatalf("ingested key: %q, %v", v, err)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, appendFilePrefix+"7-1.sst")
	if err := os.WriteFile(stale, []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	kv, err = Open(dir, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale append file: %v", err)
	}
	if v, err := kv.Get([]byte{0x10, 0, 0}); err != nil || string(v) != "v" {
		t.Fatalf("after reopen: %q, %v", v, err)
	}
}
