package kvstore

import (
	"cmp"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestWritebackTilesAppends checks that the writeback hints cover every
// appended byte once, in order, from the size the file had at open, and
// restart at zero in a new file.
func TestWritebackTilesAppends(t *testing.T) {
	defer func(n, m int64) { writebackBytes, blockFileMax = n, m }(writebackBytes, blockFileMax)
	writebackBytes, blockFileMax = 100, 1000
	dir := t.TempDir()
	pre, err := openFlatFiles(dir, "blk")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pre.append(make([]byte, 33)); err != nil {
		t.Fatal(err)
	}
	if err := pre.close(); err != nil {
		t.Fatal(err)
	}

	f, err := openFlatFiles(dir, "blk")
	if err != nil {
		t.Fatal(err)
	}
	type span struct {
		file   string
		off, n int64
	}
	var mu sync.Mutex
	var got []span
	f.writeback = func(h *os.File, off, n int64) {
		mu.Lock()
		got = append(got, span{h.Name(), off, n})
		mu.Unlock()
	}
	sizes := []int{40, 40, 40, 250, 10, 300, 300, 300, 90, 95}
	for _, n := range sizes {
		if _, err := f.append(make([]byte, n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.close(); err != nil {
		t.Fatal(err)
	}
	// File 0 starts at 33; the second 300 starts file 1 (713+300 > 1000).
	// The hints run on goroutines, so they are compared in file order.
	want := []span{
		{f.name(0), 33, 120}, {f.name(0), 153, 250}, {f.name(0), 403, 310},
		{f.name(1), 0, 300}, {f.name(1), 300, 300}, {f.name(1), 600, 185},
	}
	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(got, func(a, b span) int {
		return cmp.Or(strings.Compare(a.file, b.file), cmp.Compare(a.off, b.off))
	})
	if len(got) != len(want) {
		t.Fatalf("hints %v, want %v", got, want)
	}
	for i := range want {
		g := got[i]
		g.file = g.file[len(g.file)-len(want[i].file):]
		if g != want[i] {
			t.Fatalf("hint %d: %v, want %v", i, g, want[i])
		}
	}
}
