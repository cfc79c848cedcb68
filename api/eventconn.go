package api

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"utxod/events"
)

// The live writes of the event streams. Each stream's connection is taken
// from net/http (Hijack) and written by a few pool goroutines, about one
// per CPU, which go over every open stream once per block: one
// non-blocking write(2) of the stream's queued batches each. A goroutine
// per stream woken per block cost more than the writes themselves at
// 10,000 streams (bench/results/events.md). A write the socket does not
// take at once goes on in a goroutine of its own with eventWriteIdle, so a
// stalled client never holds the pool; meanwhile its batches wait in the
// Hub, which cuts it off when its buffer fills.

// eventFormat is a stream's framing on the wire.
type eventFormat uint8

const (
	sseChunked eventFormat = iota // SSE in HTTP/1.1 chunks
	sseRaw                        // SSE over HTTP/1.0: the body ends with the connection
	wsText                        // a WebSocket text message per event (EventMessage)
	eventFormats
)

// appendBatch appends a batch as it goes on the wire; tmp is scratch.
func (f eventFormat) appendBatch(b, tmp []byte, batch []events.Message) ([]byte, []byte) {
	switch f {
	case sseRaw:
		for _, m := range batch {
			b = appendSSE(b, m)
		}
	case sseChunked:
		tmp = tmp[:0]
		for _, m := range batch {
			tmp = appendSSE(tmp, m)
		}
		b = appendChunk(b, tmp)
	case wsText:
		for _, m := range batch {
			if m.Cursor == (events.Cursor{}) && m.Kind == "" { // a keepalive
				b = appendWSFrame(b, wsOpPing, nil)
				continue
			}
			b = appendWSFrame(b, wsOpText, eventMessage(m))
		}
	}
	return b, tmp
}

// end is what a stream's end sends: the last chunk, or a WebSocket close.
func (f eventFormat) end(code uint16, reason string) []byte {
	switch f {
	case sseChunked:
		return []byte("0\r\n\r\n")
	case wsText:
		return appendWSClose(nil, code, reason)
	}
	return nil
}

func appendChunk(b, body []byte) []byte {
	b = strconv.AppendInt(b, int64(len(body)), 16)
	b = append(b, "\r\n"...)
	b = append(b, body...)
	return append(b, "\r\n"...)
}

// eventMessage is m as EventMessage's JSON (m.Data is the Hub's JSON, so
// Marshal does not fail).
func eventMessage(m events.Message) []byte {
	j, _ := json.Marshal(EventMessage{Event: m.Kind, ID: m.Cursor.String(), Data: m.Data})
	return j
}

// sharedFrame is a one-message batch's bytes in one format, by the batch's
// first element (the memo keeps the batch alive, so the address is not
// reused): the Hub hands the same batch (a block's marker, or the id-only
// advance) to every stream with nothing else in the block.
type sharedFrame struct {
	key   *events.Message
	frame []byte
}

// eventConn is one stream's connection once net/http let it go.
type eventConn struct {
	st     *events.Stream
	conn   net.Conn
	format eventFormat
	// wmu is held by whoever writes to conn: a pool goroutine (TryLock:
	// it skips a stream someone else writes), the write that goes on after
	// it, the handler (replay, end) and the WebSocket reader (pong, close).
	wmu   sync.Mutex
	last  time.Time // the last write (wmu)
	ended bool      // the end (last chunk, close frame) is written (wmu)
	raw   syscall.RawConn
	// The non-blocking write's buffer and results (wmu).
	wb      []byte
	wn      int
	werr    error
	writeFn func(fd uintptr) bool
}

func newEventConn(st *events.Stream, conn net.Conn, f eventFormat) *eventConn {
	c := &eventConn{st: st, conn: conn, format: f, last: time.Now()}
	if sc, ok := conn.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw = raw
		}
	}
	c.writeFn = func(fd uintptr) bool {
		for len(c.wb) > 0 {
			n, err := syscall.Write(int(fd), c.wb)
			if err == syscall.EINTR {
				continue
			}
			if err != nil || n <= 0 {
				c.werr = err
				break
			}
			c.wn += n
			c.wb = c.wb[n:]
		}
		return true // never wait for the socket: the caller decides
	}
	return c
}

// tryWrite writes what the socket takes without waiting (wmu held); n <
// len(b) with a nil error or EAGAIN means the rest is to be written.
func (c *eventConn) tryWrite(b []byte) (int, error) {
	if c.raw == nil {
		return 0, nil
	}
	c.wb, c.wn, c.werr = b, 0, nil
	err := c.raw.Write(c.writeFn)
	n, werr := c.wn, c.werr
	c.wb, c.werr = nil, nil
	if err != nil {
		return n, err
	}
	if werr == syscall.EAGAIN {
		werr = nil
	}
	return n, werr
}

// write writes b, waiting at most eventWriteIdle (wmu held).
func (c *eventConn) write(b []byte) error {
	_ = c.conn.SetWriteDeadline(time.Now().Add(eventWriteIdle))
	_, err := c.conn.Write(b)
	_ = c.conn.SetWriteDeadline(time.Time{})
	if err == nil {
		c.last = time.Now()
	}
	return err
}

// end writes the stream's end once (wmu held).
func (c *eventConn) end(code uint16, reason string) error {
	if c.ended {
		return nil
	}
	c.ended = true
	return c.write(c.format.end(code, reason))
}

// eventPool writes the attached streams' live batches (init).
type eventPool struct {
	e       *eventService
	mu      sync.Mutex
	conns   map[*eventConn]struct{}
	running bool // run is going: it ends when no stream is attached
	kick    chan struct{}
	scratch []*passScratch // run's
}

func (p *eventPool) init(e *eventService) {
	p.e, p.conns, p.kick = e, make(map[*eventConn]struct{}), make(chan struct{}, 1)
}

// attach adds c to the pool's passes.
func (p *eventPool) attach(c *eventConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns[c] = struct{}{}
	if !p.running {
		p.running = true
		go p.run()
	}
}

func (p *eventPool) detach(c *eventConn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	p.wake()
}

// wake asks for a pass: a stream the last pass skipped is free again.
func (p *eventPool) wake() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// run makes a pass after each block, each wake and each half keepalive
// period (the streams idle that long get a keepalive).
func (p *eventPool) run() {
	keep := time.NewTicker(eventKeepalive / 2)
	defer keep.Stop()
	var list []*eventConn
	keepalive := false
	for {
		next := p.e.hub.Fanned()
		p.mu.Lock()
		if len(p.conns) == 0 {
			p.running = false
			p.mu.Unlock()
			return
		}
		list = list[:0]
		for c := range p.conns {
			list = append(list, c)
		}
		p.mu.Unlock()
		p.pass(list, keepalive)
		clear(list) // no stream kept alive by the list
		select {
		case <-next:
			keepalive = false
		case <-p.kick:
			keepalive = false
		case <-keep.C:
			keepalive = true
		}
	}
}

// poolChunk is how many streams a pool goroutine takes at a time.
const poolChunk = 64

// pass serves every stream of list once, on about one goroutine per CPU.
func (p *eventPool) pass(list []*eventConn, keepalive bool) {
	workers := min(runtime.GOMAXPROCS(0), (len(list)+poolChunk-1)/poolChunk)
	for len(p.scratch) < workers {
		p.scratch = append(p.scratch, new(passScratch))
	}
	var next atomic.Int64
	work := func(s *passScratch) {
		for {
			i := int(next.Add(poolChunk)) - poolChunk
			if i >= len(list) {
				break
			}
			for _, c := range list[i:min(i+poolChunk, len(list))] {
				p.serve(c, s, keepalive)
			}
		}
		if cap(s.out) > 1<<20 { // a rare big batch's buffer is not kept
			*s = passScratch{}
		}
	}
	var wg sync.WaitGroup
	for _, s := range p.scratch[1:workers] {
		wg.Go(func() { work(s) })
	}
	work(p.scratch[0])
	wg.Wait()
}

// passScratch is a pool goroutine's buffers, kept from pass to pass.
type passScratch struct {
	out, tmp []byte
	batches  []events.Batch
}

// serve writes c's queued batches (or a keepalive when it has been idle
// half the keepalive period) without waiting.
func (p *eventPool) serve(c *eventConn, s *passScratch, keepalive bool) {
	if !c.wmu.TryLock() {
		return // its writer wakes the pool when done
	}
	if c.ended {
		c.wmu.Unlock()
		return
	}
	s.out, s.batches = s.out[:0], s.batches[:0]
	for len(s.batches) < cap(c.st.Messages()) {
		select {
		case b := <-c.st.Messages():
			s.batches = append(s.batches, b)
			s.out = p.e.appendBatch(s.out, &s.tmp, c.format, b.Messages)
			continue
		default:
		}
		break
	}
	if len(s.batches) == 0 {
		if !keepalive || time.Since(c.last) < eventKeepalive/2 {
			c.wmu.Unlock()
			return
		}
		s.out, s.tmp = c.format.appendBatch(s.out, s.tmp, []events.Message{{}})
	}
	n, err := c.tryWrite(s.out)
	switch {
	case err != nil: // the client is gone: its reader ends the stream
		c.wmu.Unlock()
		c.conn.Close()
	case n == len(s.out):
		now := time.Now()
		c.last = now
		c.wmu.Unlock()
		p.e.delivered(c.st, s.batches, now)
	default:
		go p.finish(c, append([]byte(nil), s.out[n:]...), append([]events.Batch(nil), s.batches...))
	}
	clear(s.batches)
}

// finish writes what the socket did not take at once (wmu held, released
// here).
func (p *eventPool) finish(c *eventConn, rest []byte, batches []events.Batch) {
	err := c.write(rest)
	c.wmu.Unlock()
	if err != nil {
		c.conn.Close()
		return
	}
	p.e.delivered(c.st, batches, time.Now())
	p.wake() // batches may have queued meanwhile
}

// appendBatch appends a batch in format f, a shared one-message batch's
// bytes built once per block.
func (e *eventService) appendBatch(b []byte, tmp *[]byte, f eventFormat, batch []events.Message) []byte {
	if len(batch) != 1 || batch[0].Cursor == (events.Cursor{}) {
		b, *tmp = f.appendBatch(b, *tmp, batch)
		return b
	}
	key := &batch[0]
	if sf := e.shared[f].Load(); sf != nil && sf.key == key {
		return append(b, sf.frame...)
	}
	frame, _ := f.appendBatch(nil, nil, batch)
	e.shared[f].Store(&sharedFrame{key, frame})
	return append(b, frame...)
}

// delivered frees the batches' room in the stream's buffer and times
// them.
func (e *eventService) delivered(st *events.Stream, batches []events.Batch, now time.Time) {
	for _, b := range batches {
		st.Received(len(b.Messages))
		e.delivery.Observe(now.Sub(b.Announced).Seconds())
	}
}

// serveConn serves a stream on its connection, the response's head
// written: the replay (on this goroutine), then the pool's live writes,
// until the client leaves or the Hub ends the stream. in is the
// connection's buffered reader; read consumes what the client sends (it
// returns when the client is gone). ctx is the request's.
func (e *eventService) serveConn(ctx context.Context, c *eventConn, in *bufio.Reader, read func(*eventConn, *bufio.Reader, *eventPool)) {
	defer c.conn.Close()
	_ = c.conn.SetDeadline(time.Time{}) // the server's request timeouts
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		defer cancel() // a replay for nobody stops
		read(c, in, &e.pool)
	}()
	c.wmu.Lock()
	e.pool.attach(c)
	defer e.pool.detach(c)
	var tmp []byte
	err := c.st.Replay(ctx, func(batch []events.Message) error {
		var b []byte
		b, tmp = c.format.appendBatch(nil, tmp, batch)
		return c.write(b)
	})
	if err != nil {
		c.end(wsStatusInternalError, "replay failed")
		c.wmu.Unlock()
		return
	}
	c.wmu.Unlock()
	e.pool.wake() // the batches queued during the replay
	select {
	case <-gone:
	case <-c.st.Done(): // cut off, or the server is closing
		if !c.wmu.TryLock() {
			return // a write is stuck: the client is not reading
		}
		err := c.end(wsStatusTryAgainLater, "cut off: resume with the last id")
		c.wmu.Unlock()
		if err == nil && c.format == wsText { // the client's close
			select {
			case <-gone:
			case <-time.After(5 * time.Second):
			}
		}
	}
}

// readSSE discards what an SSE client sends until it leaves (through the
// reader's own buffer: io.Discard would hold one of 8 kB per stream).
func readSSE(_ *eventConn, in *bufio.Reader, _ *eventPool) {
	var b [64]byte
	for {
		if _, err := in.Read(b[:]); err != nil {
			return
		}
	}
}

// WebSocket (RFC 6455), the little a server that only sends needs.
const (
	wsOpText  = 0x1
	wsOpClose = 0x8
	wsOpPing  = 0x9
	wsOpPong  = 0xa

	wsStatusNormal          = 1000
	wsStatusProtocolError   = 1002
	wsStatusPolicyViolation = 1008
	wsStatusInternalError   = 1011
	wsStatusTryAgainLater   = 1013
)

// appendWSFrame appends an unmasked final frame (a server's).
func appendWSFrame(b []byte, op byte, payload []byte) []byte {
	b = append(b, 0x80|op)
	switch n := len(payload); {
	case n < 126:
		b = append(b, byte(n))
	case n <= 0xffff:
		b = append(b, 126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return append(b, payload...)
}

func appendWSClose(b []byte, code uint16, reason string) []byte {
	p := binary.BigEndian.AppendUint16(nil, code)
	return appendWSFrame(b, wsOpClose, append(p, reason...))
}

// errWSHandshake: the request is not a WebSocket opening handshake this
// server takes.
var errWSHandshake = errors.New("not a WebSocket version 13 handshake")

// acceptWS answers a WebSocket opening handshake and takes the connection.
func acceptWS(w http.ResponseWriter, r *http.Request) (net.Conn, *bufio.Reader, error) {
	key := r.Header.Get("Sec-WebSocket-Key")
	if !headerHasToken(r.Header, "Connection", "upgrade") || r.Header.Get("Sec-WebSocket-Version") != "13" || key == "" {
		w.Header().Set("Sec-WebSocket-Version", "13")
		writeProblem(w, http.StatusUpgradeRequired, "bad-websocket", errWSHandshake.Error())
		return nil, nil, errWSHandshake
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		writeProblem(w, http.StatusInternalServerError, "internal", err.Error())
		return nil, nil, err
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	head := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n"
	_ = conn.SetDeadline(time.Now().Add(eventWriteIdle))
	if _, err := conn.Write([]byte(head)); err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, brw.Reader, nil
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// readWS reads the client's frames until it leaves or closes: pings get
// their pong, a close its answer; a data message is not expected (policy
// violation).
func readWS(c *eventConn, in *bufio.Reader, p *eventPool) {
	reply := func(b []byte) error {
		c.wmu.Lock()
		err := error(nil)
		if !c.ended {
			err = c.write(b)
		}
		c.wmu.Unlock()
		p.wake()
		return err
	}
	closeWith := func(code uint16, reason string) {
		c.wmu.Lock()
		_ = c.end(code, reason)
		c.wmu.Unlock()
	}
	var hdr [14]byte
	for {
		if _, err := io.ReadFull(in, hdr[:2]); err != nil {
			return
		}
		op, n := hdr[0]&0x0f, uint64(hdr[1]&0x7f)
		if hdr[1]&0x80 == 0 { // a client's frames are masked
			closeWith(wsStatusProtocolError, "unmasked frame")
			return
		}
		switch n {
		case 126:
			if _, err := io.ReadFull(in, hdr[2:4]); err != nil {
				return
			}
			n = uint64(binary.BigEndian.Uint16(hdr[2:4]))
		case 127:
			if _, err := io.ReadFull(in, hdr[2:10]); err != nil {
				return
			}
			n = binary.BigEndian.Uint64(hdr[2:10])
		}
		if op < wsOpClose {
			closeWith(wsStatusPolicyViolation, "unexpected data message")
			return
		}
		if n > 125 {
			closeWith(wsStatusProtocolError, "control frame too long")
			return
		}
		var mask [4]byte
		payload := make([]byte, n)
		if _, err := io.ReadFull(in, mask[:]); err != nil {
			return
		}
		if _, err := io.ReadFull(in, payload); err != nil {
			return
		}
		for i := range payload {
			payload[i] ^= mask[i%4]
		}
		switch op {
		case wsOpPing:
			if reply(appendWSFrame(nil, wsOpPong, payload)) != nil {
				return
			}
		case wsOpClose: // answered (unless it answers ours)
			closeWith(wsStatusNormal, "")
			return
		}
	}
}
