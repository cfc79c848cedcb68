package events

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"utxod/chainstate"
	"utxod/scripthash"
	"utxod/utxo"
	"utxod/wire"
)

// Chain is what the Hub reads from the node to replay past blocks:
// *chainstate.Chainstate has it.
type Chain interface {
	Tip() chainstate.BlockInfo
	Lookup(hash wire.Hash) (chainstate.BlockInfo, bool)
	// BlockData is a block's raw data while the node keeps it.
	BlockData(hash wire.Hash) ([]byte, error)
	// SpentCoins are the coins a block spent while its undo data is kept.
	SpentCoins(hash wire.Hash) ([]utxo.Entry, error)
}

var _ Chain = (*chainstate.Chainstate)(nil)
var _ chainstate.Observer = (*Hub)(nil)

// Config configures a Hub.
type Config struct {
	Chain Chain
	Log   *slog.Logger
	// MaxStreams bounds the open streams (default 10,000).
	MaxStreams int
	// MaxWatched bounds the scripts and outpoints the open streams watch
	// in total, each stream's counted (default 2,000,000).
	MaxWatched int
	// Buffer is how many messages may wait for one stream's client before
	// it is cut off (default 4,096).
	Buffer int
	// Recent is how many blocks, connected or disconnected, the Hub keeps
	// in memory for resuming clients (default 16): a disconnected block's
	// undo data leaves the store, so this is where the reversal of a
	// branch a client saw comes from.
	Recent int
	// MaxReplay bounds the blocks one resume replays (default 10,000).
	MaxReplay int
}

// Errors of Subscribe.
var (
	// ErrCursorTooOld: the node no longer keeps the blocks after the
	// cursor (or they are more than MaxReplay).
	ErrCursorTooOld = errors.New("events: the cursor is older than the blocks this node keeps")
	// ErrUnknownCursor: the cursor's block is not known to this node.
	ErrUnknownCursor = errors.New("events: the cursor names a block this node does not know")
	// ErrFull: the Hub has MaxStreams streams or MaxWatched watches.
	ErrFull = errors.New("events: too many streams or watched scripts on this node")
	// ErrClosed: the Hub is closed.
	ErrClosed = errors.New("events: closed")
	// ErrCutOff: the stream's client did not keep up (its buffer filled).
	ErrCutOff = errors.New("events: the client did not keep up: its buffer filled")
)

// watch lists the streams watching one scripthash or outpoint.
type watch struct {
	first *Stream
	more  []*Stream
}

func (w *watch) add(s *Stream) {
	if w.first == nil {
		w.first = s
		return
	}
	w.more = append(w.more, s)
}

// remove drops s; it reports the watch empty.
func (w *watch) remove(s *Stream) bool {
	if w.first == s {
		if len(w.more) == 0 {
			return true
		}
		w.first, w.more = w.more[len(w.more)-1], w.more[:len(w.more)-1]
		return false
	}
	for i, o := range w.more {
		if o == s {
			w.more[i] = w.more[len(w.more)-1]
			w.more = w.more[:len(w.more)-1]
			break
		}
	}
	return false
}

func (w *watch) each(fn func(*Stream)) {
	if w.first != nil {
		fn(w.first)
	}
	for _, s := range w.more {
		fn(s)
	}
}

// job is one block the chainstate announced.
type job struct {
	d          *blockData
	disconnect bool
	at         time.Time
}

// Hub fans the chain's blocks out to streams. Create it with New, make it
// the chainstate's observer (SetObserver), Close it at shutdown.
type Hub struct {
	cfg Config
	log *slog.Logger

	qmu    sync.Mutex
	queue  []job
	wake   chan struct{}
	closed bool
	stop   chan struct{}
	done   chan struct{}

	// mu guards the index, the streams, tip and recent: the fan-out of a
	// block and the registration of a stream exclude each other, so a
	// stream gets each block either live or by its replay, never both.
	mu        sync.Mutex
	scripts   map[scripthash.Hash]watch
	outpoints map[utxo.Outpoint]watch
	streams   map[*Stream]struct{}
	watched   int
	// tweakStreams counts the streams whose filter asks for tweaks.
	tweakStreams atomic.Int64
	tip          Cursor
	recent       map[wire.Hash]*blockData
	order        []wire.Hash // recent's keys, oldest first
	announced    time.Time   // the block being fanned out: when the chainstate announced it
	// fanned is closed, and replaced, when a block's fan-out is done.
	fanned atomic.Pointer[chan struct{}]

	stats Stats
}

// Stats are the Hub's counters.
type Stats struct {
	Blocks   atomic.Int64 // blocks fanned out
	CutOff   atomic.Int64 // streams cut off
	Messages atomic.Int64 // messages queued to streams
	// Fanout is the last block's time from the chainstate's call to the
	// last stream's queue.
	Fanout atomic.Int64 // nanoseconds
}

// New returns a Hub at the chain's tip, its goroutine running.
func New(cfg Config) *Hub {
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = 10_000
	}
	if cfg.MaxWatched <= 0 {
		cfg.MaxWatched = 2_000_000
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = 4096
	}
	if cfg.Recent <= 0 {
		cfg.Recent = 16
	}
	if cfg.MaxReplay <= 0 {
		cfg.MaxReplay = 10_000
	}
	h := &Hub{
		cfg: cfg, log: cfg.Log,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		scripts: make(map[scripthash.Hash]watch), outpoints: make(map[utxo.Outpoint]watch),
		streams: make(map[*Stream]struct{}), recent: make(map[wire.Hash]*blockData),
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	fanned := make(chan struct{})
	h.fanned.Store(&fanned)
	tip := cfg.Chain.Tip()
	h.tip = Cursor{Height: tip.Height, Hash: tip.Hash}
	go h.run()
	return h
}

// Fanned is closed once the next block's fan-out is done: every stream's
// batch of it is queued (Stream.Messages).
func (h *Hub) Fanned() <-chan struct{} { return *h.fanned.Load() }

// signalFanned wakes those waiting on Fanned.
func (h *Hub) signalFanned() {
	next := make(chan struct{})
	close(*h.fanned.Swap(&next))
}

// Stats returns the Hub's counters.
func (h *Hub) Stats() *Stats { return &h.stats }

// Tip is the last block the Hub fanned out (connected, or the parent of
// the last disconnected).
func (h *Hub) Tip() Cursor {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tip
}

// Watched is the number of scripts and outpoints the open streams watch,
// and the number of open streams.
func (h *Hub) Watched() (watched, streams int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.watched, len(h.streams)
}

// BlockConnected implements chainstate.Observer: it copies the spent
// coins and queues the block.
func (h *Hub) BlockConnected(b *wire.Block, height int32, d *utxo.Delta) {
	h.enqueue(job{d: &blockData{b: b, height: height, spent: copyEntries(d.Spent)}, at: time.Now()})
}

// BlockDisconnected implements chainstate.Observer.
func (h *Hub) BlockDisconnected(b *wire.Block, height int32, undo *utxo.Delta) {
	if b == nil {
		h.log.Warn("events: a disconnected block's data is gone; streams get a reset", "height", height)
	}
	h.enqueue(job{d: &blockData{b: b, height: height, spent: copyEntries(undo.Spent)}, disconnect: true, at: time.Now()})
}

// copyEntries copies entries with their scripts in one arena.
func copyEntries(in []utxo.Entry) []utxo.Entry {
	n := 0
	for i := range in {
		n += len(in[i].Script)
	}
	arena := make([]byte, 0, n)
	out := make([]utxo.Entry, len(in))
	for i, e := range in {
		out[i] = e
		start := len(arena)
		arena = append(arena, e.Script...)
		out[i].Script = arena[start:len(arena):len(arena)]
	}
	return out
}

func (h *Hub) enqueue(j job) {
	h.qmu.Lock()
	if !h.closed {
		h.queue = append(h.queue, j)
	}
	h.qmu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Close stops the Hub and ends every stream.
func (h *Hub) Close() {
	h.qmu.Lock()
	if h.closed {
		h.qmu.Unlock()
		return
	}
	h.closed = true
	h.qmu.Unlock()
	close(h.stop)
	<-h.done
	h.mu.Lock()
	for s := range h.streams {
		h.endLocked(s, ErrClosed)
	}
	h.mu.Unlock()
}

func (h *Hub) run() {
	defer close(h.done)
	for {
		select {
		case <-h.stop:
			return
		case <-h.wake:
		}
		h.qmu.Lock()
		jobs := h.queue
		h.queue = nil
		h.qmu.Unlock()
		for _, j := range jobs {
			h.process(j)
			h.signalFanned()
		}
	}
}

// process fans one block out: the scripts are hashed before the lock is
// taken, the lookups and the queueing under it.
func (h *Hub) process(j job) {
	d := j.d
	if d.b == nil { // a disconnected block whose data is gone
		h.resetAll()
		return
	}
	ts, err := touches(d)
	if err != nil {
		h.log.Error("events: block skipped", "hash", d.b.Hash, "err", err)
	}
	e := newEncoder(d, j.disconnect)
	marker, advance := e.marker(), e.advance()
	// A connected block's tweaks, computed before the lock when a stream
	// asks for them (under it for one that subscribed meanwhile).
	var tweaks *Message
	tweaksOf := func() *Message {
		if tweaks == nil {
			list, err := blockTweaks(d)
			if err != nil {
				h.log.Error("events: tweaks skipped", "hash", d.b.Hash, "err", err)
				list = []TxTweak{}
			}
			m := e.tweaks(list)
			tweaks = &m
		}
		return tweaks
	}
	if !j.disconnect && h.tweakStreams.Load() > 0 {
		tweaksOf()
	}
	batches := make(map[*Stream][]Message)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.announced = j.at
	visit := func(t *touch) {
		if w, ok := h.scripts[t.sh]; ok {
			m := e.script(t)
			w.each(func(s *Stream) { batches[s] = append(batches[s], m) })
		}
		if t.spend {
			if w, ok := h.outpoints[t.op]; ok {
				m := e.outpoint(t)
				w.each(func(s *Stream) { batches[s] = append(batches[s], m) })
			}
		}
	}
	if j.disconnect {
		for i := len(ts) - 1; i >= 0; i-- {
			visit(&ts[i])
		}
	} else {
		for i := range ts {
			visit(&ts[i])
		}
	}
	onlyMarker, onlyAdvance := []Message{marker}, []Message{advance}
	for s := range h.streams {
		if s.f.Tweaks && !j.disconnect {
			batches[s] = append(batches[s], *tweaksOf())
		}
		b, ok := batches[s]
		switch {
		case ok:
			b = append(b, marker)
		case s.f.Blocks || s.f.Tweaks: // a tweaks client sees reorganisations
			b = onlyMarker
		default:
			b = onlyAdvance
		}
		h.deliverLocked(s, b)
	}
	if j.disconnect {
		h.tip = d.parent()
	} else {
		h.tip = d.cursor()
	}
	h.remember(d)
	h.stats.Blocks.Add(1)
	h.stats.Fanout.Store(int64(time.Since(j.at)))
}

// resetAll moves the Hub to its tip's parent and sends every stream a
// reset there (a disconnect whose block data was gone).
func (h *Hub) resetAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	info, ok := h.cfg.Chain.Lookup(h.tip.Hash)
	if ok && info.Height > 0 {
		h.tip = Cursor{Height: info.Height - 1, Hash: info.Header.PrevBlock}
	}
	m := Message{KindReset, h.tip, mustJSON(Reset{h.tip.Height, h.tip.Hash.String(), "a disconnected block's data was gone: its reversals are not known"})}
	h.announced = time.Now()
	for s := range h.streams {
		h.deliverLocked(s, []Message{m})
	}
}

// remember keeps d for resumes, dropping the oldest past cfg.Recent.
func (h *Hub) remember(d *blockData) {
	if _, ok := h.recent[d.b.Hash]; ok {
		h.order = slices.DeleteFunc(h.order, func(x wire.Hash) bool { return x == d.b.Hash })
	}
	h.order = append(h.order, d.b.Hash)
	h.recent[d.b.Hash] = d
	for len(h.order) > h.cfg.Recent {
		delete(h.recent, h.order[0])
		h.order = h.order[1:]
	}
}

// deliverLocked queues batch for s without waiting; a full buffer cuts s
// off.
func (h *Hub) deliverLocked(s *Stream, batch []Message) {
	// A block bigger than the buffer still goes to a client that is
	// not behind.
	if q := s.queued.Load(); q > 0 && q+int64(len(batch)) > int64(h.cfg.Buffer) {
		h.stats.CutOff.Add(1)
		h.endLocked(s, ErrCutOff)
		return
	}
	select {
	case s.ch <- Batch{batch, h.announced}:
		s.queued.Add(int64(len(batch)))
		h.stats.Messages.Add(int64(len(batch)))
	default:
		h.stats.CutOff.Add(1)
		h.endLocked(s, ErrCutOff)
	}
}

// addLocked indexes s's filter.
func (h *Hub) addLocked(s *Stream) {
	for _, sh := range s.f.Scripts {
		w := h.scripts[sh]
		w.add(s)
		h.scripts[sh] = w
	}
	for _, op := range s.f.Outpoints {
		w := h.outpoints[op]
		w.add(s)
		h.outpoints[op] = w
	}
	h.watched += s.weight()
	if s.f.Tweaks {
		h.tweakStreams.Add(1)
	}
	h.streams[s] = struct{}{}
}

// endLocked unindexes s and ends it with err (once).
func (h *Hub) endLocked(s *Stream, err error) {
	if _, ok := h.streams[s]; !ok {
		return
	}
	delete(h.streams, s)
	for _, sh := range s.f.Scripts {
		w := h.scripts[sh]
		if w.remove(s) {
			delete(h.scripts, sh)
		} else {
			h.scripts[sh] = w
		}
	}
	for _, op := range s.f.Outpoints {
		w := h.outpoints[op]
		if w.remove(s) {
			delete(h.outpoints, op)
		} else {
			h.outpoints[op] = w
		}
	}
	h.watched -= s.weight()
	if s.f.Tweaks {
		h.tweakStreams.Add(-1)
	}
	s.err = err
	close(s.done)
}

// Batch is what a stream receives live for one block: the block's
// messages for the stream, shared with other streams (not to be modified),
// and when the chainstate announced the block to the Hub, which is where a
// delivery's delay starts.
type Batch struct {
	Messages  []Message
	Announced time.Time
}

// Stream is one client's subscription: the replay of what it missed, then
// a batch of messages per block from the Hub.
type Stream struct {
	hub    *Hub
	f      *Filter
	ch     chan Batch
	queued atomic.Int64
	done   chan struct{}
	err    error // set before done closes
	plan   *plan
}

func (s *Stream) weight() int { return len(s.f.Scripts) + len(s.f.Outpoints) }

// Messages delivers the live messages, a block's at a time. Call Received
// with each batch's length once it is written.
func (s *Stream) Messages() <-chan Batch { return s.ch }

// Received frees n messages of the stream's buffer.
func (s *Stream) Received(n int) { s.queued.Add(-int64(n)) }

// Done is closed when the Hub ends the stream; Err then says why
// (ErrCutOff, ErrClosed).
func (s *Stream) Done() <-chan struct{} { return s.done }

// Err is why the stream ended (nil while it runs).
func (s *Stream) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Close ends the stream (the client left).
func (s *Stream) Close() {
	s.hub.mu.Lock()
	s.hub.endLocked(s, ErrClosed)
	s.hub.mu.Unlock()
}

// Subscribe opens a stream for f. With from, the stream first replays what
// happened after that block up to the Hub's position (Replay), then gets
// the blocks that follow live. Errors: ErrFull, ErrClosed, and for from
// ErrUnknownCursor, ErrBadCursor (height and hash disagree),
// ErrCursorTooOld.
func (h *Hub) Subscribe(f *Filter, from *Cursor) (*Stream, error) {
	s := &Stream{hub: h, f: f, ch: make(chan Batch, streamBatches), done: make(chan struct{})}
	h.qmu.Lock()
	closed := h.closed
	h.qmu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	h.mu.Lock()
	if len(h.streams) >= h.cfg.MaxStreams {
		h.mu.Unlock()
		return nil, fmt.Errorf("%w: %d streams open", ErrFull, len(h.streams))
	}
	if h.watched+s.weight() > h.cfg.MaxWatched {
		h.mu.Unlock()
		return nil, fmt.Errorf("%w: %d scripts and outpoints watched, at most %d", ErrFull, h.watched, h.cfg.MaxWatched)
	}
	h.addLocked(s)
	to := h.tip
	h.mu.Unlock()
	if from != nil && *from != to {
		p, err := h.plan(*from, to)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.plan = p
	}
	return s, nil
}

// streamBatches is the channel capacity of a stream, in blocks: a client
// this many blocks behind is cut off even if Buffer is not reached.
const streamBatches = 64
