package kvstore

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"utxod/backends"
	"utxod/wire"
)

// TestWriteBehind appends records with the writer goroutine started every
// few hundred bytes, reads them back while they are queued, in flight or
// written, and checks the files after a sync and a reopen.
func TestWriteBehind(t *testing.T) {
	defer func(n int, m int64) { writeBehindBytes, blockFileMax = n, m }(writeBehindBytes, blockFileMax)
	writeBehindBytes, blockFileMax = 300, 4000
	dir := t.TempDir()
	f, err := openFlatFiles(dir, "blk")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var recs [][]byte
	var locs [][]byte
	var mu sync.Mutex
	stop := make(chan struct{})
	var reads atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { // a reader, as Block under the chainstate's read lock
		rr := rand.New(rand.NewPCG(3, 4))
		for {
			select {
			case <-stop:
				return
			default:
			}
			mu.Lock()
			n := len(locs)
			if n == 0 {
				mu.Unlock()
				continue
			}
			k := rr.IntN(n)
			loc, want := locs[k], recs[k]
			mu.Unlock()
			got, _, err := f.readAt(loc)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("record %d read while written behind: %v", k, err)
				return
			}
			reads.Add(1)
		}
	})
	for i := range 400 {
		rec := make([]byte, 1+r.IntN(120))
		for j := range rec {
			rec[j] = byte(r.Uint32())
		}
		loc, err := f.append(wire.Hash{byte(i)}, rec)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		recs, locs = append(recs, rec), append(locs, loc)
		mu.Unlock()
	}
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if err := f.close(); err != nil {
		t.Fatal(err)
	}
	if f.cur == 0 {
		t.Fatal("the records never filled a file")
	}
	g, err := openFlatFiles(dir, "blk")
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	for k, loc := range locs {
		if got, _, err := g.readAt(loc); err != nil || !bytes.Equal(got, recs[k]) {
			t.Fatalf("record %d after reopening: %v", k, err)
		}
	}
	t.Logf("%d reads during the appends", reads.Load())
}

// TestWriteBehindFailure: a write that fails makes the rest of the queue
// fail with it and later appends refuse until takeFailed; every record
// accepted is then either in its file or among the failed ones, once, and
// the failed ones are readable from memory until taken.
func TestWriteBehindFailure(t *testing.T) {
	defer func(n int) { writeBehindBytes = n }(writeBehindBytes)
	writeBehindBytes = 200
	for _, failAt := range []int{0, 3, 17, 60} {
		dir := t.TempDir()
		f, err := openFlatFiles(dir, "rev")
		if err != nil {
			t.Fatal(err)
		}
		var writes atomic.Int32
		f.writeAt = func(h *os.File, b []byte, off int64) (int, error) {
			if int(writes.Add(1))-1 == failAt {
				return 0, &os.PathError{Op: "write", Path: "rev00000.dat", Err: syscall.ENOSPC}
			}
			return h.WriteAt(b, off)
		}
		type acc struct {
			rec []byte
			loc []byte
		}
		var accepted []acc
		refused := 0
		for i := range 80 {
			rec := bytes.Repeat([]byte{byte(i)}, 10+i%40)
			loc, err := f.append(wire.Hash{byte(i)}, rec)
			switch {
			case errors.Is(err, backends.ErrDiskFull):
				refused++
			case err != nil:
				t.Fatal(err)
			default:
				accepted = append(accepted, acc{rec, loc})
			}
		}
		failed, err := f.takeFailed()
		if !errors.Is(err, backends.ErrDiskFull) || len(failed) == 0 {
			t.Fatalf("failAt %d: takeFailed = %d writes, %v", failAt, len(failed), err)
		}
		inFailed := map[string]bool{}
		for _, w := range failed {
			inFailed[string(w.loc())] = true
		}
		for k, a := range accepted {
			got, _, err := f.readAt(a.loc)
			ok := err == nil && bytes.Equal(got, a.rec)
			if ok == inFailed[string(a.loc)] {
				t.Fatalf("failAt %d: record %d in the file %v, among the failed %v", failAt, k, ok, inFailed[string(a.loc)])
			}
		}
		if len(accepted) != failAt+len(failed) {
			t.Fatalf("failAt %d: %d accepted, %d failed", failAt, len(accepted), len(failed))
		}
		// Appends work again.
		if _, err := f.append(wire.Hash{0xff}, []byte{1, 2, 3}); err != nil {
			t.Fatalf("failAt %d: append after takeFailed: %v", failAt, err)
		}
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
		f.close()
		t.Logf("failAt %d: %d accepted, %d failed, %d refused", failAt, len(accepted), len(failed), refused)
	}
}
