package bbolt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"
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

// writeRecords writes n records (keys k00000000 on, values of vlen zero
// bytes, one to a chunk at 1,000) into a new store in dir, synced and
// closed, and returns its file's path.
func writeRecords(t testing.TB, dir string, n, vlen int) string {
	t.Helper()
	kv, err := Open(dir, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := backends.NewBatch()
	for i := range n {
		b.Put(fmt.Appendf(nil, "k%08d", i), make([]byte, vlen))
	}
	if err := kv.(*DB).WriteAppend(b, backends.Sync); err != nil {
		t.Fatal(err)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, FileName)
}

// reopen opens the store in dir read-only (nothing of its file mapped),
// the file's pages dropped from the page cache first when cold, else all
// read into it; it skips when the page cache will not do so.
func reopen(t testing.TB, dir string, cold bool) backends.KV {
	t.Helper()
	path := filepath.Join(dir, FileName)
	if cold {
		if got := dropCached(t, path); got > 1 {
			t.Skipf("%.1f MiB of the file still cached after FADV_DONTNEED", got)
		}
	} else if got, size := readCached(t, path), fileMiB(t, path); got < size-1 {
		t.Skipf("%.1f of %.1f MiB of the file cached after reading it", got, size)
	}
	kv, err := Open(dir, backends.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// fileMiB is path's size in MiB.
func fileMiB(t testing.TB, path string) float64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return float64(fi.Size()) / (1 << 20)
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
	const n = 1 << 16 // 64 MiB of records
	path := writeRecords(t, dir, n, 1000)
	scan := func(few bool) float64 {
		kv := reopen(t, dir, true)
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
func dropCached(t testing.TB, path string) float64 {
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
func cachedMiB(t testing.TB, path string) float64 {
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

// TestAdviseReadsLeaves: with the file's pages out of the page cache,
// Advise of 2,000 keys at random leaves the ~2,000 leaves they lie on
// cached (about 8 MiB) without reading them; its branch pages alone are
// well under 1 MiB.
func TestAdviseReadsLeaves(t *testing.T) {
	dir := t.TempDir()
	const n = 1 << 16 // 64 MiB of records
	path := writeRecords(t, dir, n, 1000)
	kv := reopen(t, dir, true)
	defer kv.Close()
	keys := make([][]byte, 2000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%08d", (i*7919)%n)
	}
	kv.(backends.Advisor).Advise(keys)
	time.Sleep(300 * time.Millisecond) // the leaves' reads complete
	if got := cachedMiB(t, path); got < 6 {
		t.Fatalf("%.1f MiB cached after Advise of 2,000 keys on as many leaves, want ≥ 6", got)
	}
}

// BenchmarkAdvisedGets reads 4,000 keys at random from a 256 MiB file,
// four readers at a time as a block's prefetch, its pages dropped from the
// page cache first ("cold") or all cached ("cached"; the store reopened
// either way, so nothing is mapped): "faults" Gets them alone, each
// uncached page a fault that waits for it; "advised" calls Advise
// alongside, as the prefetch does. It reports wall and CPU (user +
// system) a key.
//
//	go test ./backends/bbolt -run '^$' -bench AdvisedGets -benchtime 5x
func BenchmarkAdvisedGets(b *testing.B) {
	dir := b.TempDir()
	const n = 1 << 18
	writeRecords(b, dir, n, 1000)
	cpu := func() time.Duration {
		var ru unix.Rusage
		_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for _, arm := range []string{"cold/faults", "cold/advised", "cached/faults", "cached/advised"} {
		b.Run(arm, func(b *testing.B) {
			var wall, used time.Duration
			keys := make([][]byte, 4000)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				kv := reopen(b, dir, strings.HasPrefix(arm, "cold/"))
				for j := range keys {
					keys[j] = fmt.Appendf(nil, "k%08d", (i*104729+j*7919)%n)
				}
				b.StartTimer()
				t0, c0 := time.Now(), cpu()
				var wg sync.WaitGroup
				var next atomic.Int64
				if strings.HasSuffix(arm, "/advised") {
					wg.Go(func() { kv.(backends.Advisor).Advise(keys) })
				}
				for range 4 {
					wg.Go(func() {
						for j := next.Add(1) - 1; j < int64(len(keys)); j = next.Add(1) - 1 {
							if _, err := kv.Get(keys[j]); err != nil {
								panic(err)
							}
						}
					})
				}
				wg.Wait()
				wall, used = wall+time.Since(t0), used+cpu()-c0
				b.StopTimer()
				kv.Close()
				b.StartTimer()
			}
			per := float64(b.N * len(keys))
			b.ReportMetric(float64(wall.Nanoseconds())/per, "wall-ns/key")
			b.ReportMetric(float64(used.Nanoseconds())/per, "cpu-ns/key")
		})
	}
}

// readCached reads path through, so that the page cache holds it, and
// returns the MiB cached.
func readCached(t testing.TB, path string) float64 {
	t.Helper()
	if _, err := os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	return cachedMiB(t, path)
}

// TestCachedSample: a file whose pages are dropped is not taken for
// cached, and one read through is.
func TestCachedSample(t *testing.T) {
	dir := t.TempDir()
	path := writeRecords(t, dir, 1<<14, 1000)
	kv, err := Open(dir, backends.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	d := kv.(*DB)
	cached := func() (c bool) {
		_ = d.db.View(func(tx *bolt.Tx) error {
			c = txMapping(tx, int(d.pageSize)).cached([]byte("k"))
			return nil
		})
		return c
	}
	if got := dropCached(t, path); got > 1 {
		t.Skipf("%.1f MiB of the file still cached after FADV_DONTNEED", got)
	}
	if cached() {
		t.Fatal("a dropped file taken for cached")
	}
	readCached(t, path)
	if !cached() {
		t.Fatal("a file read through not taken for cached")
	}
}
