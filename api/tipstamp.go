package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"utxod/chainstate"
	"utxod/wire"
)

// Tip-stamped answers. Every answer names the active tip it was computed
// at in two headers; a GET answer carries a strong ETag and honours
// If-None-Match; a GET with ?at=<blockhash> is answered only while that
// block is the tip. Handlers report the tip of the read their answer comes
// from (answeredAt, answeredAtTip: chainstate.Coins, Lookup, AtHeight and
// the scripthash index each give it with their data), never a later read;
// an answer whose handler reports none (errors, /metrics, the docs) is
// stamped with the published tip when it is written. Answers are buffered
// until the handler returns, so the stamp, a 409 for ?at= or a 304 can
// still replace them; the snapshot stream settles them before its first
// byte (beginStream).

// The headers every answer carries.
const (
	HeaderTipHash   = "X-Utxod-Tip-Hash"
	HeaderTipHeight = "X-Utxod-Tip-Height"
)

// Caching of per-block answers: a block with BuriedConfirmations or more
// on the active chain is taken as final (a reorganisation that deep is not
// expected), its answers immutable for maxAgeBuried seconds (electrs'
// TTL_LONG, 5 years); other blocks' answers for maxAgeShort seconds
// (electrs' TTL_SHORT).
const (
	BuriedConfirmations = 6
	maxAgeBuried        = ttlLong
	maxAgeShort         = ttlShort
)

// blockCacheControl is the Cache-Control of an answer about block n.
func blockCacheControl(n chainstate.BlockInfo) string {
	if !n.Orphan && n.InActiveChain && n.TipHeight-n.Height+1 >= BuriedConfirmations {
		return "public, max-age=" + strconv.Itoa(maxAgeBuried) + ", immutable"
	}
	return "public, max-age=" + strconv.Itoa(maxAgeShort)
}

// answer is what a handler reports about its answer.
type answer struct {
	tip       wire.Hash
	height    int32
	tipSet    bool
	byTip     bool // the body is a function of tip, route and query
	streaming bool // written through (beginStream settled the rest)
	noETag    bool // an open-ended stream (beginEventStream)
}

type answerKey struct{}

func answerOf(r *http.Request) *answer {
	a, _ := r.Context().Value(answerKey{}).(*answer)
	return a
}

// answeredAt records the tip the answer was computed at; its ETag is a
// hash of the body. A zero hash (an orphan's entry) records nothing.
func answeredAt(r *http.Request, hash wire.Hash, height int32) {
	if a := answerOf(r); a != nil && hash != (wire.Hash{}) {
		a.tip, a.height, a.tipSet = hash, height, true
	}
}

// answeredAtTip is answeredAt for an answer determined by the tip, the
// route and the query: its ETag is derived from those, not the body.
func answeredAtTip(r *http.Request, hash wire.Hash, height int32) {
	answeredAt(r, hash, height)
	if a := answerOf(r); a != nil && a.tipSet {
		a.byTip = true
	}
}

// answeredAtBlock records the tip of a block-index copy.
func answeredAtBlock(r *http.Request, n chainstate.BlockInfo) {
	answeredAt(r, n.TipHash, n.TipHeight)
}

// stamp is the middleware of tip-stamped answers.
func (s *Server) stamp(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &stampWriter{w: w, r: r, s: s, a: &answer{}}
		if r.Method == http.MethodGet && r.URL.Query().Has("at") {
			at, err := wire.ParseHash(r.URL.Query().Get("at"))
			if err != nil {
				sw.setTip()
				writeProblem(w, http.StatusBadRequest, "bad-at", "at must be a block hash (64 hex digits, display order)")
				return
			}
			sw.at = &at
		}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), answerKey{}, sw.a)))
		sw.finish()
	})
}

// stampWriter buffers an answer until the handler returns.
type stampWriter struct {
	w    http.ResponseWriter
	r    *http.Request
	s    *Server
	a    *answer
	at   *wire.Hash
	code int
	buf  bytes.Buffer
	done bool // the answer was written to w
}

func (sw *stampWriter) Header() http.Header { return sw.w.Header() }

func (sw *stampWriter) WriteHeader(code int) {
	if sw.a.streaming {
		sw.done = true
		sw.w.WriteHeader(code)
		return
	}
	if sw.code == 0 {
		sw.code = code
	}
}

func (sw *stampWriter) Write(b []byte) (int, error) {
	if sw.a.streaming {
		sw.done = true
		return sw.w.Write(b)
	}
	if sw.code == 0 {
		sw.code = http.StatusOK
	}
	return sw.buf.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (the snapshot
// stream's write deadlines).
func (sw *stampWriter) Unwrap() http.ResponseWriter { return sw.w }

// setTip writes the tip headers (the published tip if the handler
// reported none).
func (sw *stampWriter) setTip() {
	if !sw.a.tipSet {
		t := sw.s.chain.Tip()
		sw.a.tip, sw.a.height, sw.a.tipSet = t.Hash, t.Height, true
	}
	h := sw.w.Header()
	h.Set(HeaderTipHash, sw.a.tip.String())
	h.Set(HeaderTipHeight, strconv.FormatInt(int64(sw.a.height), 10))
}

// settle decides the answer's fate once its tip is known: a 409 when ?at=
// names another block, a 304 when If-None-Match matches the ETag of a 200.
// It reports whether the handler's answer is still to be written.
func (sw *stampWriter) settle(code int, body []byte) bool {
	sw.setTip()
	h := sw.w.Header()
	if sw.at != nil && *sw.at != sw.a.tip {
		for _, k := range []string{"Cache-Control", "Content-Disposition", "Content-Type", "Content-Length", "ETag"} {
			h.Del(k)
		}
		for k := range h {
			if strings.HasPrefix(k, "X-Utxod-Snapshot-") {
				h.Del(k)
			}
		}
		writeProblem(sw.w, http.StatusConflict, "tip-moved", fmt.Sprintf(
			"at=%s is not the tip: the answer is at %s (height %d); ask again without at= or at the new tip", *sw.at, sw.a.tip, sw.a.height))
		return false
	}
	if code != http.StatusOK || sw.r.Method != http.MethodGet || sw.a.noETag {
		return true
	}
	etag := sw.etag(body)
	h.Set("ETag", etag)
	if inm := sw.r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, etag) {
		h.Del("Content-Type")
		h.Del("Content-Length")
		sw.w.WriteHeader(http.StatusNotModified)
		return false
	}
	return true
}

// etag is the answer's strong ETag: from the tip, the path and the query
// (at= left out) when the handler said the tip determines the body,
// otherwise from the body.
func (sw *stampWriter) etag(body []byte) string {
	d := sha256.New()
	if sw.a.byTip {
		q := sw.r.URL.Query()
		q.Del("at")
		fmt.Fprintf(d, "tip\x00%s\x00%s\x00%s", sw.a.tip, sw.r.URL.Path, url.Values(q).Encode())
	} else {
		d.Write([]byte("body\x00"))
		d.Write(body)
	}
	return `"` + hex.EncodeToString(d.Sum(nil)[:16]) + `"`
}

// etagMatches is If-None-Match's weak comparison (RFC 9110 §13.1.2).
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

// finish writes a buffered answer.
func (sw *stampWriter) finish() {
	if sw.done || sw.a.streaming {
		return
	}
	sw.done = true
	code := sw.code
	if code == 0 {
		code = http.StatusOK
	}
	if !sw.settle(code, sw.buf.Bytes()) {
		return
	}
	sw.w.WriteHeader(code)
	_, _ = sw.w.Write(sw.buf.Bytes())
}

// beginStream settles a streamed answer (after answeredAtTip) before its
// first byte; false means the stamp answered (409 or 304) instead.
func beginStream(w http.ResponseWriter, r *http.Request) bool {
	sw, ok := w.(*stampWriter)
	if !ok {
		return true
	}
	if !sw.settle(http.StatusOK, nil) {
		sw.done = true
		return false
	}
	sw.a.streaming = true
	return true
}

// beginEventStream settles an open-ended stream (the event stream) before
// its first byte: the tip headers of the tip it starts at and ?at=, but no
// ETag, since its body is not a function of anything a client holds. It
// returns the writer to stream to (the connection's own, which a WebSocket
// upgrade hijacks); false means the stamp answered instead (409).
func beginEventStream(w http.ResponseWriter) (http.ResponseWriter, bool) {
	sw, ok := w.(*stampWriter)
	if !ok {
		return w, true
	}
	sw.a.streaming, sw.a.noETag = true, true // settle writes no ETag for a stream
	if !sw.settle(http.StatusOK, nil) {
		sw.done = true
		return nil, false
	}
	sw.done = true
	return sw.w, true
}

// TipRef names the active tip an answer was computed at.
type TipRef struct {
	Hash   string `json:"hash" example:"00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c"`
	Height int32  `json:"height" example:"14131"`
}

func tipRef(hash wire.Hash, height int32) TipRef {
	return TipRef{Hash: hash.String(), Height: height}
}
