package chainstate

import (
	"context"
	"errors"
	"testing"
	"time"

	"utxod/store"
	"utxod/wire"
)

// TestSubmit: Submit connects, queues behind the one slot (a cancelled
// wait returns the context's error), times what it processes, and refuses
// with ErrClosed after Close, which waits for the block in flight.
func TestSubmit(t *testing.T) {
	blocks := mainnetBlocks(t)
	cs := newMainnet(t, store.NewMem())
	var observed int
	cs.ObserveSubmits(func(time.Duration) { observed++ })
	for h := 1; h <= 3; h++ {
		res, err := cs.Submit(context.Background(), blocks[h])
		if err != nil || res.Status != StatusConnected || res.Height != int32(h) {
			t.Fatalf("block %d: %+v %v", h, res, err)
		}
	}
	if _, err := cs.Submit(context.Background(), blocks[4][:100]); !errors.Is(err, ErrParse) {
		t.Fatalf("garbage: %v", err)
	}
	if observed != 4 {
		t.Fatalf("observed %d submissions, want 4", observed)
	}

	cs.submit.slot <- struct{}{} // a block in flight
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := cs.Submit(ctx, blocks[4]); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled while queued: %v", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- cs.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned with a block in flight: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	// A submission queued while closing is woken and refused.
	if _, err := cs.Submit(context.Background(), blocks[4]); !errors.Is(err, ErrClosed) {
		t.Fatalf("queued while closing: %v", err)
	}
	<-cs.submit.slot // the block in flight is done
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := cs.Submit(context.Background(), blocks[4]); !errors.Is(err, ErrClosed) || cs.Tip().Height != 3 {
		t.Fatalf("after Close: %v, tip %d", err, cs.Tip().Height)
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestLookupOrphan: Lookup reports a held orphan with its parent until it
// connects, then its index entry.
func TestLookupOrphan(t *testing.T) {
	blocks := mainnetBlocks(t)
	cs := newMainnet(t, store.NewMem())
	res, err := cs.Submit(context.Background(), blocks[2])
	if err != nil || res.Status != StatusOrphan {
		t.Fatalf("orphan: %+v %v", res, err)
	}
	h2 := wire.DoubleSHA256(blocks[2][:wire.HeaderSize])
	h1 := wire.DoubleSHA256(blocks[1][:wire.HeaderSize])
	bi, ok := cs.Lookup(h2)
	if !ok || !bi.Orphan || bi.Height != -1 || bi.Header.PrevBlock != h1 || bi.InActiveChain {
		t.Fatalf("orphan lookup: %v %+v", ok, bi)
	}
	if _, err := cs.Submit(context.Background(), blocks[1]); err != nil {
		t.Fatal(err)
	}
	if bi, ok := cs.Lookup(h2); !ok || bi.Orphan || bi.Height != 2 || !bi.InActiveChain {
		t.Fatalf("after its parent: %v %+v", ok, bi)
	}
}
