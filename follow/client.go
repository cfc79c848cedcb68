package follow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"utxod/params"
	"utxod/validate"
	"utxod/wire"
)

// Error classes of a failed request; every *SourceError wraps one of them.
var (
	// ErrUnavailable: the source could not answer now — connection refused
	// or reset, a timeout, 503 (Core's warm-up) or another 5xx, 429. Retried.
	ErrUnavailable = errors.New("follow: source unavailable")
	// ErrNotFound: 404, the source does not have what was asked (an unknown
	// or pruned block: its chain may have moved on).
	ErrNotFound = errors.New("follow: not found at the source")
	// ErrBadReply: the source answered with something that is not what was
	// asked — a block whose hash differs, a truncated or unparseable body,
	// headers that do not chain or lack proof of work, malformed JSON, a
	// wrong content type. Nothing of it is used. Retried.
	ErrBadReply = errors.New("follow: bad reply from the source")
	// ErrBadRequest: the source refused the request (400 or another 4xx):
	// it does not speak this REST interface.
	ErrBadRequest = errors.New("follow: request refused by the source")
	// ErrWrongChain: the source follows another network, or does not share
	// our genesis block. Fatal.
	ErrWrongChain = errors.New("follow: source is on another chain")
)

// SourceError describes one failed request.
type SourceError struct {
	Op     string // chaininfo, headers, blockhashbyheight, block
	URL    string
	Status int    // HTTP status; 0 when no answer came
	Reason string // short stable cause (metrics label): unreachable, timeout, unavailable, not-found, bad-request, wrong-hash, truncated, bad-block, bad-headers, bad-reply, too-large, wrong-chain
	Detail string // what the source said or what was wrong
	class  error
	err    error
}

func (e *SourceError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "follow: %s %s: %s", e.Op, e.URL, e.Reason)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if e.err != nil {
		b.WriteString(": " + e.err.Error())
	}
	return b.String()
}

// Unwrap returns the error's class (ErrUnavailable, ErrNotFound, ...) and
// the underlying error, if any.
func (e *SourceError) Unwrap() []error {
	if e.err != nil {
		return []error{e.class, e.err}
	}
	return []error{e.class}
}

// retryable reports whether err is worth retrying: the source was
// unavailable or sent something broken.
func retryable(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, ErrBadReply)
}

// reasonOf is the SourceError reason of err ("error" for others).
func reasonOf(err error) string {
	var se *SourceError
	if errors.As(err, &se) {
		return se.Reason
	}
	return "error"
}

// Client is a strict client of Bitcoin Core's REST interface
// (doc/REST-interface.md, src/rest.cpp), or of utxod's copy of it. It uses
// the binary formats only and checks every answer against what was asked:
// a block must hash to the requested hash and parse as exactly one block,
// headers must start at the requested block, chain and carry their proof
// of work. It is safe for concurrent use.
type Client struct {
	base    string // scheme://host[/prefix], no trailing slash
	http    *http.Client
	params  *params.Params
	timeout time.Duration
	// legacy: the source answered the ?count= form with 400 (Core before
	// 24.0): use /rest/headers/<count>/<hash>.bin from then on.
	legacy atomic.Bool
}

// Maximum reply sizes. A block is at most MAX_BLOCK_SERIALIZED_SIZE.
const (
	maxChainInfoBytes = 1 << 20
	// MaxHeaders is Core's MAX_REST_HEADERS_RESULTS, the most headers one
	// request returns.
	MaxHeaders = 2000
)

// DefaultRequestTimeout bounds one request unless ClientConfig says
// otherwise.
const DefaultRequestTimeout = 60 * time.Second

// ClientConfig configures a Client.
type ClientConfig struct {
	// URL is the source's base URL (http://host:port, optionally with a
	// path prefix); /rest/... is appended. Required.
	URL string
	// Params is the network the source must be on. Required.
	Params *params.Params
	// HTTP is the client to use (default: a dedicated transport).
	HTTP *http.Client
	// Timeout bounds each request, body included (default 60 s).
	Timeout time.Duration
}

// NewClient returns a client for the source at cfg.URL.
func NewClient(cfg ClientConfig) (*Client, error) {
	if cfg.Params == nil {
		return nil, errors.New("follow: ClientConfig.Params is required")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("follow: source URL %q: %w", cfg.URL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("follow: source URL %q: want http://host:port or https://host:port", cfg.URL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("follow: source URL %q: no query or fragment expected", cfg.URL)
	}
	hc := cfg.HTTP
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 32
		hc = &http.Client{Transport: tr}
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	return &Client{base: strings.TrimRight(u.String(), "/"), http: hc, params: cfg.Params, timeout: timeout}, nil
}

// URL is the source's base URL.
func (c *Client) URL() string { return c.base }

// ChainInfo is the part of Core's getblockchaininfo (/rest/chaininfo.json)
// the follower uses.
type ChainInfo struct {
	Chain         string    // Core's chain name: main, test, testnet4, signet, regtest
	Blocks        int32     // height of the active tip
	Headers       int32     // best header height (may exceed Blocks while the source syncs)
	BestBlockHash wire.Hash // the active tip
	IBD           bool      // the source says it is in initial block download
}

// coreChainName is Core's GetChainTypeString for a params.Params name.
func coreChainName(network string) string {
	switch network {
	case "main", "mainnet":
		return "main"
	case "testnet3", "testnet", "test":
		return "test"
	}
	return network
}

// ChainInfo fetches /rest/chaininfo.json and checks that the source is on
// the client's network (ErrWrongChain otherwise).
func (c *Client) ChainInfo(ctx context.Context) (ChainInfo, error) {
	const op = "chaininfo"
	u := c.base + "/rest/chaininfo.json"
	body, err := c.get(ctx, op, u, "application/json", maxChainInfoBytes)
	if err != nil {
		return ChainInfo{}, err
	}
	var raw struct {
		Chain                *string `json:"chain"`
		Blocks               *int32  `json:"blocks"`
		Headers              *int32  `json:"headers"`
		BestBlockHash        *string `json:"bestblockhash"`
		InitialBlockDownload bool    `json:"initialblockdownload"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return ChainInfo{}, c.bad(op, u, "bad-reply", "chaininfo is not JSON: "+err.Error())
	}
	if raw.Chain == nil || raw.Blocks == nil || raw.BestBlockHash == nil || *raw.Blocks < 0 {
		return ChainInfo{}, c.bad(op, u, "bad-reply", "chaininfo lacks chain, blocks or bestblockhash")
	}
	tip, err := wire.ParseHash(*raw.BestBlockHash)
	if err != nil {
		return ChainInfo{}, c.bad(op, u, "bad-reply", "bestblockhash "+strconv.Quote(*raw.BestBlockHash)+" is not a block hash")
	}
	info := ChainInfo{Chain: *raw.Chain, Blocks: *raw.Blocks, Headers: *raw.Blocks, BestBlockHash: tip, IBD: raw.InitialBlockDownload}
	if raw.Headers != nil {
		info.Headers = *raw.Headers
	}
	if want := coreChainName(c.params.Name); info.Chain != want {
		return info, &SourceError{Op: op, URL: u, Reason: "wrong-chain", class: ErrWrongChain,
			Detail: fmt.Sprintf("the source is on %q, this node on %q", info.Chain, want)}
	}
	return info, nil
}

// Header is a block header with its hash.
type Header struct {
	Hash wire.Hash
	wire.Header
}

// Headers fetches up to count (1..MaxHeaders) headers of the source's
// active chain starting at block from (inclusive), in the binary format.
// It returns no headers when from is not on the source's active chain (as
// Core does). Otherwise the first header is from's, each next one builds on
// the one before and satisfies its own proof-of-work target within the
// network's limit; anything else is ErrBadReply.
func (c *Client) Headers(ctx context.Context, from wire.Hash, count int) ([]Header, error) {
	const op = "headers"
	if count < 1 || count > MaxHeaders {
		return nil, fmt.Errorf("follow: header count %d outside 1..%d", count, MaxHeaders)
	}
	limit := int64(count)*wire.HeaderSize + 1
	var body []byte
	var u string
	var err error
	if !c.legacy.Load() {
		u = fmt.Sprintf("%s/rest/headers/%s.bin?count=%d", c.base, from, count)
		body, err = c.get(ctx, op, u, "application/octet-stream", limit)
		if errors.Is(err, ErrBadRequest) {
			// Core before 24.0 knows only /rest/headers/<count>/<hash>.
			c.legacy.Store(true)
		}
	}
	if c.legacy.Load() {
		u = fmt.Sprintf("%s/rest/headers/%d/%s.bin", c.base, count, from)
		body, err = c.get(ctx, op, u, "application/octet-stream", limit)
	}
	if err != nil {
		return nil, err
	}
	return c.parseHeaders(op, u, body, from, count)
}

// ParseHeaders checks a /rest/headers binary answer to a request for
// count headers from block from (see Client.Headers) and decodes it.
func ParseHeaders(body []byte, from wire.Hash, count int, p *params.Params) ([]Header, error) {
	if len(body)%wire.HeaderSize != 0 {
		return nil, fmt.Errorf("%d bytes are not a whole number of %d-byte headers", len(body), wire.HeaderSize)
	}
	n := len(body) / wire.HeaderSize
	if n > count {
		return nil, fmt.Errorf("%d headers, asked for %d", n, count)
	}
	out := make([]Header, n)
	for i := range out {
		raw := body[i*wire.HeaderSize : (i+1)*wire.HeaderSize]
		h, _ := wire.ParseHeader(raw)
		out[i] = Header{Hash: wire.DoubleSHA256(raw), Header: h}
		switch {
		case i == 0 && out[i].Hash != from:
			return nil, fmt.Errorf("first header is %s, asked for headers from %s", out[i].Hash, from)
		case i > 0 && h.PrevBlock != out[i-1].Hash:
			return nil, fmt.Errorf("header %d (%s) builds on %s, not on the header before it (%s)", i, out[i].Hash, h.PrevBlock, out[i-1].Hash)
		}
		if err := validate.CheckProofOfWork(out[i].Hash, h.Bits, p); err != nil {
			return nil, fmt.Errorf("header %d (%s): %w", i, out[i].Hash, err)
		}
	}
	return out, nil
}

func (c *Client) parseHeaders(op, u string, body []byte, from wire.Hash, count int) ([]Header, error) {
	hs, err := ParseHeaders(body, from, count, c.params)
	if err != nil {
		return nil, c.bad(op, u, "bad-headers", err.Error())
	}
	return hs, nil
}

// BlockHashByHeight fetches the hash of the source's active-chain block at
// height (/rest/blockhashbyheight/<height>.bin, 32 bytes in internal byte
// order). Above the source's tip it is ErrNotFound.
func (c *Client) BlockHashByHeight(ctx context.Context, height int32) (wire.Hash, error) {
	const op = "blockhashbyheight"
	u := fmt.Sprintf("%s/rest/blockhashbyheight/%d.bin", c.base, height)
	body, err := c.get(ctx, op, u, "application/octet-stream", 33)
	if err != nil {
		return wire.Hash{}, err
	}
	if len(body) != 32 {
		return wire.Hash{}, c.bad(op, u, "bad-reply", fmt.Sprintf("%d bytes, a block hash is 32", len(body)))
	}
	return wire.Hash(body), nil
}

// Block fetches the raw block hash (/rest/block/<hash>.bin). The answer is
// checked: its header must hash to hash ("wrong-hash") and it must parse
// as exactly one block of at most 4,000,000 bytes ("truncated",
// "bad-block", "too-large"). The caller owns the returned bytes.
func (c *Client) Block(ctx context.Context, hash wire.Hash) ([]byte, error) {
	const op = "block"
	u := fmt.Sprintf("%s/rest/block/%s.bin", c.base, hash)
	body, err := c.get(ctx, op, u, "application/octet-stream", wire.MaxBlockSerializedSize+1)
	if err != nil {
		return nil, err
	}
	if err := CheckBlock(body, hash); err != nil {
		var be *BlockError
		errors.As(err, &be)
		return nil, c.bad(op, u, be.Reason, be.Detail)
	}
	return body, nil
}

// BlockError is why a block body is not the block asked for.
type BlockError struct {
	Reason string // wrong-hash, truncated, bad-block
	Detail string
}

func (e *BlockError) Error() string { return e.Reason + ": " + e.Detail }

// CheckBlock checks that raw is exactly one serialized block whose header
// hashes to want. It says nothing about the block's validity.
func CheckBlock(raw []byte, want wire.Hash) error {
	if len(raw) < wire.HeaderSize {
		return &BlockError{"truncated", fmt.Sprintf("%d bytes, shorter than a block header", len(raw))}
	}
	if got := wire.DoubleSHA256(raw[:wire.HeaderSize]); got != want {
		return &BlockError{"wrong-hash", fmt.Sprintf("the source sent block %s for %s", got, want)}
	}
	if _, err := wire.ParseBlock(raw); err != nil {
		// A count claiming more than the bytes left (ErrOversize) is how a
		// cut body usually shows.
		if errors.Is(err, wire.ErrTruncated) || errors.Is(err, wire.ErrOversize) {
			return &BlockError{"truncated", fmt.Sprintf("the body (%d bytes) ends inside the block: %v", len(raw), err)}
		}
		return &BlockError{"bad-block", fmt.Sprintf("the body does not parse as one block: %v", err)}
	}
	return nil
}

func (c *Client) bad(op, u, reason, detail string) *SourceError {
	return &SourceError{Op: op, URL: u, Reason: reason, Detail: detail, class: ErrBadReply}
}

// get performs one GET and returns the body of a 200 answer of content
// type ctype holding fewer than limit bytes.
func (c *Client) get(ctx context.Context, op, u, ctype string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &SourceError{Op: op, URL: u, Reason: "bad-request", class: ErrBadRequest, err: err}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, op, u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// Core's errors are text/plain "message\r\n"; utxod's are
		// problem+json with the message in "detail".
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, statusError(op, u, resp.StatusCode, errorMessage(resp.Header.Get("Content-Type"), msg))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != ctype {
		return nil, c.bad(op, u, "bad-reply", fmt.Sprintf("content type %q, want %s", resp.Header.Get("Content-Type"), ctype))
	}
	if resp.ContentLength >= limit {
		return nil, c.bad(op, u, "too-large", fmt.Sprintf("Content-Length %d, at most %d expected", resp.ContentLength, limit-1))
	}
	var buf bytes.Buffer
	if resp.ContentLength > 0 {
		buf.Grow(int(resp.ContentLength))
	}
	n, err := buf.ReadFrom(io.LimitReader(resp.Body, limit))
	if err != nil {
		if ctx.Err() != nil {
			return nil, c.transportError(ctx, op, u, err)
		}
		return nil, c.bad(op, u, "truncated", fmt.Sprintf("the body broke off after %d bytes: %v", n, err))
	}
	if n >= limit {
		return nil, c.bad(op, u, "too-large", fmt.Sprintf("more than %d bytes", limit-1))
	}
	return buf.Bytes(), nil
}

func (c *Client) transportError(ctx context.Context, op, u string, err error) error {
	reason := "unreachable"
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		reason = "timeout"
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		reason = "cancelled"
	}
	return &SourceError{Op: op, URL: u, Reason: reason, class: ErrUnavailable, err: err}
}

func statusError(op, u string, status int, msg string) *SourceError {
	e := &SourceError{Op: op, URL: u, Status: status, Detail: msg}
	switch {
	case status == http.StatusNotFound:
		e.Reason, e.class = "not-found", ErrNotFound
	case status == http.StatusTooManyRequests || status >= 500:
		e.Reason, e.class = "unavailable", ErrUnavailable
	case status >= 400:
		e.Reason, e.class = "bad-request", ErrBadRequest
	default:
		e.Reason, e.class = "bad-reply", ErrBadReply
	}
	return e
}

// errorMessage extracts the source's error text.
func errorMessage(ctype string, body []byte) string {
	if mt, _, _ := mime.ParseMediaType(ctype); mt == "application/problem+json" {
		var p struct {
			Detail string `json:"detail"`
		}
		if json.Unmarshal(body, &p) == nil && p.Detail != "" {
			return p.Detail
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
