package scripthash

import (
	"context"
	"sync"
)

// DefaultMaxPending bounds the queries waiting for one scan.
const DefaultMaxPending = 100_000

// Scanner implements Index without an index: concurrent Lookups are
// batched, and each batch is answered by one Scan of the coin set, so N
// requests that arrive during a scan cost one more scan, not N. A Lookup
// whose context ends stops waiting; a scan nobody waits for any more is
// abandoned.
type Scanner struct {
	src        CoinSource
	maxPending int

	mu      sync.Mutex
	pending *pass // accepting queries, not started
	running bool
}

// pass is one batch and its scan.
type pass struct {
	qs      []Query
	waiters int
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	res     Result
	err     error
}

// NewScanner returns a Scanner over src. maxPending (0: DefaultMaxPending)
// bounds the queries one batch collects; beyond it Lookup fails with
// ErrBusy.
func NewScanner(src CoinSource, maxPending int) *Scanner {
	if maxPending <= 0 {
		maxPending = DefaultMaxPending
	}
	return &Scanner{src: src, maxPending: maxPending}
}

// Lookup implements Index.
func (s *Scanner) Lookup(ctx context.Context, qs []Query) (Result, error) {
	if err := checkQueries(qs); err != nil {
		return Result{}, err
	}
	s.mu.Lock()
	p := s.pending
	if p == nil {
		pctx, cancel := context.WithCancel(context.Background())
		p = &pass{ctx: pctx, cancel: cancel, done: make(chan struct{})}
		s.pending = p
	}
	if len(p.qs)+len(qs) > s.maxPending {
		s.mu.Unlock()
		return Result{}, ErrBusy
	}
	off := len(p.qs)
	p.qs = append(p.qs, qs...)
	p.waiters++
	if !s.running {
		s.running = true
		go s.run()
	}
	s.mu.Unlock()

	select {
	case <-p.done:
		if p.err != nil {
			return Result{}, p.err
		}
		r := p.res
		r.Answers = p.res.Answers[off : off+len(qs) : off+len(qs)]
		return r, nil
	case <-ctx.Done():
		s.mu.Lock()
		p.waiters--
		if p.waiters == 0 {
			if s.pending == p {
				s.pending = nil
			}
			p.cancel()
		}
		s.mu.Unlock()
		return Result{}, ctx.Err()
	}
}

// run scans batch after batch until none is pending.
func (s *Scanner) run() {
	for {
		s.mu.Lock()
		p := s.pending
		s.pending = nil
		if p == nil {
			s.running = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		p.res, p.err = Scan(p.ctx, s.src, p.qs, nil)
		p.cancel()
		close(p.done)
	}
}
