package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"utxod/chainstate"
	"utxod/events"
	"utxod/params"
	"utxod/scripthash"
	"utxod/silentpayments"
	"utxod/utxo"
	"utxod/wire"
)

// Chain is what the API needs from the node. *chainstate.Chainstate
// implements it; tests may substitute fakes.
//
// Every answer is a copy taken under the node's own lock, or (Tip,
// AtHeight) read from the active chain it published when its last write
// hold ended, so handlers hold no lock on chain data and Tip and AtHeight
// never wait for a block being connected.
type Chain interface {
	// SubmitWith processes a block behind the node's one submission slot,
	// shared with the other producers of the process (a follower); it
	// returns ctx's error if ctx ends while queued and
	// chainstate.ErrClosed after Close. The result says how durable it is
	// (Flushed, Durable); opts.Durable flushes first when needed.
	SubmitWith(ctx context.Context, raw []byte, opts chainstate.SubmitOptions) (chainstate.Result, error)
	// Flushed is the tip of the state on disk, where a crash reopens.
	Flushed() chainstate.FlushedTip
	// Close stops taking blocks, waits for the one in flight and flushes.
	Close() error
	Info(hashType string) (utxo.ChainstateInfo, error)
	Coin(op utxo.Outpoint) (utxo.Coin, bool, error)
	// Coins reads several outpoints and the tip in one view.
	Coins(ops []utxo.Outpoint) (found []bool, coins []utxo.Coin, tip chainstate.BlockInfo, err error)
	Tip() chainstate.BlockInfo
	// BestHeader is the most-work valid header (its block may not have arrived).
	BestHeader() chainstate.BlockInfo
	Lookup(hash wire.Hash) (chainstate.BlockInfo, bool)
	AtHeight(h int32) (chainstate.BlockInfo, bool)
	// ActiveFrom returns up to max active-chain blocks from hash upward.
	ActiveFrom(hash wire.Hash, max int) []chainstate.BlockInfo
	Flush() error
}

var _ Chain = (*chainstate.Chainstate)(nil)

// submitObserver is a Chain that times the blocks it takes through Submit
// (the chainstate): the API observes them all, its own and those of other
// producers, as utxod_block_validation_seconds.
type submitObserver interface {
	ObserveSubmits(func(time.Duration))
}

// Config configures a Server.
type Config struct {
	// Chain is the node the API serves. Required.
	Chain Chain
	// Params are the network's parameters (for /rest/chaininfo). Required.
	Params *params.Params
	// Token is the bearer token that authorizes writes (POST /v1/blocks).
	// Required: writes are always authenticated.
	Token string
	// Log receives request errors and panics (default: discard).
	Log *slog.Logger
	// SizeOnDisk reports the bytes the chainstate occupies on disk, for
	// /rest/chaininfo's size_on_disk (nil: 0).
	SizeOnDisk func() int64
	// CacheBytes reports the coins cache size for the utxod_coins_cache_bytes
	// gauge (nil: the gauge is not exported).
	CacheBytes func() float64
	// Now is the clock (default time.Now), used for
	// initialblockdownload and verificationprogress.
	Now func() time.Time
	// Index, Coins and UTXOLimit configure the address routes (esplora.go,
	// addresses.go, scan.go): the store's scripthash index (nil or
	// ErrNoIndex: none), the coin set scanned without it (nil: Chain if it
	// is a scripthash.CoinSource), the Esplora /utxo limit (0: none).
	Index     scripthash.Index
	Coins     scripthash.CoinSource
	UTXOLimit int
	// SilentPayments is the store's tweak index (silentpayments.go; nil:
	// none, the routes answer 501).
	SilentPayments silentpayments.Index
	// Follow, when set, reports on following a source: /healthz then says
	// whether the node is in sync (in_sync) and how following goes.
	Follow func() (FollowHealth, bool)
	// Events, when set, serves the event streams (events.go; nil: 501).
	Events *events.Hub
}

// Server serves the utxod HTTP API. Create it with New; it is safe for
// concurrent use.
type Server struct {
	chain          Chain
	params         *params.Params
	token          []byte
	log            *slog.Logger
	sizeOnDisk     func() int64
	now            func() time.Time
	follow         func() (FollowHealth, bool)
	metrics        *metrics
	handler        http.Handler
	docsUI         http.Handler
	metricsHandler http.Handler

	closed atomic.Bool // by Close: /healthz answers 503
	addr   *addrService
	sp     silentpayments.Index
	events *eventService
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Chain == nil {
		return nil, errors.New("api: Config.Chain is required")
	}
	if cfg.Params == nil {
		return nil, errors.New("api: Config.Params is required")
	}
	if len(cfg.Token) < 16 {
		return nil, errors.New("api: Config.Token must be at least 16 characters")
	}
	s := &Server{
		chain:      cfg.Chain,
		params:     cfg.Params,
		token:      []byte(cfg.Token),
		log:        cfg.Log,
		sizeOnDisk: cfg.SizeOnDisk,
		now:        cfg.Now,
		follow:     cfg.Follow,
		sp:         cfg.SilentPayments,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.sizeOnDisk == nil {
		s.sizeOnDisk = func() int64 { return 0 }
	}
	s.metrics = newMetrics(cfg.CacheBytes, func() float64 { return float64(s.chain.Tip().Height) })
	if o, ok := cfg.Chain.(submitObserver); ok {
		o.ObserveSubmits(func(d time.Duration) { s.metrics.validation.Observe(d.Seconds()) })
	}
	s.addr = newAddrService(cfg)
	s.events = newEventService(cfg)
	if s.events != nil {
		s.events.delivery = s.metrics.registerEvents(cfg.Events)
	}
	s.docsUI = newDocsUI()
	s.metricsHandler = s.metrics.handler()
	s.handler = s.routes()
	return s, nil
}

// Handler returns the HTTP handler serving every route.
func (s *Server) Handler() http.Handler { return s.handler }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Flush flushes the chainstate, observing the flush latency metric.
func (s *Server) Flush() error {
	start := time.Now()
	err := s.chain.Flush()
	s.metrics.flush.Observe(time.Since(start).Seconds())
	return err
}

// Close makes /healthz report the shutdown and closes the chain to new
// blocks (Chain.Close: later submissions fail with 503, the block in
// flight finishes, the state is flushed). Reads keep working. Call it
// after http.Server.Shutdown and before closing the store.
func (s *Server) Close() error {
	s.closed.Store(true)
	return s.chain.Close()
}

func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(s.metrics.instrument, s.recoverer, s.stamp)
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		writeProblem(w, http.StatusNotFound, "not-found", "no such route")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		writeProblem(w, http.StatusMethodNotAllowed, "method-not-allowed", "method not allowed on this route")
	})

	r.Get("/healthz", s.handleHealth)
	r.Get("/metrics", s.handleMetrics)
	r.Get("/openapi.json", s.handleOpenAPI)
	r.Get("/docs", s.handleDocs)
	r.Get("/docs/*", s.handleDocs)

	r.Route("/v1", func(r chi.Router) {
		r.With(s.requireToken).Post("/blocks", s.handlePostBlock)
		r.Get("/blocks/{hash}", s.handleGetBlock)
		r.Get("/blocks/height/{height}", s.handleBlockAtHeight)
		r.Get("/tip", s.handleTip)
		r.Get("/chainstate", s.handleChainstate)
		r.Get("/utxos/{txid}/{vout}", s.handleUTXO)
		r.Get("/snapshot", s.handleSnapshot)
		s.addressRoutes(r)
		s.eventRoutes(r)
	})
	r.Route("/api", s.esploraRoutes)
	s.silentPaymentsRoutes(r)

	// Bitcoin Core's REST interface (src/rest.cpp): dispatched by prefix
	// like Core does, so the URI parsing matches Core's.
	r.Get("/rest/*", s.handleREST)
	r.Post("/rest/getutxos*", s.handleREST)
	return r
}

// recoverer turns a handler panic into a 500 problem response and a log
// line, keeping the process alive.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			writeProblem(w, http.StatusInternalServerError, "internal", "internal error")
		}()
		next.ServeHTTP(w, r)
	})
}

// requireToken checks "Authorization: Bearer <token>" before the handler
// reads anything; failures are 401 and change nothing.
func (s *Server) requireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		scheme, tok, ok := strings.Cut(auth, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), s.token) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="utxod"`)
			detail := "missing bearer token: send Authorization: Bearer <token from the cookie file>"
			if auth != "" {
				detail = "invalid bearer token"
			}
			writeProblem(w, http.StatusUnauthorized, "unauthorized", detail)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Health is the /healthz answer.
type Health struct {
	Status string `json:"status" example:"ok"`
	Height int32  `json:"height" example:"14131"`
	Tip    string `json:"tip" example:"00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c"`
	// FlushedHeight is the height of the tip of the chain state on disk
	// (the last flush's): a crash reopens the node there, and blocks
	// acknowledged above it must be submitted again (serve --follow
	// fetches them again by itself).
	FlushedHeight int32 `json:"flushed_height" example:"14131"`
	// FlushedHash is the hash of that tip.
	FlushedHash string `json:"flushed_hash" example:"00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c"`
	// InSync is present when the node follows a source (serve --follow):
	// whether its tip is the source's tip as of the last poll.
	InSync *bool `json:"in_sync,omitempty" example:"true"`
	// Follow describes the following (present with --follow).
	Follow *FollowHealth `json:"follow,omitempty"`
}

// handleHealth godoc
//
//	@Summary		Liveness and readiness
//	@Description	status, height and tip of the active chain, and the tip of the state on disk (flushed_height, flushed_hash). A node following a source (serve --follow) adds in_sync (its tip is the source's as of the last poll: what a load balancer should check before sending reads) and follow (state, source height and tip, errors, the rejected block that paused following).
//	@Tags			operations
//	@Produce	json
//	@Success	200	{object}	Health
//	@Failure	503	{object}	Problem	"block processing stopped (shutting down)"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router		/healthz [get]
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if s.closed.Load() {
		writeProblem(w, http.StatusServiceUnavailable, "shutting-down", "the server is shutting down")
		return
	}
	tip, f := s.chain.Tip(), s.chain.Flushed()
	answeredAt(r, tip.Hash, tip.Height)
	h := Health{Status: "ok", Height: tip.Height, Tip: tip.Hash.String(), FlushedHeight: f.Height, FlushedHash: f.Hash.String()}
	if s.follow != nil {
		fh, inSync := s.follow()
		h.InSync, h.Follow = &inSync, &fh
	}
	writeJSON(w, http.StatusOK, h)
}

// handleMetrics godoc
//
//	@Summary		Prometheus metrics
//	@Description	Blocks processed and rejected (by Core reject reason), validation and flush latency histograms, event streams (open streams, watched scripts, cut-offs, the delay from a block's announcement to each stream's write), HTTP request counts and latencies by route, tip height, Go runtime and process metrics.
//	@Tags			operations
//	@Produce		plain
//	@Success		200
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/metrics [get]
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	s.metricsHandler.ServeHTTP(w, r)
}
