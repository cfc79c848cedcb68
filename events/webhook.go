package events

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Webhooks deliver the events of subscriptions by HTTP POST, one request per
// block with events for the hook (docs/webhooks.md):
//
//   - the body is a WebhookBody: the hook, the cursor before and after the
//     block, and the block's events in the WebSocket stream's shape;
//   - X-Utxod-Signature is "sha256=" and the hex HMAC-SHA256, keyed with the
//     secret, of the X-Utxod-Timestamp header's value (Unix seconds), a dot
//     and the exact body bytes (Sign); X-Utxod-Cursor and X-Utxod-Previous
//     repeat the body's cursors, X-Utxod-Hook its hook;
//   - at least once and in order: a hook's next block is posted only once
//     the previous one got a 2xx; failures (errors, timeouts, non-2xx, a
//     redirect) are retried with exponential backoff and jitter (1 s to
//     5 min by default);
//   - each hook has its goroutine and a stream of the Hub like any client's:
//     a hook that is down is cut off, never slows the node or the other
//     hooks, and catches up by resuming from its cursor (Subscribe's replay
//     from the blocks and undo data the node keeps); past them it gets a
//     reset at the Hub's tip and continues from there;
//   - the cursor persists in Dir, one file per hook, written atomically
//     after each 2xx: a restart resumes after the last acknowledged block.

// The headers of a webhook request.
const (
	HeaderSignature = "X-Utxod-Signature"
	HeaderTimestamp = "X-Utxod-Timestamp"
	HeaderCursor    = "X-Utxod-Cursor"
	HeaderPrevious  = "X-Utxod-Previous"
	HeaderHook      = "X-Utxod-Hook"
)

// Webhook defaults.
const (
	DefaultWebhookTimeout = 30 * time.Second
	DefaultMinBackoff     = time.Second
	DefaultMaxBackoff     = 5 * time.Minute
	// advanceSave is how often a hook's cursor is saved while it moves over
	// blocks with nothing for the hook (nothing posted).
	advanceSave = 10 * time.Second
)

// WebhookBody is the JSON body of a webhook request: one block's events for
// the hook (or a reset). Cursor is where the hook stands once the request is
// acknowledged (the last event's id); Previous is the Cursor of the hook's
// previous acknowledged request (the hook's start for its first), so a
// receiver that keeps the last Cursor it processed processes a request
// whose Previous is that cursor and acknowledges without processing one
// whose Cursor is (a redelivery).
type WebhookBody struct {
	Hook     string         `json:"hook"`
	Previous string         `json:"previous"`
	Cursor   string         `json:"cursor"`
	Events   []WebhookEvent `json:"events"`
}

// WebhookEvent is one event, as the WebSocket stream's messages: the kind,
// its cursor and its data (one of the event types).
type WebhookEvent struct {
	Event string          `json:"event"`
	ID    string          `json:"id"`
	Data  json.RawMessage `json:"data"`
}

// Hook is one webhook: where its requests go and what it watches.
type Hook struct {
	URL string
	// Filter is what the hook watches; nil: every block's
	// block_connected and block_disconnected.
	Filter *Filter
}

// HookID names a hook: 16 hex digits of SHA-256 of its URL. Its cursor file
// is DIR/ID.json.
func HookID(rawURL string) string {
	h := sha256.Sum256([]byte(rawURL))
	return hex.EncodeToString(h[:8])
}

// WebhookConfig configures Webhooks.
type WebhookConfig struct {
	Hub *Hub
	// Dir holds the hooks' cursor files (created 0700 if missing).
	Dir string
	// Secret keys the requests' HMAC-SHA256 signature.
	Secret []byte
	Hooks  []Hook
	Log    *slog.Logger
	// Timeout bounds one request, the answer's body included (default
	// 30 s).
	Timeout time.Duration
	// MinBackoff and MaxBackoff bound the wait before a retry: MinBackoff
	// doubled at each failure, up to MaxBackoff, with jitter (the wait is
	// drawn between half of that and all of it).
	MinBackoff, MaxBackoff time.Duration
	// Transport sends the requests (default: a clone of
	// http.DefaultTransport).
	Transport http.RoundTripper
}

// Webhooks runs the hooks' deliveries. StartWebhooks creates it; Close
// stops it.
type Webhooks struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	hooks  []*hookRunner
}

// CheckWebhookURL accepts an absolute http or https URL with a host.
func CheckWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("webhook URL %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("webhook URL %q: want http://host/... or https://host/...", raw)
	}
	if u.User != nil {
		return fmt.Errorf("webhook URL %q: no credentials in the URL (requests are signed with the secret)", raw)
	}
	return nil
}

// StartWebhooks reads the hooks' cursors from cfg.Dir (a hook without one
// starts at the Hub's tip, saved at once) and starts their deliveries.
func StartWebhooks(cfg WebhookConfig) (*Webhooks, error) {
	if cfg.Hub == nil || cfg.Dir == "" {
		return nil, errors.New("events: webhooks need a hub and a directory for their cursors")
	}
	if len(cfg.Secret) == 0 {
		return nil, errors.New("events: webhooks need a secret")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultWebhookTimeout
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.MinBackoff)
	}
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	client := &http.Client{
		Transport: cfg.Transport,
		Timeout:   cfg.Timeout,
		// A redirect is a failure (retried): a POST is not replayed
		// elsewhere with the signature.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	seen := make(map[string]bool)
	w := &Webhooks{}
	for _, h := range cfg.Hooks {
		if err := CheckWebhookURL(h.URL); err != nil {
			return nil, err
		}
		if seen[h.URL] {
			return nil, fmt.Errorf("webhook URL %q given twice (a hook's cursor is kept by its URL)", h.URL)
		}
		seen[h.URL] = true
		f := h.Filter
		if f == nil {
			f = &Filter{Blocks: true}
			f.id = f.digest()
		}
		id := HookID(h.URL)
		k := &hookRunner{
			hub: cfg.Hub, id: id, url: h.URL, f: f, secret: cfg.Secret, client: client,
			minBackoff: cfg.MinBackoff, maxBackoff: cfg.MaxBackoff,
			file: cursorFile{dir: cfg.Dir, id: id, url: h.URL},
			log:  log.With("component", "webhook", "hook", id, "url", h.URL),
		}
		pos, ok, err := k.file.load()
		if err != nil {
			return nil, err
		}
		if !ok {
			tip := cfg.Hub.Tip()
			pos = hookPosition{Cursor: tip, Delivered: tip}
			if err := k.file.save(pos); err != nil {
				return nil, fmt.Errorf("webhook %s: saving its cursor: %w", h.URL, err)
			}
		}
		k.pos, k.saved = pos, time.Now()
		w.hooks = append(w.hooks, k)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	for _, k := range w.hooks {
		k.log.Info("webhook starts", "cursor", k.pos.Cursor)
		w.wg.Go(func() { k.run(ctx) })
	}
	return w, nil
}

// Close stops the deliveries (a request in flight is cancelled: it is sent
// again after a restart) and saves the cursors. A nil Webhooks is a no-op.
func (w *Webhooks) Close() {
	if w == nil {
		return
	}
	w.cancel()
	w.wg.Wait()
}

// HookStatus is one hook's state.
type HookStatus struct {
	ID, URL   string
	Cursor    Cursor
	Delivered int64 // requests acknowledged
	Failures  int64 // requests failed (each retry counts)
}

// Status lists the hooks' states.
func (w *Webhooks) Status() []HookStatus {
	if w == nil {
		return nil
	}
	out := make([]HookStatus, len(w.hooks))
	for i, k := range w.hooks {
		k.mu.Lock()
		c := k.pos.Cursor
		k.mu.Unlock()
		out[i] = HookStatus{ID: k.id, URL: k.url, Cursor: c, Delivered: k.delivered.Load(), Failures: k.failures.Load()}
	}
	return out
}

// hookRunner delivers one hook's blocks.
type hookRunner struct {
	hub        *Hub
	id, url    string
	f          *Filter
	secret     []byte
	client     *http.Client
	minBackoff time.Duration
	maxBackoff time.Duration
	file       cursorFile
	log        *slog.Logger

	mu    sync.Mutex   // guards pos for Status (the run goroutine writes it)
	pos   hookPosition // the last block acknowledged or passed over, the last request acknowledged
	saved time.Time
	dirty bool // pos moved past blocks with nothing posted, not saved

	delivered, failures atomic.Int64
}

func (k *hookRunner) setPosition(p hookPosition) {
	k.mu.Lock()
	k.pos = p
	k.mu.Unlock()
}

// run subscribes from the cursor and delivers until ctx ends; a stream cut
// off (the hook fell behind) or ended is opened again from the cursor.
func (k *hookRunner) run(ctx context.Context) {
	defer func() {
		if k.dirty {
			if err := k.file.save(k.pos); err != nil {
				k.log.Error("webhook: saving the cursor", "err", err)
			}
		}
	}()
	fails := 0
	for ctx.Err() == nil {
		from := k.pos.Cursor
		st, err := k.hub.Subscribe(k.f, &from)
		switch {
		case errors.Is(err, ErrClosed):
			return
		case errors.Is(err, ErrCursorTooOld), errors.Is(err, ErrUnknownCursor), errors.Is(err, ErrBadCursor):
			tip := k.hub.Tip()
			k.log.Warn("webhook: the cursor cannot be resumed; a reset at the tip follows", "cursor", from, "tip", tip, "err", err)
			reason := "the hook's cursor " + from.String() + " cannot be resumed (" + err.Error() + "): the events up to this block were not delivered"
			m := Message{KindReset, tip, mustJSON(Reset{tip.Height, tip.Hash.String(), reason})}
			if k.deliver(ctx, []Message{m}) != nil {
				return
			}
			continue
		case err == nil:
			err = st.Replay(ctx, func(b []Message) error { return k.deliver(ctx, b) })
			if err == nil {
				err = k.live(ctx, st)
			}
			st.Close()
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil { // cut off, or the Hub closed: resume at once
			fails = 0
			continue
		}
		// ErrFull, a block pruned while replaying, ...: wait, then resume.
		fails++
		d := k.backoff(fails-1, 0)
		k.log.Warn("webhook: the stream failed; resuming from the cursor", "cursor", k.pos.Cursor, "in", d.Round(time.Millisecond), "err", err)
		if !sleep(ctx, d) {
			return
		}
	}
}

// live delivers the stream's blocks until it ends (nil: cut off or the Hub
// closed; the caller resumes from the cursor) or ctx does.
func (k *hookRunner) live(ctx context.Context, st *Stream) error {
	for {
		select {
		case b := <-st.Messages():
			err := k.deliver(ctx, b.Messages)
			st.Received(len(b.Messages))
			if err != nil {
				return err
			}
		case <-st.Done():
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// deliver posts one block's batch until it is acknowledged (nil) or ctx
// ends, and moves the cursor. A block with nothing for the hook (only the
// cursor's move) posts nothing.
func (k *hookRunner) deliver(ctx context.Context, batch []Message) error {
	if len(batch) == 0 {
		return nil
	}
	to := batch[len(batch)-1].Cursor
	if batch[0].Kind == "" { // an advance alone
		k.setPosition(hookPosition{Cursor: to, Delivered: k.pos.Delivered})
		k.dirty = true
		if time.Since(k.saved) >= advanceSave {
			k.save()
		}
		return nil
	}
	body := WebhookBody{Hook: k.id, Previous: k.pos.Delivered.String(), Cursor: to.String(), Events: make([]WebhookEvent, 0, len(batch))}
	for _, m := range batch {
		if m.Kind != "" {
			body.Events = append(body.Events, WebhookEvent{Event: m.Kind, ID: m.Cursor.String(), Data: m.Data})
		}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err := k.post(ctx, raw, body.Previous, body.Cursor)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		k.failures.Add(1)
		var after time.Duration
		var se *statusError
		if errors.As(err, &se) {
			after = se.retryAfter
		}
		d := k.backoff(attempt, after)
		k.log.Warn("webhook: delivery failed; retrying", "cursor", body.Cursor, "attempt", attempt+1, "in", d.Round(time.Millisecond), "err", err)
		if !sleep(ctx, d) {
			return ctx.Err()
		}
	}
	k.delivered.Add(1)
	k.setPosition(hookPosition{Cursor: to, Delivered: to})
	k.save()
	return nil
}

func (k *hookRunner) save() {
	if err := k.file.save(k.pos); err != nil {
		// The cursor stays in memory; a restart before the next save
		// delivers these blocks again (at least once).
		k.log.Error("webhook: saving the cursor", "err", err)
		return
	}
	k.saved, k.dirty = time.Now(), false
}

// statusError is a non-2xx answer.
type statusError struct {
	code       int
	retryAfter time.Duration
}

func (e *statusError) Error() string {
	return "answered " + strconv.Itoa(e.code) + " " + http.StatusText(e.code)
}

// post sends body once, signed now.
func (k *hookRunner) post(ctx context.Context, body []byte, previous, cursor string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, k.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "utxod-webhook")
	h.Set(HeaderHook, k.id)
	h.Set(HeaderCursor, cursor)
	h.Set(HeaderPrevious, previous)
	h.Set(HeaderTimestamp, ts)
	h.Set(HeaderSignature, Sign(k.secret, ts, body))
	resp, err := k.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &statusError{code: resp.StatusCode}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			e.retryAfter = time.Duration(s) * time.Second
		}
		return e
	}
	return nil
}

// backoff is the wait before retry attempt+1: MinBackoff·2^attempt capped
// at MaxBackoff (or the answer's Retry-After, up to MaxBackoff, when
// longer), drawn in [d/2, d].
func (k *hookRunner) backoff(attempt int, retryAfter time.Duration) time.Duration {
	d := k.maxBackoff
	if attempt < 32 {
		if x := k.minBackoff << attempt; x > 0 && x < d {
			d = x
		}
	}
	d = d/2 + rand.N(d/2+1)
	if retryAfter > d {
		d = min(retryAfter, k.maxBackoff)
	}
	return d
}

// sleep waits d or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Sign is a webhook request's X-Utxod-Signature: "sha256=" and the hex
// HMAC-SHA256 keyed with secret of timestamp (the X-Utxod-Timestamp value),
// "." and body.
func Sign(secret []byte, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// VerifySignature checks a webhook request's signature (in constant time)
// and that its timestamp is within tolerance of now: what a receiver in Go
// does before it reads the body's events.
func VerifySignature(secret []byte, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return errors.New("webhook: bad timestamp")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("webhook: timestamp %s is %v away from now", timestamp, d.Round(time.Second))
	}
	if !hmac.Equal([]byte(signature), []byte(Sign(secret, timestamp, body))) {
		return errors.New("webhook: bad signature")
	}
	return nil
}
