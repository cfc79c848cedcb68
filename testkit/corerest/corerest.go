// Package corerest is a stand-in for a Bitcoin Core node's REST interface
// (bitcoind -rest): it serves /rest/chaininfo.json, /rest/headers/... (both
// forms), /rest/blockhashbyheight/... and /rest/block/... with the byte
// shapes of Core's src/rest.cpp, from raw blocks loaded from block files.
// There is no Core binary on the machines the tests run on; this is what
// utxod follows in tests, benchmarks and the replica demo.
//
// The source keeps Core's chain selection (most work, first seen on ties)
// over the blocks it has been shown: Reveal makes more of the loaded blocks
// visible, so a chain generated with reorg branches (testkit/chaingen)
// grows and reorganises as a live node's would. Faults can be injected per
// block (a corrupted body, another block than the one asked for, a
// truncated body, 404) or for the next requests of any route (503, 404),
// and every request can be delayed.
//
// It validates nothing: it serves whatever it was loaded with, which is
// the point — the follower must not trust it.
package corerest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"utxod/params"
	"utxod/wire"
)

// maxHeaders is Core's MAX_REST_HEADERS_RESULTS.
const maxHeaders = 2000

// Fault is a misbehaviour the source can be told to show.
type Fault int

const (
	// Corrupt flips one byte in the last transaction of the block: the
	// header, and so the hash, are unchanged; the merkle root no longer
	// matches (bad-txnmrklroot).
	Corrupt Fault = iota + 1
	// WrongBlock answers with another block (the block's parent, or the
	// block after it for genesis) than the one asked for.
	WrongBlock
	// Truncate answers with the first half of the block as a complete
	// HTTP body (chunked, no Content-Length): only parsing the block shows
	// it is cut.
	Truncate
	// CutConnection declares the whole block in Content-Length, sends half
	// of it and drops the connection.
	CutConnection
	// NotFound answers 404 with Core's "<hash> not found".
	NotFound
	// Unavailable answers 503 with Core's warm-up message.
	Unavailable
	// BreakHeaders drops the second header of every /rest/headers reply, so
	// the headers no longer chain.
	BreakHeaders
)

func (f Fault) String() string {
	switch f {
	case Corrupt:
		return "corrupt"
	case WrongBlock:
		return "wrong-block"
	case Truncate:
		return "truncate"
	case CutConnection:
		return "cut-connection"
	case NotFound:
		return "not-found"
	case Unavailable:
		return "unavailable"
	case BreakHeaders:
		return "break-headers"
	}
	return "fault(" + strconv.Itoa(int(f)) + ")"
}

type node struct {
	hash   wire.Hash
	header wire.Header
	raw    []byte
	height int32
	work   *big.Int // chain work up to and including this block
	parent *node
	seq    int // load order; genesis is 0
}

type blockFault struct {
	f     Fault
	times int // remaining; <0: forever
}

// Server is a fake Core REST source. Its methods are safe for concurrent
// use; it implements http.Handler.
type Server struct {
	chain string

	mu        sync.Mutex
	nodes     map[wire.Hash]*node
	order     []*node // every loaded block, genesis first
	visible   int     // order[:visible] are known to the source
	active    []*node // active chain by height
	faults    map[wire.Hash]*blockFault
	outage    Fault // NotFound or Unavailable for the next outageN requests
	outageN   int
	headerBad bool
	delay     time.Duration
	requests  map[string]int
}

// New returns a source for network p holding only p's genesis block.
func New(p *params.Params) *Server {
	s := &Server{
		chain:    coreChainName(p.Name),
		nodes:    make(map[wire.Hash]*node),
		faults:   make(map[wire.Hash]*blockFault),
		requests: make(map[string]int),
	}
	g := &node{hash: p.GenesisHash, raw: bytes.Clone(p.GenesisBlock)}
	g.header, _ = wire.ParseHeader(g.raw)
	g.work = work(g.header.Bits)
	s.nodes[g.hash] = g
	s.order = append(s.order, g)
	s.visible = 1
	s.active = []*node{g}
	return s
}

// coreChainName is Core's GetChainTypeString.
func coreChainName(network string) string {
	switch network {
	case "main", "mainnet":
		return "main"
	case "testnet3", "testnet", "test":
		return "test"
	}
	return network
}

// target is Core's arith_uint256::SetCompact (nil when negative).
func target(bits uint32) *big.Int {
	size := bits >> 24
	word := big.NewInt(int64(bits & 0x007fffff))
	if size <= 3 {
		word.Rsh(word, 8*uint(3-size))
	} else {
		word.Lsh(word, 8*uint(size-3))
	}
	if word.Sign() != 0 && bits&0x00800000 != 0 {
		return nil
	}
	return word
}

// work is Core's GetBlockProof: 2^256 / (target + 1), 0 for a bad target.
func work(bits uint32) *big.Int {
	t := target(bits)
	if t == nil || t.Sign() == 0 || t.BitLen() > 256 {
		return new(big.Int)
	}
	num := new(big.Int).Lsh(big.NewInt(1), 256)
	return num.Div(num, t.Add(t, big.NewInt(1)))
}

// Add loads raw blocks (in an order where every parent comes first; the
// network's genesis block is skipped). They stay hidden until Reveal.
func (s *Server) Add(blocks ...[]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, raw := range blocks {
		h, err := wire.ParseHeader(raw)
		if err != nil {
			return fmt.Errorf("corerest: block %d: %w", i, err)
		}
		hash := wire.DoubleSHA256(raw[:wire.HeaderSize])
		if _, ok := s.nodes[hash]; ok {
			continue
		}
		parent := s.nodes[h.PrevBlock]
		if parent == nil {
			return fmt.Errorf("corerest: block %d (%s): parent %s not loaded", i, hash, h.PrevBlock)
		}
		n := &node{hash: hash, header: h, raw: bytes.Clone(raw), height: parent.height + 1, parent: parent, seq: len(s.order)}
		n.work = new(big.Int).Add(parent.work, work(h.Bits))
		s.nodes[hash] = n
		s.order = append(s.order, n)
	}
	return nil
}

// LoadFile adds the blocks of a file in Core's block-file framing
// (blk*.dat) for network p.
func (s *Server) LoadFile(path string, magic [4]byte) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	blocks, err := wire.ReadAllBlocks(f, magic)
	if err != nil {
		return 0, fmt.Errorf("corerest: %s: %w", path, err)
	}
	return len(blocks), s.Add(blocks...)
}

// Loaded is the number of loaded blocks, genesis included.
func (s *Server) Loaded() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.order)
}

// Reveal makes the first n loaded blocks (genesis counts as the first)
// known to the source and moves its active chain to the most-work one
// among them (first seen wins ties, as in Core). n beyond the loaded
// blocks reveals all; Reveal never hides blocks already shown.
func (s *Server) Reveal(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n = min(n, len(s.order))
	if n <= s.visible {
		return
	}
	s.visible = n
	best := s.active[len(s.active)-1]
	for _, c := range s.order[:n] {
		if c.work.Cmp(best.work) > 0 {
			best = c
		}
	}
	s.active = s.active[:0]
	for c := best; c != nil; c = c.parent {
		s.active = append(s.active, c)
	}
	for i, j := 0, len(s.active)-1; i < j; i, j = i+1, j-1 {
		s.active[i], s.active[j] = s.active[j], s.active[i]
	}
}

// RevealAll shows every loaded block.
func (s *Server) RevealAll() { s.Reveal(int(^uint(0) >> 1)) }

// Tip is the active tip's hash and height.
func (s *Server) Tip() (wire.Hash, int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.active[len(s.active)-1]
	return t.hash, t.height
}

// HashAt is the active chain's block at height.
func (s *Server) HashAt(h int32) (wire.Hash, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h < 0 || int(h) >= len(s.active) {
		return wire.Hash{}, false
	}
	return s.active[h].hash, true
}

// BlockFault makes the next `times` requests for block h misbehave as f
// (times <= 0: every request). f is Corrupt, WrongBlock, Truncate,
// CutConnection, NotFound or Unavailable.
func (s *Server) BlockFault(h wire.Hash, f Fault, times int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if times <= 0 {
		times = -1
	}
	s.faults[h] = &blockFault{f: f, times: times}
}

// ClearFaults removes every block fault, the outage and BreakHeaders.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.faults)
	s.outage, s.outageN, s.headerBad = 0, 0, false
}

// Outage makes the next n requests of any route answer as f (NotFound or
// Unavailable); n < 0 lasts until ClearFaults.
func (s *Server) Outage(f Fault, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outage, s.outageN = f, n
}

// BreakHeaders makes every /rest/headers reply skip its second header
// (on) or serve the chain as it is (off).
func (s *Server) BreakHeaders(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.headerBad = on
}

// SetDelay delays every answer by d (a slow source).
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Requests is how many requests a route has had: "chaininfo", "headers",
// "blockhashbyheight", "block" or "other".
func (s *Server) Requests(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[route]
}

// restError is Core's RESTERR: text/plain, the message and CRLF.
func restError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(status)
	io.WriteString(w, msg+"\r\n")
}

// Formats, as Core's rf_names.
type format int

const (
	fmtUndef format = iota
	fmtBin
	fmtHex
	fmtJSON
)

// parseDataFormat is Core's ParseDataFormat (the query is already split
// off by net/http). Written apart from api's copy on purpose: this fake is
// the oracle the follower and utxod's own REST routes are tested against,
// so it shares no code with them.
func parseDataFormat(s string) (string, format) {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return s, fmtUndef
	}
	switch s[i+1:] {
	case "bin":
		return s[:i], fmtBin
	case "hex":
		return s[:i], fmtHex
	case "json":
		return s[:i], fmtJSON
	}
	return s, fmtUndef
}

const availableFormats = "output format not found (available: .bin, .hex, .json)"

// toIntegral is Core's ToIntegral: decimal digits with an optional
// leading '-', nothing else (no '+', no spaces), in range.
func toIntegral(s string, bits int) (int64, bool) {
	if s == "" || s[0] == '+' {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, bits)
	return v, err == nil
}

// ServeHTTP implements http.Handler, dispatching by prefix in the order
// of Core's uri_prefixes table.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	route := "other"
	var fn func(http.ResponseWriter, *http.Request, string)
	for _, p := range []struct {
		prefix, route string
		fn            func(http.ResponseWriter, *http.Request, string)
	}{
		{"/rest/block/notxdetails/", "block", s.block},
		{"/rest/block/", "block", s.block},
		{"/rest/chaininfo", "chaininfo", s.chainInfo},
		{"/rest/headers/", "headers", s.headers},
		{"/rest/blockhashbyheight/", "blockhashbyheight", s.blockHashByHeight},
	} {
		if strings.HasPrefix(path, p.prefix) {
			route, fn = p.route, p.fn
			path = path[len(p.prefix):]
			break
		}
	}
	s.mu.Lock()
	s.requests[route]++
	delay := s.delay
	outage := Fault(0)
	if s.outageN != 0 {
		outage = s.outage
		if s.outageN > 0 {
			s.outageN--
		}
	}
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case outage == Unavailable:
		restError(w, http.StatusServiceUnavailable, "Service temporarily unavailable: Loading block index…")
	case outage == NotFound, fn == nil:
		http.NotFound(w, r)
	case r.Method != http.MethodGet:
		restError(w, http.StatusMethodNotAllowed, "method not allowed")
	default:
		fn(w, r, path)
	}
}

// chainInfo answers /rest/chaininfo.json with getblockchaininfo's fields.
func (s *Server) chainInfo(w http.ResponseWriter, _ *http.Request, rest string) {
	if _, f := parseDataFormat(rest); f != fmtJSON {
		restError(w, http.StatusNotFound, "output format not found (available: json)")
		return
	}
	s.mu.Lock()
	tip := s.active[len(s.active)-1]
	mtp := s.medianTimePast(tip)
	s.mu.Unlock()
	tgt := target(tip.header.Bits)
	if tgt == nil {
		tgt = new(big.Int)
	}
	// Field order and names of Core's getblockchaininfo (Core 29+).
	info := struct {
		Chain                string   `json:"chain"`
		Blocks               int32    `json:"blocks"`
		Headers              int32    `json:"headers"`
		BestBlockHash        string   `json:"bestblockhash"`
		Bits                 string   `json:"bits"`
		Target               string   `json:"target"`
		Difficulty           float64  `json:"difficulty"`
		Time                 uint32   `json:"time"`
		MedianTime           int64    `json:"mediantime"`
		VerificationProgress float64  `json:"verificationprogress"`
		InitialBlockDownload bool     `json:"initialblockdownload"`
		ChainWork            string   `json:"chainwork"`
		SizeOnDisk           int64    `json:"size_on_disk"`
		Pruned               bool     `json:"pruned"`
		Warnings             []string `json:"warnings"`
	}{
		Chain: s.chain, Blocks: tip.height, Headers: tip.height, BestBlockHash: tip.hash.String(),
		Bits: fmt.Sprintf("%08x", tip.header.Bits), Target: fmt.Sprintf("%064x", tgt), Difficulty: 1,
		Time: tip.header.Time, MedianTime: mtp, VerificationProgress: 1, ChainWork: fmt.Sprintf("%064x", tip.work),
		Warnings: []string{},
	}
	b, _ := json.Marshal(info)
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(b, '\n'))
}

// medianTimePast is Core's GetMedianTimePast (11 blocks). Caller holds mu.
func (s *Server) medianTimePast(n *node) int64 {
	var ts []int64
	for c := n; c != nil && len(ts) < 11; c = c.parent {
		ts = append(ts, int64(c.header.Time))
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts[len(ts)/2]
}

// known returns the visible block with hash h. Caller holds mu.
func (s *Server) known(h wire.Hash) *node {
	n := s.nodes[h]
	if n == nil || n.seq >= s.visible {
		return nil
	}
	return n
}

// onActive reports whether n is on the active chain. Caller holds mu.
func (s *Server) onActive(n *node) bool {
	return int(n.height) < len(s.active) && s.active[n.height] == n
}

// headers is Core's rest_headers.
func (s *Server) headers(w http.ResponseWriter, r *http.Request, rest string) {
	param, f := parseDataFormat(rest)
	parts := strings.Split(param, "/")
	var rawCount, hashStr string
	switch len(parts) {
	case 2: // deprecated /rest/headers/<count>/<hash>
		rawCount, hashStr = parts[0], parts[1]
	case 1:
		hashStr, rawCount = parts[0], "5"
		if q := r.URL.Query(); q.Has("count") {
			rawCount = q.Get("count")
		}
	default:
		restError(w, http.StatusBadRequest, "Invalid URI format. Expected /rest/headers/<hash>.<ext>?count=<count>")
		return
	}
	count, ok := toIntegral(rawCount, 64)
	if !ok || count < 1 || count > maxHeaders {
		restError(w, http.StatusBadRequest, fmt.Sprintf("Header count is invalid or out of acceptable range (1-%d): %s", maxHeaders, rawCount))
		return
	}
	hash, err := wire.ParseHash(hashStr)
	if err != nil {
		restError(w, http.StatusBadRequest, "Invalid hash: "+hashStr)
		return
	}
	s.mu.Lock()
	var list []*node
	for n := s.known(hash); n != nil && s.onActive(n); {
		list = append(list, n)
		if int64(len(list)) == count || int(n.height)+1 >= len(s.active) {
			break
		}
		n = s.active[n.height+1]
	}
	if s.headerBad && len(list) > 2 {
		list = append(list[:1], list[2:]...)
	}
	s.mu.Unlock()
	var buf []byte
	for _, n := range list {
		buf = append(buf, n.raw[:wire.HeaderSize]...)
	}
	switch f {
	case fmtBin:
		writeBin(w, buf)
	case fmtHex:
		writeHex(w, buf)
	case fmtJSON:
		type hdr struct {
			Hash              string `json:"hash"`
			Height            int32  `json:"height"`
			Version           int32  `json:"version"`
			MerkleRoot        string `json:"merkleroot"`
			Time              uint32 `json:"time"`
			Nonce             uint32 `json:"nonce"`
			Bits              string `json:"bits"`
			PreviousBlockHash string `json:"previousblockhash,omitempty"`
		}
		out := []hdr{}
		for _, n := range list {
			h := hdr{Hash: n.hash.String(), Height: n.height, Version: n.header.Version, MerkleRoot: n.header.MerkleRoot.String(),
				Time: n.header.Time, Nonce: n.header.Nonce, Bits: fmt.Sprintf("%08x", n.header.Bits)}
			if n.parent != nil {
				h.PreviousBlockHash = n.parent.hash.String()
			}
			out = append(out, h)
		}
		b, _ := json.Marshal(out)
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(b, '\n'))
	default:
		restError(w, http.StatusNotFound, availableFormats)
	}
}

// blockHashByHeight is Core's rest_blockhash_by_height.
func (s *Server) blockHashByHeight(w http.ResponseWriter, _ *http.Request, rest string) {
	hs, f := parseDataFormat(rest)
	h, ok := toIntegral(hs, 32)
	if !ok || h < 0 {
		restError(w, http.StatusBadRequest, "Invalid height: "+hs)
		return
	}
	s.mu.Lock()
	var n *node
	if int(h) < len(s.active) {
		n = s.active[h]
	}
	s.mu.Unlock()
	if n == nil {
		restError(w, http.StatusNotFound, "Block height out of range")
		return
	}
	switch f {
	case fmtBin:
		writeBin(w, n.hash[:])
	case fmtHex:
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, n.hash.String()+"\n")
	case fmtJSON:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"blockhash":"`+n.hash.String()+`"}`+"\n")
	default:
		restError(w, http.StatusNotFound, availableFormats)
	}
}

// block is Core's rest_block for bin and hex; JSON is not served.
func (s *Server) block(w http.ResponseWriter, _ *http.Request, rest string) {
	hashStr, f := parseDataFormat(rest)
	hash, err := wire.ParseHash(hashStr)
	if err != nil {
		restError(w, http.StatusBadRequest, "Invalid hash: "+hashStr)
		return
	}
	s.mu.Lock()
	n := s.known(hash)
	var fault Fault
	if bf := s.faults[hash]; bf != nil && n != nil {
		fault = bf.f
		if bf.times > 0 {
			if bf.times--; bf.times == 0 {
				delete(s.faults, hash)
			}
		}
	}
	var raw []byte
	if n != nil {
		raw = n.raw
		if fault == WrongBlock {
			switch {
			case n.parent != nil:
				raw = n.parent.raw
			case len(s.order) > 1:
				raw = s.order[1].raw
			}
		}
	}
	s.mu.Unlock()
	switch {
	case n == nil, fault == NotFound:
		restError(w, http.StatusNotFound, hashStr+" not found")
		return
	case fault == Unavailable:
		restError(w, http.StatusServiceUnavailable, "Service temporarily unavailable: Loading block index…")
		return
	case fault == Corrupt:
		raw = bytes.Clone(raw)
		raw[len(raw)-5] ^= 0x01 // inside the last transaction (its outputs or locktime)
	}
	switch f {
	case fmtBin:
		switch fault {
		case Truncate:
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(raw[:len(raw)/2]) // no Content-Length: a complete chunked body
			return
		case CutConnection:
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
			w.Write(raw[:len(raw)/2])
			if fl, ok := w.(http.Flusher); ok {
				fl.Flush() // the status line and half the body go out
			}
			panic(http.ErrAbortHandler) // then the connection drops
		}
		writeBin(w, raw)
	case fmtHex:
		if fault == Truncate {
			raw = raw[:len(raw)/2]
		}
		writeHex(w, raw)
	case fmtJSON:
		restError(w, http.StatusBadRequest, "JSON output is not supported for this request type")
	default:
		restError(w, http.StatusNotFound, availableFormats)
	}
}

func writeBin(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

func writeHex(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, hex.EncodeToString(b)+"\n")
}
