package bbolt

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

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

// TestScanReadsAhead: with the file's pages out of the page cache, a scan
// of its first tenth leaves megabytes more in the cache (the windows it
// asked for) than a lookup of the same keys (Range.Few) does.
func TestScanReadsAhead(t *testing.T) {
	dir := t.TempDir()
	const n, vlen = 1 << 16, 1000 // 64 MiB of records, one to a chunk
	write := func() {
		kv, err := Open(dir, backends.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer kv.Close()
		b := backends.NewBatch()
		for i := range n {
			b.Put(fmt.Appendf(nil, "k%08d", i), make([]byte, vlen))
		}
		if err := kv.(*DB).WriteAppend(b, backends.Sync); err != nil {
			t.Fatal(err)
		}
	}
	write()
	path := filepath.Join(dir, FileName)
	scan := func(few bool) float64 {
		if got := dropCached(t, path); got > 1 {
			t.Skipf("%.1f MiB of the file still cached after FADV_DONTNEED", got)
		}
		kv, err := Open(dir, backends.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer kv.Close()
		it, err := kv.NewIterator(backends.Range{End: fmt.Appendf(nil, "k%08d", n/10), Few: few})
		if err != nil {
			t.Fatal(err)
		}
		keys := 0
		for it.Next() {
			keys++
		}
		if err := it.Close(); err != nil || keys != n/10 {
			t.Fatalf("%d keys, %v; want %d", keys, err, n/10)
		}
		time.Sleep(200 * time.Millisecond) // the windows' reads complete
		return cachedMiB(t, path)
	}
	lookup, scanned := scan(true), scan(false)
	// The same pages read, so without the windows the two are equal.
	if scanned < lookup+2 {
		t.Fatalf("cached after a lookup of the first tenth %.1f MiB, after a scan %.1f MiB (want 2 more)", lookup, scanned)
	}
	t.Logf("cached after reading 6.4 MiB: lookup %.1f MiB, scan %.1f MiB", lookup, scanned)
}

// dropCached drops path's pages from the page cache and returns the MiB
// still cached.
func dropCached(t *testing.T, path string) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Skip(err)
	}
	return cachedMiB(t, path)
}

// cachedMiB is how much of path the page cache holds (mincore).
func cachedMiB(t *testing.T, path string) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	pg := os.Getpagesize()
	vec := make([]byte, (len(m)+pg-1)/pg)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Skip(e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return float64(n*pg) / (1 << 20)
}
