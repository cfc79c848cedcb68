package chainstate

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"utxod/store"
)

// TestSubmitDurable: answers report the flushed tip and whether their
// block is at or below it; a durable submission flushes first, and what it
// acknowledged is what a store reopened without a clean close holds.
// Durable submissions waiting together share one flush; a volatile store
// never claims anything durable.
func TestSubmitDurable(t *testing.T) {
	blocks := mainnetBlocks(t)
	ctx := context.Background()
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			kv := openKV(t, name, dir)
			cs := newMainnet(t, openKVStore(t, kv, 64<<20))
			var flushes atomic.Int32
			cs.OnFlush = func(time.Duration) { flushes.Add(1) }
			for h := 1; h <= 3; h++ {
				res, err := cs.Submit(ctx, blocks[h])
				if err != nil || res.Status != StatusConnected || res.Durable || res.Flushed.Height != 0 {
					t.Fatalf("block %d: %+v %v", h, res, err)
				}
			}
			res, err := cs.SubmitWith(ctx, blocks[4], SubmitOptions{Durable: true})
			if err != nil || res.Status != StatusConnected || !res.Durable || res.Flushed.Height != 4 || res.Flushed.Hash != res.Hash || flushes.Load() != 1 {
				t.Fatalf("durable block 4: %+v %v, %d flushes", res, err, flushes.Load())
			}
			if f := cs.Flushed(); f.Height != 4 || f.Hash != res.Hash {
				t.Fatalf("Flushed %+v", f)
			}
			// Already durable: a duplicate says so, and needs no flush.
			res, err = cs.SubmitWith(ctx, blocks[2], SubmitOptions{Durable: true})
			if err != nil || res.Status != StatusDuplicate || !res.Durable || flushes.Load() != 1 {
				t.Fatalf("duplicate block 2: %+v %v, %d flushes", res, err, flushes.Load())
			}
			res, err = cs.Submit(ctx, blocks[5])
			if err != nil || res.Durable || res.Flushed.Height != 4 {
				t.Fatalf("block 5: %+v %v", res, err)
			}
			// Group commit: three durable submissions connect while the
			// flush lock is taken (another's flush running); one flush then
			// covers them all.
			var connected atomic.Int32
			cs.ObserveSubmits(func(time.Duration) { connected.Add(1) })
			cs.flushed.mu.Lock()
			before := flushes.Load()
			var wg sync.WaitGroup
			results := make([]Result, 3)
			errs := make([]error, 3)
			for i := range 3 {
				for connected.Load() < int32(i) {
					time.Sleep(time.Millisecond)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i], errs[i] = cs.SubmitWith(ctx, blocks[6+i], SubmitOptions{Durable: true})
				}()
			}
			for connected.Load() < 3 {
				time.Sleep(time.Millisecond)
			}
			cs.flushed.mu.Unlock()
			wg.Wait()
			for i, r := range results {
				if errs[i] != nil || r.Status != StatusConnected || !r.Durable || r.Flushed.Height < r.Height {
					t.Fatalf("grouped block %d: %+v %v", 6+i, r, errs[i])
				}
			}
			if n := flushes.Load() - before; n != 1 {
				t.Fatalf("%d flushes for three waiting durable submissions, want 1", n)
			}
			// Block 9 acknowledged without a flush; the store closed without
			// one (a crash) reopens at the flushed tip, 8.
			if res, err := cs.Submit(ctx, blocks[9]); err != nil || res.Durable || res.Flushed.Height != 8 {
				t.Fatalf("block 9: %+v %v", res, err)
			}
			if err := kv.Close(); err != nil {
				t.Fatal(err)
			}
			kv = openKV(t, name, dir)
			defer kv.Close()
			cs = newMainnet(t, openKVStore(t, kv, 64<<20))
			if tip, f := cs.Tip(), cs.Flushed(); tip.Height != 8 || f.Height != 8 || f.Hash != tip.Hash {
				t.Fatalf("reopened at %d, flushed %+v", tip.Height, f)
			}
		})
	}
	t.Run("memory", func(t *testing.T) {
		cs := newMainnet(t, store.NewMem())
		res, err := cs.SubmitWith(ctx, blocks[1], SubmitOptions{Durable: true})
		if err != nil || res.Status != StatusConnected || res.Durable || res.Flushed.Height != 0 || cs.Flushed().Height != 0 {
			t.Fatalf("memory: %+v %v", res, err)
		}
	})
}
