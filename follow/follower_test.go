package follow

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"utxod/testkit/testchain"

	"github.com/prometheus/client_golang/prometheus"

	"utxod/chainstate"
	"utxod/params"
	"utxod/testkit/blockgen"
	"utxod/testkit/chaingen"
	"utxod/testkit/corerest"
	"utxod/wire"
)

// TestCatchUpMainnet follows a source holding mainnet 0-14131 from genesis
// and compares every gettxoutsetinfo field with the independent reference.
func TestCatchUpMainnet(t *testing.T) {
	p := params.MainNet()
	src := corerest.New(p)
	if err := src.Add(mainnet(t, 14131)...); err != nil {
		t.Fatal(err)
	}
	src.RevealAll()
	cs := newChainstate(t, p)
	reg := prometheus.NewRegistry()
	cfg := fastConfig(serve(t, src, p), cs)
	cfg.Registerer = reg
	f := newFollower(t, cfg)
	if err := f.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	testchain.CheckReference(t, cs, testchain.References(t)[14131])
	st := f.Status()
	if st.State != StateStopped || st.SourceTip != st.Tip || st.Height != 14131 || st.SourceHeight != 14131 || st.Blocks != 14131 || st.Errors != 0 {
		t.Fatalf("status %+v", st)
	}
	// 14131 headers need 8 header batches of 2000; no block twice.
	if n := src.Requests("block"); n != 14131 {
		t.Errorf("%d block requests, want 14131", n)
	}
	if got := value(f.m.height); got != 14131 {
		t.Errorf("utxod_follow_height %v", got)
	}
	if got := value(f.m.inSync); got != 0 {
		t.Errorf("utxod_follow_in_sync %v after CatchUp returned", got)
	}
	if mfs, err := reg.Gather(); err != nil || len(mfs) < 8 {
		t.Errorf("registry: %d metric families, %v", len(mfs), err)
	}
}

// TestLegacyHeaders follows a source that knows only the deprecated
// /rest/headers/<count>/<hash> form (Core before 24.0 answers 400 to
// ?count=).
func TestLegacyHeaders(t *testing.T) {
	p := params.MainNet()
	src := corerest.New(p)
	if err := src.Add(mainnet(t, 1000)...); err != nil {
		t.Fatal(err)
	}
	src.RevealAll()
	var newForm atomic.Int32
	old := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/rest/headers/") && strings.Count(r.URL.Path, "/") == 3 {
			newForm.Add(1)
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte("No header count specified. Use /rest/headers/<count>/<hash>.<ext>.\r\n"))
			return
		}
		src.ServeHTTP(w, r)
	})
	cs := newChainstate(t, p)
	f := newFollower(t, fastConfig(serve(t, old, p), cs))
	if err := f.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	testchain.CheckReference(t, cs, testchain.References(t)[1000])
	if newForm.Load() != 1 {
		t.Errorf("the ?count= form was tried %d times, want once", newForm.Load())
	}
}

// TestReorgs follows a chaingen chain with reorg events, revealed to the
// source one block at a time, so that the source switches branches as a
// live node does; the follower must end on the generator's tip with its
// UTXO set, and equal a direct replay of the same blocks.
func TestReorgs(t *testing.T) {
	data, sum, err := chaingen.Generate(chaingen.Config{Profile: chaingen.ProfileModern, Seed: 22, Blocks: 90, MaxTxs: 8, Reorgs: 4})
	if err != nil {
		t.Fatal(err)
	}
	p := params.RegTest()
	blocks, err := wire.ReadAllBlocks(strings.NewReader(string(data)), p.Magic)
	if err != nil {
		t.Fatal(err)
	}
	src := corerest.New(p)
	if err := src.Add(blocks...); err != nil {
		t.Fatal(err)
	}
	cs := newChainstate(t, p)
	f := newFollower(t, fastConfig(serve(t, src, p), cs))
	reorgs := 0
	for n := 2; n <= src.Loaded(); n++ {
		src.Reveal(n)
		before := cs.Tip()
		if err := f.CatchUp(context.Background()); err != nil {
			t.Fatalf("after revealing %d blocks: %v", n, err)
		}
		srcTip, _ := src.Tip()
		if cs.Tip().Hash != srcTip {
			t.Fatalf("after revealing %d blocks: tip %s, source %s", n, cs.Tip().Hash, srcTip)
		}
		if at, _ := cs.AtHeight(before.Height); at.Hash != before.Hash {
			reorgs++ // the old tip left the active chain
		}
	}
	if reorgs < sum.Reorgs {
		t.Fatalf("%d reorgs seen, the generator made %d", reorgs, sum.Reorgs)
	}
	if st := f.Status(); st.Reorgs < uint64(sum.Reorgs) {
		t.Errorf("status counts %d reorgs, want at least %d", st.Reorgs, sum.Reorgs)
	}
	info := infoOf(t, cs)
	if info.BestBlock != sum.Tip || int32(info.Height) != sum.Height || int64(info.TxOuts) != sum.UTXOs || info.TotalAmountSat != sum.TotalAmount {
		t.Fatalf("followed %d %s txouts %d total %d; generator %d %s txouts %d total %d",
			info.Height, info.BestBlock, info.TxOuts, info.TotalAmountSat, sum.Height, sum.Tip, sum.UTXOs, sum.TotalAmount)
	}
	direct := newChainstate(t, p)
	for _, raw := range blocks {
		if _, err := direct.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
	}
	if d := infoOf(t, direct); *d.HashSerialized3 != *info.HashSerialized3 || *d.MuHash != *info.MuHash {
		t.Fatalf("followed hs3 %s muhash %s; direct replay %s %s", info.HashSerialized3, info.MuHash, d.HashSerialized3, d.MuHash)
	}
	t.Logf("%d blocks (%d stale), %d reorgs", len(blocks), sum.StaleBlocks, reorgs)
}

// TestFaults: a source that misbehaves on one block, or on every route for
// a while, is retried; a corrupted block is rejected (never connected),
// following pauses and resumes; the end state equals the reference.
func TestFaults(t *testing.T) {
	const top, at = 1000, 500
	blocks := mainnet(t, top)
	target := wire.DoubleSHA256(blocks[at][:wire.HeaderSize])
	for _, tc := range []struct {
		fault    corerest.Fault
		times    int
		outage   bool   // every route, not one block
		kind     string // utxod_follow_errors_total label expected
		rejected string // or the reject reason
	}{
		{fault: corerest.Corrupt, times: 1, rejected: "bad-txnmrklroot"},
		{fault: corerest.WrongBlock, times: 2, kind: "wrong-hash"},
		{fault: corerest.Truncate, times: 2, kind: "truncated"},
		{fault: corerest.CutConnection, times: 2, kind: "truncated"},
		{fault: corerest.NotFound, times: 2, kind: "not-found"},
		{fault: corerest.Unavailable, times: 5, kind: "unavailable"},
		{fault: corerest.Unavailable, times: 7, outage: true, kind: "unavailable"},
		{fault: corerest.NotFound, times: 3, outage: true, kind: "not-found"},
	} {
		name := tc.fault.String()
		if tc.outage {
			name = "outage-" + name
		}
		t.Run(name, func(t *testing.T) {
			p := params.MainNet()
			src := corerest.New(p)
			if err := src.Add(blocks...); err != nil {
				t.Fatal(err)
			}
			src.RevealAll()
			if tc.outage {
				src.Outage(tc.fault, tc.times)
			} else {
				src.BlockFault(target, tc.fault, tc.times)
			}
			cs := newChainstate(t, p)
			f := newFollower(t, fastConfig(serve(t, src, p), cs))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if tc.rejected != "" {
				// CatchUp stops at the rejection, the state at the parent.
				var rej *RejectedError
				if err := f.CatchUp(ctx); !errors.As(err, &rej) || rej.Reason != tc.rejected || rej.Hash != target || rej.Height != at {
					t.Fatalf("CatchUp: %v, want a rejection of %s at %d with %s", err, target, at, tc.rejected)
				}
				if _, above := cs.AtHeight(at); cs.Tip().Height != at-1 || above {
					t.Fatalf("tip %d %s after the rejection, want %d", cs.Tip().Height, cs.Tip().Hash, at-1)
				}
				// Run pauses, then fetches the block again (the fault is
				// spent) and goes on.
				done := make(chan error, 1)
				go func() { done <- f.Run(ctx) }()
				waitFor(t, "in sync", 30*time.Second, func() bool { return f.Status().InSync })
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			} else if err := f.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			testchain.CheckReference(t, cs, testchain.References(t)[int32(top)])
			if tc.rejected != "" {
				if got := value(f.m.rejected.WithLabelValues(tc.rejected)); got < 1 {
					t.Errorf("rejected{%s} = %v", tc.rejected, got)
				}
				if st := f.Status(); st.RejectedBlocks < 1 {
					t.Errorf("status %+v", st)
				}
				return
			}
			if got := value(f.m.errors.WithLabelValues(tc.kind)); got < float64(tc.times) {
				t.Errorf("errors{%s} = %v, want ≥ %d", tc.kind, got, tc.times)
			}
			if st := f.Status(); st.Errors < uint64(tc.times) || st.RejectedBlocks != 0 {
				t.Errorf("status %+v", st)
			}
		})
	}
}

// TestBadHeaders: headers that do not chain are refused and no block is
// fetched for them; once the source mends, following completes.
func TestBadHeaders(t *testing.T) {
	p := params.MainNet()
	src := corerest.New(p)
	if err := src.Add(mainnet(t, 300)...); err != nil {
		t.Fatal(err)
	}
	src.RevealAll()
	src.BreakHeaders(true)
	cs := newChainstate(t, p)
	f := newFollower(t, fastConfig(serve(t, src, p), cs))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	waitFor(t, "bad-headers errors", 10*time.Second, func() bool {
		return value(f.m.errors.WithLabelValues("bad-headers")) >= 3
	})
	if n := src.Requests("block"); n != 0 || cs.Tip().Height != 0 {
		t.Fatalf("%d blocks fetched, tip %d, on a broken header chain", n, cs.Tip().Height)
	}
	if st := f.Status(); st.State != StateRetrying && st.State != StateSyncing {
		t.Errorf("state %q", st.State)
	}
	src.BreakHeaders(false)
	waitFor(t, "in sync", 30*time.Second, func() bool { return f.Status().InSync })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if cs.Tip().Height != 300 {
		t.Fatalf("tip %d", cs.Tip().Height)
	}
}

// invalidChain builds a regtest chain of 10 valid blocks, an 11th whose
// coinbase claims one satoshi too much (bad-cb-amount) and a 12th on top of
// it, and a valid branch of 3 blocks from block 10 that outweighs them.
func invalidChain(t *testing.T) (p *params.Params, valid, bad, fix [][]byte, badHash wire.Hash) {
	t.Helper()
	p = params.RegTest()
	c, err := blockgen.NewChain(p)
	if err != nil {
		t.Fatal(err)
	}
	n := c.Genesis
	for range 10 {
		n = c.Template(n, nil).Finish()
		valid = append(valid, n.Raw)
	}
	tenth := n
	tpl := c.Template(n, nil)
	tpl.Coinbase().TxOut[0].Value++
	b11 := tpl.Finish()
	b12 := c.Template(b11, nil).Finish()
	bad = [][]byte{b11.Raw, b12.Raw}
	n = tenth
	for range 3 {
		tpl := c.Template(n, nil)
		tpl.Coinbase().TxOut[0].Value-- // differ from b11's coinbase
		n = tpl.Finish()
		fix = append(fix, n.Raw)
	}
	return p, valid, bad, fix, b11.Hash
}

// TestRejectedBlockPauses: a source whose chain holds an invalid block. The
// block is rejected with Core's reason, counted, the state stays at its
// parent, and following pauses without hammering the source; when the
// source moves to a valid chain, following resumes.
func TestRejectedBlockPauses(t *testing.T) {
	p, valid, bad, fix, badHash := invalidChain(t)
	src := corerest.New(p)
	if err := src.Add(append(valid, bad...)...); err != nil {
		t.Fatal(err)
	}
	src.RevealAll()
	cs := newChainstate(t, p)
	cfg := fastConfig(serve(t, src, p), cs)
	cfg.RejectPause = time.Hour // only a new source tip resumes
	f := newFollower(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	waitFor(t, "paused", 10*time.Second, func() bool { return f.Status().State == StatePaused })
	st := f.Status()
	if st.Rejected == nil || st.Rejected.Hash != badHash || st.Rejected.Reason != "bad-cb-amount" || st.Rejected.Height != 11 {
		t.Fatalf("status %+v rejected %+v", st, st.Rejected)
	}
	if st.Height != 10 || st.InSync || st.RejectedBlocks != 1 || !strings.Contains(st.LastError, "bad-cb-amount") {
		t.Fatalf("status %+v", st)
	}
	if got := value(f.m.rejected.WithLabelValues("bad-cb-amount")); got != 1 {
		t.Fatalf("rejected{bad-cb-amount} = %v", got)
	}
	if got := value(f.m.paused); got != 1 {
		t.Fatalf("paused gauge %v", got)
	}
	blocks, polls := src.Requests("block"), src.Requests("chaininfo")
	time.Sleep(30 * cfg.PollInterval)
	if n := src.Requests("block"); n != blocks {
		t.Fatalf("%d block requests while paused", n-blocks)
	}
	if n := src.Requests("chaininfo"); n-polls > 40 {
		t.Fatalf("%d chaininfo polls in 30 poll intervals", n-polls)
	}
	if cs.Tip().Height != 10 {
		t.Fatalf("tip moved to %d while paused", cs.Tip().Height)
	}
	// The source moves to a valid branch with more work.
	if err := src.Add(fix...); err != nil {
		t.Fatal(err)
	}
	src.RevealAll()
	want, _ := src.Tip()
	waitFor(t, "in sync on the valid branch", 10*time.Second, func() bool { return f.Status().InSync })
	if cs.Tip().Hash != want || cs.Tip().Height != 13 {
		t.Fatalf("tip %d %s, want 13 %s", cs.Tip().Height, cs.Tip().Hash, want)
	}
	if value(f.m.inSync) != 1 || value(f.m.paused) != 0 || value(f.m.height) != 13 {
		t.Errorf("gauges in_sync %v paused %v height %v", value(f.m.inSync), value(f.m.paused), value(f.m.height))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestSlowSourceOverlaps: with a delay on every request, downloads run in
// parallel (bounded by Concurrency) and ahead of validation.
func TestSlowSourceOverlaps(t *testing.T) {
	const n, delay, conc = 200, 20 * time.Millisecond, 8
	p := params.MainNet()
	src := corerest.New(p)
	if err := src.Add(mainnet(t, n)...); err != nil {
		t.Fatal(err)
	}
	src.RevealAll()
	src.SetDelay(delay)
	var inFlight, peak atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/rest/block/") {
			c := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				old := peak.Load()
				if c <= old || peak.CompareAndSwap(old, c) {
					break
				}
			}
		}
		src.ServeHTTP(w, r)
	})
	cs := newChainstate(t, p)
	cfg := fastConfig(serve(t, h, p), cs)
	cfg.Concurrency, cfg.Prefetch = conc, 16
	f := newFollower(t, cfg)
	start := time.Now()
	if err := f.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	if cs.Tip().Height != n {
		t.Fatalf("tip %d", cs.Tip().Height)
	}
	if pk := peak.Load(); pk > conc || pk < 2 {
		t.Errorf("peak of %d concurrent block downloads, want 2..%d", pk, conc)
	}
	if serial := n * delay; el > serial/2 {
		t.Errorf("took %v; one download at a time would take %v", el, serial)
	}
	t.Logf("%d blocks at %v each in %v, peak %d downloads at once", n, delay, el, peak.Load())
}

// TestSourceDown: a source that does not answer is retried with backoff;
// CatchUp gives up after MaxFailures rounds with ErrUnavailable.
func TestSourceDown(t *testing.T) {
	p := params.MainNet()
	c, err := NewClient(ClientConfig{URL: "http://127.0.0.1:1", Params: p, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cs := newChainstate(t, p)
	cfg := fastConfig(c, cs)
	cfg.MaxFailures = 4
	f := newFollower(t, cfg)
	start := time.Now()
	err = f.CatchUp(context.Background())
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("CatchUp: %v, want ErrUnavailable", err)
	}
	// Backoff 5, 10, 20 ms between the four rounds, jittered.
	if el := time.Since(start); el < 25*time.Millisecond {
		t.Errorf("gave up after %v: no backoff", el)
	}
	if st := f.Status(); st.Errors != 4 || st.State != StateStopped || st.InSync {
		t.Errorf("status %+v", st)
	}
	if got := value(f.m.errors.WithLabelValues("unreachable")); got != 4 {
		t.Errorf("errors{unreachable} = %v", got)
	}
}

// TestWrongChain: a regtest source is refused by a mainnet follower.
func TestWrongChain(t *testing.T) {
	src := corerest.New(params.RegTest())
	cs := newChainstate(t, params.MainNet())
	f := newFollower(t, fastConfig(serve(t, src, params.MainNet()), cs))
	if err := f.Run(context.Background()); !errors.Is(err, ErrWrongChain) {
		t.Fatalf("Run: %v, want ErrWrongChain", err)
	}
}

// TestCancel: cancelling Run mid-sync returns promptly with the state at a
// block boundary.
func TestCancel(t *testing.T) {
	p := params.MainNet()
	src := corerest.New(p)
	if err := src.Add(mainnet(t, 5000)...); err != nil {
		t.Fatal(err)
	}
	src.RevealAll()
	src.SetDelay(time.Millisecond)
	cs := newChainstate(t, p)
	f := newFollower(t, fastConfig(serve(t, src, p), cs))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	waitFor(t, "some blocks", 20*time.Second, func() bool { return cs.Tip().Height >= 100 })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	h := cs.Tip().Height
	if h >= 5000 {
		t.Skip("caught up before the cancel")
	}
	time.Sleep(50 * time.Millisecond)
	if cs.Tip().Height != h {
		t.Fatal("blocks were connected after Run returned")
	}
	if st := f.Status(); st.State != StateStopped {
		t.Fatalf("state %q", st.State)
	}
	// A new follower resumes from the tip.
	f2 := newFollower(t, fastConfig(f.src, cs))
	if err := f2.CatchUp(context.Background()); err != nil || cs.Tip().Height != 5000 {
		t.Fatalf("resume: %v, tip %d", err, cs.Tip().Height)
	}
}

var _ Chain = (*chainstate.Chainstate)(nil)

// TestFlushWhenCaughtUp: Run flushes through Config.Flush once in sync
// after connecting blocks, and not again while nothing changes.
func TestFlushWhenCaughtUp(t *testing.T) {
	p := params.MainNet()
	src := corerest.New(p)
	if err := src.Add(mainnet(t, 300)...); err != nil {
		t.Fatal(err)
	}
	src.Reveal(201)
	cs := newChainstate(t, p)
	var flushes atomic.Int32
	var flushedAt atomic.Int32
	cfg := fastConfig(serve(t, src, p), cs)
	cfg.Flush = func() error { flushes.Add(1); flushedAt.Store(cs.Tip().Height); return cs.Flush() }
	cfg.FlushInterval = time.Nanosecond
	f := newFollower(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	waitFor(t, "a flush at 200", 10*time.Second, func() bool { return flushedAt.Load() == 200 })
	time.Sleep(20 * cfg.PollInterval)
	if n := flushes.Load(); n != 1 {
		t.Fatalf("%d flushes with nothing new", n)
	}
	src.RevealAll()
	waitFor(t, "a flush at 300", 10*time.Second, func() bool { return flushedAt.Load() == 300 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestSourceBehind: a source whose chain is a prefix of the local one, or
// a branch with no more work, leaves the state alone; CatchUp returns and
// reports diverged.
func TestSourceBehind(t *testing.T) {
	p := params.MainNet()
	blocks := mainnet(t, 300)
	src := corerest.New(p)
	if err := src.Add(blocks...); err != nil {
		t.Fatal(err)
	}
	src.Reveal(101)
	cs := newChainstate(t, p)
	for _, raw := range blocks[1:201] {
		if _, err := cs.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
	}
	f := newFollower(t, fastConfig(serve(t, src, p), cs))
	if err := f.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := f.Status(); cs.Tip().Height != 200 || st.InSync || !strings.Contains(st.LastError, "below this node's tip") {
		t.Fatalf("tip %d, status %+v", cs.Tip().Height, st)
	}
	if n := src.Requests("block"); n != 0 {
		t.Fatalf("%d blocks fetched from a source behind", n)
	}
}

// TestSourceTies: a source on a branch with as much work as the local
// chain (first seen stays, as in Core): its blocks are stored as a side
// branch once, the tip stays, and they are not downloaded again.
func TestSourceTies(t *testing.T) {
	p := params.RegTest()
	c, err := blockgen.NewChain(p)
	if err != nil {
		t.Fatal(err)
	}
	cs := newChainstate(t, p)
	src := corerest.New(p)
	a, b := c.Genesis, c.Genesis
	for range 3 {
		a = c.Template(a, nil).Finish()
		if _, err := cs.ProcessBlock(a.Raw); err != nil {
			t.Fatal(err)
		}
		tpl := c.Template(b, nil)
		tpl.Coinbase().TxOut[0].Value--
		b = tpl.Finish()
		if err := src.Add(b.Raw); err != nil {
			t.Fatal(err)
		}
	}
	src.RevealAll()
	f := newFollower(t, fastConfig(serve(t, src, p), cs))
	for range 2 {
		if err := f.CatchUp(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if cs.Tip().Hash != a.Hash || src.Requests("block") != 3 {
		t.Fatalf("tip %s (local %s), %d block requests", cs.Tip().Hash, a.Hash, src.Requests("block"))
	}
	if st := f.Status(); !strings.Contains(st.LastError, "no more work") {
		t.Fatalf("status %+v", st)
	}
}
