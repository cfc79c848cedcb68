package bbolt

import (
	"fmt"
	"testing"

	"utxod/backends"
	"utxod/internal/procstatus"
)

// rssFileKiB is the process's resident file-backed pages (RssFile).
func rssFileKiB(t *testing.T) int {
	t.Helper()
	kib, err := procstatus.KiB("RssFile:")
	if err != nil {
		t.Skip(err)
	}
	return int(kib)
}

// TestScanReleasesMapping: iterators that release the mapping every 4 MiB
// read between them keep a few MiB of the file resident in the process,
// whether one reads it all or each a little; iterators that never release
// it, and lookups (Range.Few), which do not count, keep every page they
// read (64 MiB here). All read every key.
func TestScanReleasesMapping(t *testing.T) {
	kv, err := Open(t.TempDir(), backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	d := kv.(*DB)
	const n, vlen = 1 << 16, 1000
	b := backends.NewBatch()
	for i := range n {
		b.Put(fmt.Appendf(nil, "k%08d", i), make([]byte, vlen))
	}
	if err := d.WriteAppend(b, backends.NoSync); err != nil {
		t.Fatal(err)
	}
	// scan reads every key in ranges of per keys, an iterator each, as
	// the dump's workers do.
	scan := func(every int64, per int, few bool) (keys, grewKiB int) {
		d.releaseEvery = every
		d.scanned.Store(0)
		release(t, d) // start with nothing mapped
		before, peak := rssFileKiB(t), 0
		for lo := 0; lo < n; lo += per {
			it, err := d.NewIterator(backends.Range{Start: fmt.Appendf(nil, "k%08d", lo), End: fmt.Appendf(nil, "k%08d", lo+per), Few: few})
			if err != nil {
				t.Fatal(err)
			}
			for it.Next() {
				if keys++; keys%1024 == 0 {
					peak = max(peak, rssFileKiB(t))
				}
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
		}
		return keys, peak - before
	}
	for _, per := range []int{n, 256} {
		kr, released := scan(4<<20, per, false)
		kk, kept := scan(0, per, false)
		kf, lookups := scan(4<<20, per, true)
		if kr != n || kk != n || kf != n {
			t.Fatalf("%d keys an iterator: scans read %d, %d and %d keys, want %d", per, kr, kk, kf, n)
		}
		if kept < 48<<10 || lookups < 48<<10 || released > 16<<10 {
			t.Fatalf("%d keys an iterator: the mapping grew by %d KiB with releases (want ≤ 16 MiB), %d KiB without, %d KiB by lookups (want ≥ 48 MiB)", per, released, kept, lookups)
		}
	}
}

// release unmaps the file's pages from the process.
func release(t *testing.T, d *DB) {
	tx, err := d.db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	releaseMapped(tx)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
}
