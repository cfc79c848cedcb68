package follow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"utxod/chainstate"
	"utxod/validate"
	"utxod/wire"
)

// Chain is what the follower needs from the node. *chainstate.Chainstate
// implements it.
type Chain interface {
	// Submit validates raw and connects it if it extends the most-work
	// chain, reorganising if needed (chainstate's contract: invalid blocks
	// return a *validate.RuleError and change nothing). It queues with the
	// node's other producers (a serving node's API) until ctx ends.
	Submit(ctx context.Context, raw []byte) (chainstate.Result, error)
	// Tip is the active tip.
	Tip() chainstate.BlockInfo
	// AtHeight is the active chain's block at height (false above the tip).
	AtHeight(h int32) (chainstate.BlockInfo, bool)
	// AcceptHeaders indexes headers ahead of their blocks (headers-first:
	// the best header is known before the blocks connect, which
	// assume-valid's condition needs). The chain does not move.
	AcceptHeaders(hs []wire.Header) chainstate.HeadersResult
}

// Defaults of Config's zero values.
const (
	DefaultConcurrency   = 4
	DefaultPrefetch      = 32
	DefaultPollInterval  = 2 * time.Second
	DefaultMinBackoff    = 500 * time.Millisecond
	DefaultMaxBackoff    = 30 * time.Second
	DefaultRejectPause   = 10 * time.Minute
	DefaultAttempts      = 3
	DefaultProgressEvery = 10 * time.Second
)

// Config configures a Follower. Zero values take the defaults above.
type Config struct {
	// Source is the node to follow. Required.
	Source *Client
	// Chain is the local node. Required.
	Chain Chain
	// Log receives progress, errors and rejections (default: discard).
	Log *slog.Logger
	// Concurrency is how many blocks download at once.
	Concurrency int
	// Prefetch is how many blocks may be downloaded ahead of the block
	// being validated (memory: at most Prefetch+Concurrency blocks).
	Prefetch int
	// PollInterval is how often the source's tip is polled once in sync
	// (and while paused).
	PollInterval time.Duration
	// MinBackoff and MaxBackoff bound the wait after a failed round; it
	// doubles with each consecutive failure.
	MinBackoff, MaxBackoff time.Duration
	// RejectPause is how long following pauses after a rejected block when
	// the source's tip does not change meanwhile.
	RejectPause time.Duration
	// Attempts is how often one download is tried (with a short backoff)
	// before the round fails.
	Attempts int
	// MaxFailures makes CatchUp give up after this many consecutive failed
	// rounds (0: never; Run never gives up).
	MaxFailures int
	// ProgressEvery is the interval of progress log lines while syncing.
	ProgressEvery time.Duration
	// Flush, when set, makes the chainstate durable; the follower calls it
	// once caught up, at most every FlushInterval, so that a node killed
	// while following reopens near its tip rather than at its last
	// cache-full flush. Zero FlushInterval: never (the chainstate still
	// flushes when its cache is full, and the owner at shutdown).
	Flush         func() error
	FlushInterval time.Duration
	// Registerer, when set, receives the utxod_follow_* metrics.
	Registerer prometheus.Registerer
}

// States of a Follower (Status.State).
const (
	StateStarting = "starting" // no successful poll yet
	StateSyncing  = "syncing"  // fetching and connecting blocks
	StateInSync   = "in-sync"  // the local tip is the source's tip
	StateRetrying = "retrying" // the last round failed; waiting to retry
	StatePaused   = "paused"   // a block from the source was rejected
	StateDiverged = "diverged" // the source's chain is not better than the local one (behind, or a tie)
	StateStopped  = "stopped"  // Run or CatchUp returned
)

// Status is a snapshot of the follower's progress.
type Status struct {
	Source       string    `json:"source"`
	State        string    `json:"state"`
	InSync       bool      `json:"in_sync"`
	Height       int32     `json:"height"`
	Tip          wire.Hash `json:"tip"`
	SourceHeight int32     `json:"source_height"`
	SourceTip    wire.Hash `json:"source_tip"`
	LastPoll     time.Time `json:"last_poll"`
	// LastError is the last failure (a source error or a rejection).
	LastError string `json:"last_error,omitempty"`
	// Rejected is the block that paused following (state paused).
	Rejected *Rejection `json:"rejected,omitempty"`
	// Counters since start.
	Blocks         uint64 `json:"blocks"`
	Errors         uint64 `json:"errors"`
	RejectedBlocks uint64 `json:"rejected_blocks"`
	Reorgs         uint64 `json:"reorgs"`
}

// Rejection describes a block the chainstate refused.
type Rejection struct {
	Hash   wire.Hash `json:"hash"`
	Height int32     `json:"height"`
	Reason string    `json:"reason"`
	Detail string    `json:"detail,omitempty"`
	At     time.Time `json:"at"`
}

// RejectedError is returned by CatchUp (and logged by Run) when the
// chainstate refuses a block from the source. It wraps the
// *validate.RuleError.
type RejectedError struct {
	Rejection
	Err error
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("follow: block %s height %d from the source rejected: %s (%v)", e.Hash, e.Height, e.Reason, e.Err)
}

func (e *RejectedError) Unwrap() error { return e.Err }

// ErrChain wraps a failure of the local chainstate (a store error, a full
// disk): following stops.
var ErrChain = errors.New("follow: chainstate failure")

// errOrphan: a block's parent was unknown — the local chain moved under
// the round. The next round finds the fork again.
var errOrphan = errors.New("follow: block's parent unknown locally (the local chain changed); re-syncing")

// errMoved: the source's chain moved away from the headers being fetched.
var errMoved = errors.New("follow: the source's active chain changed during the round; re-syncing")

// Follower keeps a chain in step with a source. Create it with New; Run
// or CatchUp drive it (one at a time); Status is safe to call at any time.
type Follower struct {
	cfg Config
	src *Client
	cs  Chain
	log *slog.Logger
	m   *metrics

	// diverged remembers the source tip and local tip of a round whose
	// blocks did not move the local tip (a tie or less work).
	diverged [2]wire.Hash

	mu sync.Mutex
	st Status
}

// New returns a follower for cfg.
func New(cfg Config) (*Follower, error) {
	if cfg.Source == nil || cfg.Chain == nil {
		return nil, errors.New("follow: Config.Source and Config.Chain are required")
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.Concurrency, DefaultConcurrency)
	def(&cfg.Prefetch, DefaultPrefetch)
	def(&cfg.Attempts, DefaultAttempts)
	defDur(&cfg.PollInterval, DefaultPollInterval)
	defDur(&cfg.MinBackoff, DefaultMinBackoff)
	defDur(&cfg.MaxBackoff, DefaultMaxBackoff)
	defDur(&cfg.RejectPause, DefaultRejectPause)
	defDur(&cfg.ProgressEvery, DefaultProgressEvery)
	cfg.MaxBackoff = max(cfg.MaxBackoff, cfg.MinBackoff)
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &Follower{cfg: cfg, src: cfg.Source, cs: cfg.Chain, log: log.With("source", cfg.Source.URL())}
	f.st = Status{Source: cfg.Source.URL(), State: StateStarting}
	f.m = newMetrics()
	if cfg.Registerer != nil {
		if err := f.m.register(cfg.Registerer); err != nil {
			return nil, fmt.Errorf("follow: metrics: %w", err)
		}
	}
	tip := f.cs.Tip()
	f.m.height.Set(float64(tip.Height))
	return f, nil
}

// Status returns the follower's progress.
func (f *Follower) Status() Status {
	tip := f.cs.Tip()
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.st
	st.Height, st.Tip = tip.Height, tip.Hash
	st.InSync = st.State == StateInSync && tip.Hash == st.SourceTip
	if st.Rejected != nil {
		r := *st.Rejected
		st.Rejected = &r
	}
	return st
}

func (f *Follower) update(fn func(*Status)) {
	f.mu.Lock()
	fn(&f.st)
	st := f.st
	f.mu.Unlock()
	f.m.setState(st.State)
}

func (f *Follower) setState(s string) { f.update(func(st *Status) { st.State = s }) }

// Run follows the source until ctx ends, then returns nil once the block
// being connected is done. It returns early only on a chainstate failure
// (ErrChain) or when the source is on another network (ErrWrongChain).
// Source failures are retried with backoff; rejected blocks pause it.
func (f *Follower) Run(ctx context.Context) error {
	err := f.loop(ctx, false)
	if ctx.Err() != nil && !errors.Is(err, ErrChain) {
		return nil
	}
	return err
}

// CatchUp follows the source until the local tip is the source's tip, or
// the source has nothing that would move it (its chain is behind the local
// one or ties with it: Status says diverged), then returns nil. A rejected block ends it with a *RejectedError; source
// failures are retried with backoff, MaxFailures times in a row at most
// (0: until ctx ends, whose error is then returned).
func (f *Follower) CatchUp(ctx context.Context) error {
	err := f.loop(ctx, true)
	if err == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (f *Follower) loop(ctx context.Context, once bool) error {
	defer f.setState(StateStopped)
	backoff := f.cfg.MinBackoff
	failures := 0
	dirty, lastFlush := false, time.Now()
	for ctx.Err() == nil {
		progress, err := f.round(ctx)
		dirty = dirty || progress
		if ctx.Err() != nil {
			if errors.Is(err, ErrChain) {
				return err
			}
			return nil
		}
		var rej *RejectedError
		switch {
		case err == nil:
			failures, backoff = 0, f.cfg.MinBackoff
			st := f.Status()
			switch {
			case st.InSync:
				if once {
					return nil
				}
				if dirty && f.cfg.Flush != nil && f.cfg.FlushInterval > 0 && time.Since(lastFlush) >= f.cfg.FlushInterval {
					dirty, lastFlush = false, time.Now()
					if err := f.cfg.Flush(); err != nil {
						f.log.Error("flush after catching up", "err", err)
						f.update(func(st *Status) { st.LastError = "flush: " + err.Error() })
					}
				}
			case progress:
				continue // the source may have moved on meanwhile: poll again now
			case once && st.State == StateDiverged:
				// Nothing the source has can move this node further.
				f.log.Warn("the source's chain does not extend this node's; nothing to catch up", "reason", st.LastError,
					"height", st.Height, "source_height", st.SourceHeight)
				return nil
			}
			sleep(ctx, f.cfg.PollInterval)
		case errors.As(err, &rej):
			if once {
				return err
			}
			f.pause(ctx, rej)
		case errors.Is(err, ErrChain), errors.Is(err, ErrWrongChain):
			f.log.Error("following stopped", "err", err)
			f.update(func(st *Status) { st.LastError = err.Error() })
			return err
		default:
			failures++
			f.update(func(st *Status) { st.State, st.LastError = StateRetrying, err.Error() })
			if once && f.cfg.MaxFailures > 0 && failures >= f.cfg.MaxFailures {
				return fmt.Errorf("follow: giving up after %d failed attempts: %w", failures, err)
			}
			wait := jitter(backoff)
			f.log.Warn("source failed; retrying", "err", err, "retry_in", wait.Round(time.Millisecond), "failures", failures)
			sleep(ctx, wait)
			backoff = min(2*backoff, f.cfg.MaxBackoff)
		}
	}
	return nil
}

// pause waits after a rejected block until the source's tip changes or
// RejectPause passes, polling only the source's chaininfo.
func (f *Follower) pause(ctx context.Context, rej *RejectedError) {
	f.update(func(st *Status) {
		r := rej.Rejection
		st.State, st.Rejected, st.LastError = StatePaused, &r, rej.Error()
	})
	f.m.paused.Set(1)
	defer f.m.paused.Set(0)
	f.log.Error("block from the source rejected; following paused", "hash", rej.Hash, "height", rej.Height,
		"reason", rej.Reason, "err", rej.Err, "pause", f.cfg.RejectPause, "state_height", f.cs.Tip().Height)
	tip := f.Status().SourceTip
	deadline := time.Now().Add(f.cfg.RejectPause)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		sleep(ctx, min(f.cfg.PollInterval, time.Until(deadline)))
		info, err := f.src.ChainInfo(ctx)
		if err == nil && info.BestBlockHash != tip {
			f.log.Info("the source's tip changed; resuming", "source_height", info.Blocks, "source_tip", info.BestBlockHash)
			break
		}
	}
	f.update(func(st *Status) { st.Rejected = nil })
}

// round polls the source and, if its tip differs, fetches and connects
// its chain from the fork point. progress reports blocks processed.
func (f *Follower) round(ctx context.Context) (progress bool, err error) {
	info, err := f.src.ChainInfo(ctx)
	if err != nil {
		f.countError(err)
		return false, err
	}
	f.m.sourceHeight.Set(float64(info.Blocks))
	tip := f.cs.Tip()
	f.update(func(st *Status) {
		st.SourceHeight, st.SourceTip, st.LastPoll = info.Blocks, info.BestBlockHash, time.Now()
		if info.BestBlockHash == tip.Hash {
			st.State = StateInSync
		} else {
			st.State = StateSyncing
		}
	})
	if info.BestBlockHash == tip.Hash {
		return false, nil
	}
	fork, first, err := f.findFork(ctx, tip)
	if err != nil {
		f.countError(err)
		return false, err
	}
	if fork.Hash != tip.Hash {
		f.m.reorgs.Inc()
		f.update(func(st *Status) { st.Reorgs++ })
		f.log.Warn("the source is on another branch: following it from the fork", "fork_height", fork.Height, "fork", fork.Hash,
			"local_height", tip.Height, "local_tip", tip.Hash, "source_height", info.Blocks, "source_tip", info.BestBlockHash)
	}
	if len(first) <= 1 {
		// The source's chain ends at the fork: it is behind this node (or
		// moved back to this node's tip since the poll).
		f.update(func(st *Status) {
			if fork.Hash == tip.Hash {
				st.State, st.SourceTip, st.SourceHeight = StateInSync, tip.Hash, tip.Height
				return
			}
			st.State = StateDiverged
			st.LastError = fmt.Sprintf("the source's chain ends at height %d, below this node's tip (height %d)", fork.Height, tip.Height)
		})
		return false, nil
	}
	if f.diverged == [2]wire.Hash{info.BestBlockHash, tip.Hash} {
		// Nothing changed since the source's branch failed to move this
		// node: do not download it again.
		f.setState(StateDiverged)
		return false, nil
	}
	hashes, err := f.learnHeaders(ctx, fork, first)
	if err != nil {
		if !errors.Is(err, errMoved) {
			f.countError(err)
		}
		return false, err
	}
	_, err = f.fetchAndConnect(ctx, fork, hashes)
	now := f.cs.Tip()
	progress = now.Hash != tip.Hash
	if err != nil {
		return progress, err
	}
	if !progress && now.Hash != info.BestBlockHash {
		f.diverged = [2]wire.Hash{info.BestBlockHash, tip.Hash}
		f.update(func(st *Status) {
			st.State = StateDiverged
			st.LastError = "the source's chain has no more work than this node's (on a tie the first seen stays)"
		})
	}
	return progress, nil
}

// findFork returns the last block of the local active chain that is on
// the source's active chain, with the source's headers from it (the first
// is the fork's own; at most MaxHeaders).
func (f *Follower) findFork(ctx context.Context, tip chainstate.BlockInfo) (chainstate.BlockInfo, []Header, error) {
	hs, err := f.headers(ctx, tip.Hash, MaxHeaders)
	if err != nil || len(hs) > 0 {
		return tip, hs, err
	}
	// Walk back at exponentially growing distances (a block locator)
	// until a block is on the source's chain.
	bad := tip.Height
	var good chainstate.BlockInfo
	for step, h := int32(1), tip.Height-1; ; step *= 2 {
		h = max(h, 0)
		n, ok := f.cs.AtHeight(h)
		if !ok {
			return tip, nil, errOrphan
		}
		hs, err := f.headers(ctx, n.Hash, 1)
		if err != nil {
			return tip, nil, err
		}
		if len(hs) == 1 {
			good = n
			break
		}
		if h == 0 {
			return tip, nil, &SourceError{Op: "headers", URL: f.src.URL(), Reason: "wrong-chain", class: ErrWrongChain,
				Detail: "the source's active chain does not contain this node's genesis block " + n.Hash.String()}
		}
		bad = h
		h -= step
	}
	// The fork is in good..bad-1: walk the source's headers from good
	// until one differs from the local chain.
	for {
		hs, err := f.headers(ctx, good.Hash, MaxHeaders)
		if err != nil {
			return tip, nil, err
		}
		if len(hs) == 0 {
			return tip, nil, errMoved
		}
		prev := good
		for i := 1; i < len(hs); i++ {
			local, ok := f.cs.AtHeight(good.Height + int32(i))
			if !ok || local.Hash != hs[i].Hash {
				return prev, hs[i-1:], nil
			}
			prev = local
		}
		last := prev
		if len(hs) < MaxHeaders || last.Height >= bad {
			// The source's chain ends inside the local one.
			return last, hs[len(hs)-1:], nil
		}
		good = last
	}
}

// headers fetches headers with the download retry policy.
func (f *Follower) headers(ctx context.Context, from wire.Hash, count int) ([]Header, error) {
	var hs []Header
	err := f.retry(ctx, func() error {
		var err error
		hs, err = f.src.Headers(ctx, from, count)
		return err
	})
	return hs, err
}

// retry runs fn up to Attempts times while it fails retryably, with a
// short doubling backoff; every failure is counted.
func (f *Follower) retry(ctx context.Context, fn func() error) error {
	wait := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		f.countError(err)
		if !retryable(err) || attempt >= f.cfg.Attempts {
			return err
		}
		f.log.Debug("request failed; retrying", "err", err, "attempt", attempt)
		sleep(ctx, jitter(wait))
		wait = min(2*wait, 5*time.Second)
	}
}

func (f *Follower) countError(err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	f.m.errors.WithLabelValues(reasonOf(err)).Inc()
	f.update(func(st *Status) { st.Errors++ })
}

// job is one block download.
type job struct {
	hash   wire.Hash
	height int32
	raw    []byte
	err    error
	done   chan struct{}
}

// learnHeaders fetches the source's headers after fork to the end of its
// active chain (first holds the first batch, starting with fork's header)
// and hands each batch to AcceptHeaders, as Core syncs headers before
// blocks; it returns the blocks' hashes in chain order. A header the
// chainstate refuses makes its block (and the ones after it) fail with the
// same reason when they arrive, so the rejection path stays in one place.
func (f *Follower) learnHeaders(ctx context.Context, fork chainstate.BlockInfo, batch []Header) ([]wire.Hash, error) {
	start := time.Now()
	var hashes []wire.Hash
	var invalid int
	var firstErr error
	for {
		hs := make([]wire.Header, 0, len(batch)-1)
		for _, h := range batch[1:] {
			hs = append(hs, h.Header)
			hashes = append(hashes, h.Hash)
		}
		res := f.cs.AcceptHeaders(hs)
		invalid += res.Invalid
		if firstErr == nil {
			firstErr = res.FirstErr
		}
		if len(res.Unlinked) > 0 {
			// The batch chains from the fork, which is indexed: the local
			// chain moved under the round.
			return nil, errOrphan
		}
		if len(batch) < MaxHeaders || invalid > 0 {
			break // the end of the source's chain, or nothing past a refused header is useful
		}
		var err error
		if batch, err = f.headers(ctx, batch[len(batch)-1].Hash, MaxHeaders); err != nil {
			return nil, err
		}
		if len(batch) == 0 {
			return nil, errMoved
		}
	}
	lvl := slog.LevelDebug
	if len(hashes) >= MaxHeaders {
		lvl = slog.LevelInfo
	}
	f.log.Log(ctx, lvl, "headers learned", "headers", len(hashes), "from_height", fork.Height+1, "to_height", fork.Height+int32(len(hashes)),
		"refused", invalid, "first_refusal", firstErr, "seconds", fmt.Sprintf("%.2f", time.Since(start).Seconds()))
	return hashes, nil
}

// fetchAndConnect downloads the blocks after fork (hashes, in chain order)
// and processes them in order. It returns how many blocks it processed.
func (f *Follower) fetchAndConnect(ctx context.Context, fork chainstate.BlockInfo, hashes []wire.Hash) (int, error) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ordered := make(chan *job, f.cfg.Prefetch)
	jobs := make(chan *job)
	var wg sync.WaitGroup
	var prodErr error
	wg.Go(func() {
		defer close(jobs)
		defer close(ordered)
		prodErr = f.produce(rctx, fork, hashes, ordered, jobs)
	})
	for range f.cfg.Concurrency {
		wg.Go(func() {
			for j := range jobs {
				j.err = f.retry(rctx, func() error {
					var err error
					j.raw, err = f.src.Block(rctx, j.hash)
					return err
				})
				close(j.done)
			}
		})
	}
	defer wg.Wait()
	defer cancel()

	processed := 0
	start, lastLog := time.Now(), time.Now()
	var waited time.Duration
	for j := range ordered {
		t := time.Now()
		select {
		case <-j.done:
		case <-ctx.Done():
			return processed, ctx.Err()
		}
		w := time.Since(t)
		waited += w
		f.m.fetchWait.Add(w.Seconds())
		if j.err != nil {
			return processed, j.err
		}
		if ctx.Err() != nil {
			return processed, ctx.Err()
		}
		size := len(j.raw)
		res, err := f.cs.Submit(ctx, j.raw)
		j.raw = nil
		if err != nil {
			return processed, f.blockFailed(j, res, err)
		}
		processed++
		f.m.bytes.Add(float64(size))
		f.m.blocks.WithLabelValues(string(res.Status)).Inc()
		f.update(func(st *Status) { st.Blocks++ })
		if res.Status == chainstate.StatusOrphan {
			f.countError(errOrphan)
			return processed, errOrphan
		}
		tip := f.cs.Tip()
		f.m.height.Set(float64(tip.Height))
		if time.Since(lastLog) >= f.cfg.ProgressEvery {
			lastLog = time.Now()
			el := time.Since(start).Seconds()
			st := f.Status()
			f.log.Info("follow progress", "height", tip.Height, "source_height", st.SourceHeight,
				"blocks_per_s", int(float64(processed)/el), "fetch_wait_share", fmt.Sprintf("%.2f", waited.Seconds()/el))
		}
	}
	wg.Wait()
	if prodErr != nil {
		if !errors.Is(prodErr, errMoved) {
			f.countError(prodErr)
		}
		return processed, prodErr
	}
	if processed > 0 {
		tip := f.cs.Tip()
		f.log.Info("followed", "blocks", processed, "height", tip.Height, "tip", tip.Hash,
			"seconds", fmt.Sprintf("%.1f", time.Since(start).Seconds()), "fetch_wait_seconds", fmt.Sprintf("%.3f", waited.Seconds()))
	}
	return processed, nil
}

// produce queues one job per block: first in ordered (bounded: the
// prefetch window), then for the download workers.
func (f *Follower) produce(ctx context.Context, fork chainstate.BlockInfo, hashes []wire.Hash, ordered, jobs chan<- *job) error {
	for i, h := range hashes {
		j := &job{hash: h, height: fork.Height + 1 + int32(i), done: make(chan struct{})}
		select {
		case ordered <- j:
		case <-ctx.Done():
			return nil
		}
		select {
		case jobs <- j:
		case <-ctx.Done():
			j.err = ctx.Err()
			close(j.done)
			return nil
		}
	}
	return nil
}

// blockFailed turns a Submit failure into the round's error.
func (f *Follower) blockFailed(j *job, res chainstate.Result, err error) error {
	var re *validate.RuleError
	switch {
	case errors.As(err, &re):
		rej := &RejectedError{Rejection: Rejection{Hash: j.hash, Height: j.height, Reason: re.Reason, Detail: re.Detail, At: time.Now()}, Err: err}
		if res.Height >= 0 {
			rej.Height = res.Height
		}
		f.m.rejected.WithLabelValues(re.Reason).Inc()
		f.update(func(st *Status) { st.RejectedBlocks++ })
		return rej
	case errors.Is(err, chainstate.ErrParse):
		// The client parsed it already; count it as a bad reply.
		se := &SourceError{Op: "block", URL: f.src.URL(), Reason: "bad-block", Detail: err.Error(), class: ErrBadReply}
		f.countError(se)
		return se
	}
	return fmt.Errorf("%w: block %s height %d: %w", ErrChain, j.hash, j.height, err)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// jitter spreads d by ±20 % so that replicas do not retry in lockstep.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}
