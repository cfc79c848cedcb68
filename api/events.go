package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"utxod/descriptor"
	"utxod/events"
)

// The event streams (package events): GET /v1/events as Server-Sent Events
// or, with an Upgrade, as WebSocket messages; POST /v1/subscriptions for
// subscriptions too big for a URL.

// Limits of the event routes.
const (
	// MaxQueryWatches bounds the addresses, scripthashes, descriptors and
	// outpoints of a subscription given in the query; bigger ones are
	// POSTed to /v1/subscriptions.
	MaxQueryWatches     = 100
	maxSubscriptionBody = 8 << 20
	// eventWriteIdle bounds one write to a stream's client: a client that
	// takes longer is gone (its buffer in the hub fills meanwhile).
	eventWriteIdle = 10 * time.Second
	eventKeepalive = 15 * time.Second
)

// SubscriptionRequest is the body of POST /v1/subscriptions: what a stream
// watches.
type SubscriptionRequest struct {
	// Addresses of the node's network.
	Addresses []string `json:"addresses" example:"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"`
	// Scripthashes: SHA-256 of the output script, 64 hex digits (Esplora's).
	Scripthashes []string `json:"scripthashes" example:"6191c3b590bfcfa0475e877c302da1e323497acf3b42c08d8fa28e364edf018b"`
	// Descriptors as /v1/scan's scan objects: a descriptor string or
	// {"desc": "...", "range": end | [begin, end]} (default range 1000).
	Descriptors []json.RawMessage `json:"descriptors" swaggertype:"array,object"`
	// Outpoints ("txid:vout") whose spend is reported (spent, unspent).
	Outpoints []string `json:"outpoints" example:"4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b:0"`
	// Blocks asks for every block_connected and block_disconnected, not
	// only those closing a block with other events.
	Blocks bool `json:"blocks" example:"true"`
	// Tweaks asks for a tweaks event per connected block: the BIP352 tweak
	// data of its silent payment eligible transactions (a node with
	// --index silentpayments).
	Tweaks bool `json:"tweaks" example:"false"`
}

// Subscription is the answer of POST /v1/subscriptions.
type Subscription struct {
	// ID is a digest of the subscription: the same body gives the same id
	// on every replica.
	ID        string `json:"id" example:"5f0c6a3e2b8d41a79c1e0d2f3a4b5c6d"`
	Scripts   int    `json:"scripts" example:"1001"`
	Outpoints int    `json:"outpoints" example:"0"`
	Blocks    bool   `json:"blocks" example:"true"`
	Tweaks    bool   `json:"tweaks" example:"false"`
	// Events is the stream's path.
	Events string `json:"events" example:"/v1/events?subscription=5f0c6a3e2b8d41a79c1e0d2f3a4b5c6d"`
}

// EventMessage is one WebSocket message of GET /v1/events: the SSE event's
// kind, id (the resume cursor) and data. A message with only an id moves
// the cursor on (a block with nothing for the subscription).
type EventMessage struct {
	Event string          `json:"event,omitempty" example:"output_created"`
	ID    string          `json:"id" example:"101:0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"`
	Data  json.RawMessage `json:"data,omitempty" swaggertype:"object"`
}

// EventTypes lists the data of each event kind, for the OpenAPI document
// (no route answers it).
type EventTypes struct {
	BlockConnected    events.BlockConnected    `json:"block_connected"`
	BlockDisconnected events.BlockDisconnected `json:"block_disconnected"`
	OutputCreated     events.OutputCreated     `json:"output_created"`
	OutputSpent       events.OutputSpent       `json:"output_spent"`
	OutputRemoved     events.OutputRemoved     `json:"output_removed"`
	OutputRestored    events.OutputRestored    `json:"output_restored"`
	Spent             events.Spent             `json:"spent"`
	Unspent           events.Unspent           `json:"unspent"`
	Reset             events.Reset             `json:"reset"`
	Tweaks            events.Tweaks            `json:"tweaks"`
}

// eventService is the API's side of the streams.
type eventService struct {
	hub  *events.Hub
	subs *events.Registry
	lim  events.Limits
	// delivery observes each live batch's delay (metrics.registerEvents).
	delivery prometheus.Histogram
	// shared holds, per format, the bytes of the last one-message batch
	// written (appendBatch).
	shared [eventFormats]atomic.Pointer[sharedFrame]
	pool   eventPool
}

func newEventService(cfg Config) *eventService {
	if cfg.Events == nil {
		return nil
	}
	e := &eventService{hub: cfg.Events, subs: events.NewRegistry(0, 0)}
	e.pool.init(e)
	return e
}

func (s *Server) eventRoutes(r chi.Router) {
	r.Get("/events", s.handleEvents)
	r.Post("/subscriptions", s.handlePostSubscription)
}

// handlePostSubscription godoc
//
//	@Summary		Create a subscription for an event stream
//	@Description	Validates and keeps a subscription (addresses of the node's network, scripthashes, descriptors over their range as /v1/scan takes them, outpoints, blocks, tweaks: a tweaks event per connected block on a node with --index silentpayments) and answers its id; GET /v1/events?subscription=id streams it. The id is a digest of the content: the same body gives the same id on any replica, so a stream that meets 404 on another replica (or after a restart) creates it again and resumes with its cursor. At most 100,000 scripts (descriptors expanded), 10,000 outpoints and 1,000 descriptors.
//	@Tags			events
//	@Accept			json
//	@Produce		json
//	@Param			request	body		SubscriptionRequest	true	"what to watch"
//	@Success		201		{object}	Subscription
//	@Failure		400		{object}	Problem	"malformed body, address of another network, bad scripthash, outpoint or descriptor, nothing to watch"
//	@Failure		413		{object}	Problem	"body above 8 MiB, too many scripts, outpoints or descriptors"
//	@Failure		501		{object}	Problem	"events are off on this node, or tweaks without the silent-payments index"
//	@Failure		503		{object}	Problem	"the node keeps too many subscriptions"
//	@Router			/v1/subscriptions [post]
func (s *Server) handlePostSubscription(w http.ResponseWriter, r *http.Request) {
	if s.events == nil {
		writeEventsOff(w)
		return
	}
	var req SubscriptionRequest
	if !decodeBody(w, r, maxSubscriptionBody, &req) {
		return
	}
	spec, err := req.Spec()
	if err != nil {
		writeProblem(w, http.StatusBadRequest, "bad-descriptor", err.Error())
		return
	}
	if spec.Tweaks && s.sp == nil {
		writeNoTweakIndex(w)
		return
	}
	f, err := events.Compile(r.Context(), spec, s.params, s.events.lim)
	if err != nil {
		writeEventsProblem(w, err)
		return
	}
	if f, err = s.events.subs.Put(f); err != nil {
		writeEventsProblem(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, Subscription{ID: f.ID(), Scripts: len(f.Scripts), Outpoints: len(f.Outpoints),
		Blocks: f.Blocks, Tweaks: f.Tweaks, Events: "/v1/events?subscription=" + f.ID()})
}

// handleEvents godoc
//
//	@Summary		Stream chain events (Server-Sent Events or WebSocket)
//	@Description	A stream of what happens on the active chain to a subscription: block_connected and block_disconnected, output_created and output_spent for outputs paying a watched script, spent for a watched outpoint, and on a reorganisation the reversals of the disconnected blocks first (output_removed, output_restored, unspent; newest block first, each closed by its block_disconnected), then the new branch's events. The subscription is ?subscription=id (POST /v1/subscriptions) or query parameters: address, scripthash, descriptor (range [0,1000] when ranged), outpoint (txid:vout), each repeatable, at most 100 in all, blocks=true for every block (otherwise only blocks with events for the subscription get their block_connected; the others move the cursor with an id-only frame), and tweaks=true for a tweaks event per connected block (before its block_connected): height, hash and each silent payment eligible transaction's txid, BIP352 tweak and largest taproot output value, as GET /tweaks/{height} (a node with --index silentpayments; nothing more on a disconnect than block_disconnected).
//	@Description	Each SSE event has event: the kind (EventTypes lists the data of each), data: its JSON and id: its cursor "height:hash". A block's events come before its block_connected, whose id is the block; theirs is the parent, so a client cut off inside a block receives all of it again. block_disconnected's id is the disconnected block's parent. Resuming with Last-Event-ID (or ?from=height:hash) sends everything since that block from the blocks and undo data the node keeps (the last 288 blocks, all with --archive): 410 when the cursor is older or unknown. A cursor on a branch the node left gets that branch's reversals if the node still has their data, else a reset event naming the fork, then the active chain's events. Cursors are chain data: any replica resumes them.
//	@Description	With Upgrade: websocket the same stream comes as WebSocket text messages (EventMessage: event, id, data). A client whose buffer fills (4,096 events) or that does not read for 10 s is cut off; it resumes with its cursor.
//	@Tags			events
//	@Produce		text/event-stream
//	@Param			subscription	query		string		false	"id from POST /v1/subscriptions"
//	@Param			address			query		[]string	false	"address of the node's network"	collectionFormat(multi)
//	@Param			scripthash		query		[]string	false	"SHA-256 of the script, 64 hex digits"	collectionFormat(multi)
//	@Param			descriptor		query		[]string	false	"output descriptor (ranged: [0,1000])"	collectionFormat(multi)
//	@Param			outpoint		query		[]string	false	"txid:vout"	collectionFormat(multi)
//	@Param			blocks			query		bool		false	"every block_connected and block_disconnected"
//	@Param			tweaks			query		bool		false	"a tweaks event per connected block (--index silentpayments)"
//	@Param			from			query		string		false	"resume after this cursor (height:hash)"
//	@Param			Last-Event-ID	header		string		false	"resume after this cursor (SSE reconnection)"
//	@Success		200				{object}	EventTypes	"text/event-stream; each event's data is one of these"
//	@Success		101				{object}	EventMessage	"WebSocket: one message per event"
//	@Failure		400				{object}	Problem		"bad subscription or cursor"
//	@Failure		404				{object}	Problem		"unknown subscription id: POST it again"
//	@Failure		410				{object}	Problem		"cursor older than the blocks the node keeps, or unknown"
//	@Failure		413				{object}	Problem		"more than 100 watches in the query, or a subscription over the limits"
//	@Failure		501				{object}	Problem		"events are off on this node, or tweaks without the silent-payments index"
//	@Failure		503				{object}	Problem		"too many streams or watched scripts on this node"
//	@Router			/v1/events [get]
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	if s.events == nil {
		writeEventsOff(w)
		return
	}
	f, ok := s.eventFilter(w, r)
	if !ok {
		return
	}
	var from *events.Cursor
	cur := r.Header.Get("Last-Event-ID")
	if cur == "" {
		cur = r.URL.Query().Get("from")
	}
	if cur != "" {
		c, err := events.ParseCursor(cur)
		if err != nil {
			writeEventsProblem(w, err)
			return
		}
		from = &c
	}
	st, err := s.events.hub.Subscribe(f, from)
	if err != nil {
		writeEventsProblem(w, err)
		return
	}
	defer st.Close()
	w, ok = beginEventStream(w)
	if !ok {
		return
	}
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		s.serveEventsWS(w, r, st)
		return
	}
	s.serveEventsSSE(w, r, st)
}

// eventFilter is the subscription a stream names: ?subscription=id or the
// query's watches.
func (s *Server) eventFilter(w http.ResponseWriter, r *http.Request) (*events.Filter, bool) {
	q := r.URL.Query()
	if id := q.Get("subscription"); id != "" {
		f, err := s.events.subs.Get(id)
		if err != nil {
			writeEventsProblem(w, err)
			return nil, false
		}
		return f, true
	}
	spec := events.Spec{Addresses: q["address"], Scripthashes: q["scripthash"], Outpoints: q["outpoint"]}
	for _, d := range q["descriptor"] {
		spec.Descriptors = append(spec.Descriptors, descriptor.ScanObject{Desc: d})
	}
	if n := len(spec.Addresses) + len(spec.Scripthashes) + len(spec.Outpoints) + len(spec.Descriptors); n > MaxQueryWatches {
		writeProblem(w, http.StatusRequestEntityTooLarge, "subscription-too-large",
			fmt.Sprintf("%d watches in the query; at most %d: POST bigger subscriptions to /v1/subscriptions", n, MaxQueryWatches))
		return nil, false
	}
	if b := q.Get("blocks"); b != "" {
		v, err := strconv.ParseBool(b)
		if err != nil {
			writeProblem(w, http.StatusBadRequest, "bad-subscription", "blocks is true or false")
			return nil, false
		}
		spec.Blocks = v
	}
	if b := q.Get("tweaks"); b != "" {
		v, err := strconv.ParseBool(b)
		if err != nil {
			writeProblem(w, http.StatusBadRequest, "bad-subscription", "tweaks is true or false")
			return nil, false
		}
		spec.Tweaks = v
	}
	if spec.Tweaks && s.sp == nil {
		writeNoTweakIndex(w)
		return nil, false
	}
	f, err := events.Compile(r.Context(), spec, s.params, s.events.lim)
	if err != nil {
		writeEventsProblem(w, err)
		return nil, false
	}
	return f, true
}

// serveEventsSSE writes the stream as Server-Sent Events: the head by
// net/http, then the connection is the pool's (serveConn).
func (s *Server) serveEventsSSE(w http.ResponseWriter, r *http.Request, st *events.Stream) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	conn, brw, err := http.NewResponseController(w).Hijack() // writes the head first
	if err != nil {
		s.log.Debug("events: no connection to take", "err", err)
		return
	}
	f := sseChunked // as net/http chose for the head
	if !r.ProtoAtLeast(1, 1) {
		f = sseRaw
	}
	s.events.serveConn(r.Context(), newEventConn(st, conn, f), brw.Reader, readSSE)
}

// appendSSE appends one event: kind, id, data (one line: compact JSON). A
// message without a kind is an id alone, which moves the client's
// Last-Event-ID without an event; the zero Message is a comment
// (keepalive).
func appendSSE(b []byte, m events.Message) []byte {
	if m.Kind == "" && m.Data == nil && m.Cursor == (events.Cursor{}) {
		return append(b, ": keepalive\n\n"...)
	}
	if m.Kind != "" {
		b = append(b, "event: "...)
		b = append(b, m.Kind...)
		b = append(b, '\n')
	}
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, int64(m.Cursor.Height), 10)
	b = append(b, ':')
	b = append(b, m.Cursor.Hash.String()...)
	b = append(b, '\n')
	if m.Data != nil {
		b = append(b, "data: "...)
		b = append(b, m.Data...)
		b = append(b, '\n')
	}
	return append(b, '\n')
}

// serveEventsWS writes the stream as WebSocket messages (EventMessage).
// Public read-only data, as the SSE stream: any origin.
func (s *Server) serveEventsWS(w http.ResponseWriter, r *http.Request, st *events.Stream) {
	conn, in, err := acceptWS(w, r)
	if err != nil {
		return
	}
	s.events.serveConn(r.Context(), newEventConn(st, conn, wsText), in, readWS)
}

func writeEventsOff(w http.ResponseWriter) {
	writeProblem(w, http.StatusNotImplemented, "events-off", "event streams are off on this node")
}

// writeEventsProblem maps the events package's errors to problems.
func writeEventsProblem(w http.ResponseWriter, err error) {
	var de *descriptor.Error
	switch {
	case errors.As(err, &de):
		writeDescriptorProblem(w, err)
	case errors.Is(err, events.ErrTooLarge):
		writeProblem(w, http.StatusRequestEntityTooLarge, "subscription-too-large", err.Error())
	case errors.Is(err, events.ErrBadSpec):
		writeProblem(w, http.StatusBadRequest, "bad-subscription", err.Error())
	case errors.Is(err, events.ErrBadCursor):
		writeProblem(w, http.StatusBadRequest, "bad-cursor", err.Error())
	case errors.Is(err, events.ErrUnknownSubscription):
		writeProblem(w, http.StatusNotFound, "unknown-subscription", err.Error())
	case errors.Is(err, events.ErrCursorTooOld):
		writeProblem(w, http.StatusGone, "cursor-too-old", err.Error())
	case errors.Is(err, events.ErrUnknownCursor):
		writeProblem(w, http.StatusGone, "unknown-cursor", err.Error())
	case errors.Is(err, events.ErrFull):
		w.Header().Set("Retry-After", "10")
		writeProblem(w, http.StatusServiceUnavailable, "events-full", err.Error())
	case errors.Is(err, events.ErrClosed):
		writeProblem(w, http.StatusServiceUnavailable, "shutting-down", "the server is shutting down")
	default:
		writeProblem(w, http.StatusInternalServerError, "internal", err.Error())
	}
}
