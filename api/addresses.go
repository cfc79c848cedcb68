package api

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"utxod/scripthash"
	"utxod/utxo"
	"utxod/wire"
)

// Address and scripthash queries: the service behind the Esplora /utxo
// routes, the /v1 address routes (pages with a cursor, summaries, a batch)
// and POST /v1/scan. It asks the store's scripthash index and, when the
// datadir has none (scripthash.ErrNoIndex), a Scanner over the coin set.

// Limits of the /v1 address routes.
const (
	// DefaultPageLimit and MaxPageLimit bound ?limit= of the utxos routes.
	DefaultPageLimit = 100
	MaxPageLimit     = 10_000
	// MaxBatchItems bounds the addresses and scripthashes of one batch.
	MaxBatchItems = 1000
	// maxBatchBody bounds the batch request body.
	maxBatchBody = 1 << 20
	// lookupRetries is how often a lookup is retried when a reorganisation
	// replaced its tip before its rows could be dated.
	lookupRetries = 3
)

// addrService answers address and scripthash queries.
type addrService struct {
	index     scripthash.Index      // the store's index (may be nil)
	coins     scripthash.CoinSource // the coin set to scan (may be nil)
	scanner   *scripthash.Scanner   // over coins
	utxoLimit int                   // Esplora /utxo limit (0: none)
	scan      scanJob               // POST /v1/scan
}

func newAddrService(cfg Config) *addrService {
	a := &addrService{index: cfg.Index, coins: cfg.Coins, utxoLimit: cfg.UTXOLimit}
	if a.coins == nil {
		a.coins, _ = cfg.Chain.(scripthash.CoinSource)
	}
	if a.coins != nil {
		a.scanner = scripthash.NewScanner(a.coins, 0)
	}
	return a
}

// errNoScripts: neither an index nor a coin set to scan.
var errNoScripts = errors.New("api: no scripthash index and no coin set to scan")

// errTipMoved: every retry met a reorganisation.
var errTipMoved = errors.New("api: the chain reorganised during the lookup; retry")

// lookup asks the index, else the scanner.
func (a *addrService) lookup(ctx context.Context, qs []scripthash.Query) (scripthash.Result, error) {
	if a.index != nil {
		res, err := a.index.Lookup(ctx, qs)
		if !errors.Is(err, scripthash.ErrNoIndex) {
			return res, err
		}
	}
	if a.scanner == nil {
		return scripthash.Result{}, errNoScripts
	}
	return a.scanner.Lookup(ctx, qs)
}

// blockRef dates the rows of a page: hash and time of the active-chain
// block at each height.
type blockRef struct {
	hash wire.Hash
	time uint32
}

// page is a lookup result with its rows dated against the active chain.
type page struct {
	tip     scripthash.Tip
	answers []scripthash.Answer
	blocks  map[uint32]blockRef
}

// page looks qs up and dates every row. The active chain must still hold
// the result's tip (else a reorganisation replaced blocks the rows may
// come from, and the lookup is retried).
func (a *addrService) page(ctx context.Context, s *Server, qs []scripthash.Query) (*page, error) {
	for range lookupRetries {
		res, err := a.lookup(ctx, qs)
		if err != nil {
			return nil, err
		}
		p := &page{tip: res.Tip, answers: res.Answers, blocks: make(map[uint32]blockRef)}
		if p.date(s) {
			return p, nil
		}
	}
	return nil, errTipMoved
}

func (p *page) date(s *Server) bool {
	if !s.tipHolds(p.tip) {
		return false
	}
	for _, a := range p.answers {
		for _, u := range a.UTXOs {
			if _, ok := p.blocks[u.Height]; ok {
				continue
			}
			n, ok := s.chain.AtHeight(int32(u.Height))
			if !ok || u.Height > p.tip.Height {
				return false
			}
			p.blocks[u.Height] = blockRef{hash: n.Hash, time: n.Header.Time}
		}
	}
	// The tip is checked again: a reorganisation may have happened while
	// the rows were dated.
	return s.tipHolds(p.tip)
}

// esplora renders rows as Esplora's UtxoValue list ([] when empty).
func (p *page) esplora(rows []scripthash.UTXO) []EsploraUTXO {
	out := make([]EsploraUTXO, len(rows))
	for i, u := range rows {
		b := p.blocks[u.Height]
		out[i] = EsploraUTXO{
			TxID: u.Outpoint.Hash.String(), Vout: u.Outpoint.Index, Value: u.Value,
			Status: EsploraTxStatus{Confirmed: true, BlockHeight: u.Height, BlockHash: b.hash.String(), BlockTime: b.time},
		}
	}
	return out
}

// lookupStatus maps a lookup failure to a status and a message.
func lookupStatus(err error) (int, string) {
	switch {
	case errors.Is(err, errNoScripts):
		return http.StatusNotImplemented, "no scripthash index and no coin set to scan"
	case errors.Is(err, scripthash.ErrBusy):
		return http.StatusServiceUnavailable, "too many queries waiting for a scan; retry later"
	case errors.Is(err, errTipMoved):
		return http.StatusServiceUnavailable, errTipMoved.Error()
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "the request ended before the lookup did"
	}
	return http.StatusInternalServerError, "the lookup failed"
}

func (s *Server) writeLookupProblem(w http.ResponseWriter, err error) {
	status, msg := lookupStatus(err)
	if status == http.StatusInternalServerError {
		s.log.Error("scripthash lookup", "err", err)
	}
	reason := map[int]string{http.StatusNotImplemented: "no-scripthash-index", http.StatusServiceUnavailable: "busy"}[status]
	if reason == "" {
		reason = "internal"
	}
	writeProblem(w, status, reason, msg)
}

// Cursors are opaque to clients: base64url of a version byte, the last
// row's Position (height, txid, vout) and 4 bytes binding it to the
// scripthash, so a cursor of one address is refused for another.
const cursorVersion = 1

func encodeCursor(h scripthash.Hash, p scripthash.Position) string {
	b := make([]byte, 0, 45)
	b = append(b, cursorVersion)
	b = binary.BigEndian.AppendUint32(b, p.Height)
	b = append(b, p.Txid[:]...)
	b = binary.BigEndian.AppendUint32(b, p.Vout)
	sum := sha256.Sum256(append(h[:], b...))
	return base64.RawURLEncoding.EncodeToString(append(b, sum[:4]...))
}

var errCursor = errors.New("bad cursor")

func decodeCursor(h scripthash.Hash, s string) (scripthash.Position, error) {
	var p scripthash.Position
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 45 || b[0] != cursorVersion {
		return p, fmt.Errorf("%w: not a cursor this server wrote", errCursor)
	}
	sum := sha256.Sum256(append(h[:], b[:41]...))
	if [4]byte(b[41:]) != [4]byte(sum[:4]) {
		return p, fmt.Errorf("%w: the cursor belongs to another address or scripthash", errCursor)
	}
	p.Height = binary.BigEndian.Uint32(b[1:5])
	copy(p.Txid[:], b[5:37])
	p.Vout = binary.BigEndian.Uint32(b[37:41])
	return p, nil
}

// addressRoutes mounts the /v1 address and scripthash routes.
func (s *Server) addressRoutes(r chi.Router) {
	r.Get("/address/{address}/utxos", s.handleAddressUTXOs)
	r.Get("/scripthash/{hash}/utxos", s.handleScripthashUTXOs)
	r.Get("/address/{address}/summary", s.handleAddressSummary)
	r.Get("/scripthash/{hash}/summary", s.handleScripthashSummary)
	r.Post("/utxos/batch", s.handleUTXOBatch)
	r.Post("/scan", s.handleScan)
	r.Get("/scan/status", s.handleScanStatus)
	r.Delete("/scan", s.handleScanAbort)
}

// target is the script an address route asks about.
type target struct {
	address string // "" for a scripthash route
	hash    scripthash.Hash
	script  []byte // nil for a scripthash route
}

// addressTarget parses {address}, writing a 400 problem on failure.
func (s *Server) addressTarget(w http.ResponseWriter, a string) (target, bool) {
	script, msg := s.esploraAddress(a)
	if msg != "" {
		writeProblem(w, http.StatusBadRequest, "bad-address", msg)
		return target{}, false
	}
	return target{address: a, hash: scripthash.Of(script), script: script}, true
}

func scripthashTarget(w http.ResponseWriter, hex string) (target, bool) {
	h, err := scripthash.Parse(hex)
	if err != nil {
		writeProblem(w, http.StatusBadRequest, "bad-scripthash", "scripthash must be 64 hex digits: SHA-256 of the output script in natural byte order (Esplora's, the reverse of Electrum's)")
		return target{}, false
	}
	return target{hash: h}, true
}

// UTXOPage is one page of a script's unspent outputs.
type UTXOPage struct {
	Address    string        `json:"address,omitempty" example:"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"`
	Scripthash string        `json:"scripthash" example:"6191c3b590bfcfa0475e877c302da1e323497acf3b42c08d8fa28e364edf018b"`
	Height     uint32        `json:"height" example:"14131"`
	BestBlock  string        `json:"bestblock" example:"00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c"`
	UTXOs      []EsploraUTXO `json:"utxos"`
	// NextCursor continues after the last row; null on the last page.
	NextCursor *string `json:"next_cursor" example:"AQAAAAEOPiNX6Aa2zbH3C1TDo6F7ZxTuHw5ovrtEp0se_VEgmAAAAAC2LtN1"`
}

// pageParams reads ?limit= and ?cursor= for target t.
func pageParams(w http.ResponseWriter, r *http.Request, t target) (scripthash.Query, bool) {
	q := scripthash.Query{Hash: t.hash, Script: t.script, Limit: DefaultPageLimit}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxPageLimit {
			writeProblem(w, http.StatusBadRequest, "bad-limit", fmt.Sprintf("limit must be an integer from 1 to %d", MaxPageLimit))
			return q, false
		}
		q.Limit = n
	}
	if c := r.URL.Query().Get("cursor"); c != "" {
		p, err := decodeCursor(t.hash, c)
		if err != nil {
			writeProblem(w, http.StatusBadRequest, "bad-cursor", err.Error())
			return q, false
		}
		q.After = &p
	}
	return q, true
}

func (s *Server) utxoPage(w http.ResponseWriter, r *http.Request, t target) {
	q, ok := pageParams(w, r, t)
	if !ok {
		return
	}
	p, err := s.addr.page(r.Context(), s, []scripthash.Query{q})
	if err != nil {
		s.writeLookupProblem(w, err)
		return
	}
	answeredAtTip(r, p.tip.Hash, int32(p.tip.Height))
	writeJSON(w, http.StatusOK, p.utxoPage(t, p.answers[0]))
}

func (p *page) utxoPage(t target, a scripthash.Answer) UTXOPage {
	out := UTXOPage{Address: t.address, Scripthash: t.hash.String(), Height: p.tip.Height,
		BestBlock: p.tip.Hash.String(), UTXOs: p.esplora(a.UTXOs)}
	if a.More && len(a.UTXOs) > 0 {
		c := encodeCursor(t.hash, a.UTXOs[len(a.UTXOs)-1].Position())
		out.NextCursor = &c
	}
	return out
}

// handleAddressUTXOs godoc
//
//	@Summary		Unspent outputs of an address, a page at a time
//	@Description	Rows in index order (height, txid, vout), each in Esplora's UtxoValue shape, with no upper bound on the total: next_cursor continues after the last row. Paging is stable while blocks arrive: an output unspent during the whole walk is returned exactly once, outputs created meanwhile come at the end. A cursor is opaque and valid only for the address it came from.
//	@Tags			addresses
//	@Produce		json
//	@Param			address	path		string	true	"address"
//	@Param			limit	query		integer	false	"rows per page (1-10000)"	default(100)
//	@Param			cursor	query		string	false	"next_cursor of the previous page"
//	@Success		200		{object}	UTXOPage
//	@Failure		400		{object}	Problem	"bad address, limit or cursor"
//	@Failure		501		{object}	Problem	"no scripthash index and no coin set to scan"
//	@Failure		503		{object}	Problem	"busy (too many queries waiting for a scan) or a reorganisation during the lookup"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/v1/address/{address}/utxos [get]
func (s *Server) handleAddressUTXOs(w http.ResponseWriter, r *http.Request) {
	if t, ok := s.addressTarget(w, chi.URLParam(r, "address")); ok {
		s.utxoPage(w, r, t)
	}
}

// handleScripthashUTXOs godoc
//
//	@Summary		Unspent outputs of a scripthash, a page at a time
//	@Description	As /v1/address/{address}/utxos for an Esplora scripthash (SHA-256 of the output script, natural byte order).
//	@Tags			addresses
//	@Produce		json
//	@Param			hash	path		string	true	"scripthash (64 hex digits)"
//	@Param			limit	query		integer	false	"rows per page (1-10000)"	default(100)
//	@Param			cursor	query		string	false	"next_cursor of the previous page"
//	@Success		200		{object}	UTXOPage
//	@Failure		400		{object}	Problem	"bad scripthash, limit or cursor"
//	@Failure		501		{object}	Problem	"no scripthash index and no coin set to scan"
//	@Failure		503		{object}	Problem	"busy or a reorganisation during the lookup"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/v1/scripthash/{hash}/utxos [get]
func (s *Server) handleScripthashUTXOs(w http.ResponseWriter, r *http.Request) {
	if t, ok := scripthashTarget(w, chi.URLParam(r, "hash")); ok {
		s.utxoPage(w, r, t)
	}
}

// UTXOSummary is what the UTXO set knows of a script: the count and sum of
// its unspent outputs (no history: funded and spent totals are not kept).
type UTXOSummary struct {
	Address    string `json:"address,omitempty" example:"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"`
	Scripthash string `json:"scripthash" example:"6191c3b590bfcfa0475e877c302da1e323497acf3b42c08d8fa28e364edf018b"`
	Height     uint32 `json:"height" example:"14131"`
	BestBlock  string `json:"bestblock" example:"00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c"`
	UTXOCount  uint64 `json:"utxo_count" example:"2"`
	UTXOSum    int64  `json:"utxo_sum" example:"10000000000"`
	// Amount is utxo_sum in BTC with eight decimals.
	Amount utxo.Amount `json:"amount" swaggertype:"number" example:"100.00000000"`
}

func (s *Server) utxoSummary(w http.ResponseWriter, r *http.Request, t target) {
	p, err := s.addr.page(r.Context(), s, []scripthash.Query{{Hash: t.hash, Script: t.script, Summary: true}})
	if err != nil {
		s.writeLookupProblem(w, err)
		return
	}
	a := p.answers[0]
	answeredAtTip(r, p.tip.Hash, int32(p.tip.Height))
	writeJSON(w, http.StatusOK, UTXOSummary{Address: t.address, Scripthash: t.hash.String(), Height: p.tip.Height,
		BestBlock: p.tip.Hash.String(), UTXOCount: a.Count, UTXOSum: a.Sum, Amount: utxo.Amount(a.Sum)})
}

// handleAddressSummary godoc
//
//	@Summary		Count and sum of an address's unspent outputs
//	@Description	utxo_sum is in satoshis, amount the same in BTC. A UTXO set has no history, so there are no funded/spent totals.
//	@Tags			addresses
//	@Produce		json
//	@Param			address	path		string	true	"address"
//	@Success		200		{object}	UTXOSummary
//	@Failure		400		{object}	Problem	"bad address"
//	@Failure		501		{object}	Problem	"no scripthash index and no coin set to scan"
//	@Failure		503		{object}	Problem	"busy or a reorganisation during the lookup"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/v1/address/{address}/summary [get]
func (s *Server) handleAddressSummary(w http.ResponseWriter, r *http.Request) {
	if t, ok := s.addressTarget(w, chi.URLParam(r, "address")); ok {
		s.utxoSummary(w, r, t)
	}
}

// handleScripthashSummary godoc
//
//	@Summary		Count and sum of a scripthash's unspent outputs
//	@Tags			addresses
//	@Produce		json
//	@Param			hash	path		string	true	"scripthash (64 hex digits)"
//	@Success		200		{object}	UTXOSummary
//	@Failure		400		{object}	Problem	"bad scripthash"
//	@Failure		501		{object}	Problem	"no scripthash index and no coin set to scan"
//	@Failure		503		{object}	Problem	"busy or a reorganisation during the lookup"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/v1/scripthash/{hash}/summary [get]
func (s *Server) handleScripthashSummary(w http.ResponseWriter, r *http.Request) {
	if t, ok := scripthashTarget(w, chi.URLParam(r, "hash")); ok {
		s.utxoSummary(w, r, t)
	}
}

// UTXOBatchRequest asks for many addresses and scripthashes at once.
type UTXOBatchRequest struct {
	Addresses    []string `json:"addresses" example:"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"`
	Scripthashes []string `json:"scripthashes" example:"6191c3b590bfcfa0475e877c302da1e323497acf3b42c08d8fa28e364edf018b"`
	// Limit is the rows per item (0-10000, default 100); 0 gives summaries only.
	Limit *int `json:"limit,omitempty" example:"100"`
}

// UTXOBatchItem is one answer of a batch: the summary and the first page.
type UTXOBatchItem struct {
	Address    string        `json:"address,omitempty"`
	Scripthash string        `json:"scripthash"`
	UTXOCount  uint64        `json:"utxo_count"`
	UTXOSum    int64         `json:"utxo_sum"`
	UTXOs      []EsploraUTXO `json:"utxos"`
	NextCursor *string       `json:"next_cursor"`
}

// UTXOBatch answers a batch, every item at the same tip.
type UTXOBatch struct {
	Height    uint32          `json:"height" example:"14131"`
	BestBlock string          `json:"bestblock" example:"00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c"`
	Results   []UTXOBatchItem `json:"results"`
}

// handleUTXOBatch godoc
//
//	@Summary		Unspent outputs of many addresses and scripthashes
//	@Description	One lookup for up to 1000 items (addresses first, then scripthashes, in request order), all answered at one tip: per item the count and sum of its unspent outputs and the first limit rows with a next_cursor for /v1/address/{address}/utxos or /v1/scripthash/{hash}/utxos. Without a scripthash index this is one scan for the whole batch.
//	@Tags			addresses
//	@Accept			json
//	@Produce		json
//	@Param			request	body		UTXOBatchRequest	true	"addresses and scripthashes"
//	@Success		200		{object}	UTXOBatch
//	@Failure		400		{object}	Problem	"malformed body, bad address, scripthash or limit, no items"
//	@Failure		413		{object}	Problem	"more than 1000 items or a body above 1 MiB"
//	@Failure		501		{object}	Problem	"no scripthash index and no coin set to scan"
//	@Failure		503		{object}	Problem	"busy or a reorganisation during the lookup"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Router			/v1/utxos/batch [post]
func (s *Server) handleUTXOBatch(w http.ResponseWriter, r *http.Request) {
	var req UTXOBatchRequest
	if !decodeBody(w, r, maxBatchBody, &req) {
		return
	}
	n := len(req.Addresses) + len(req.Scripthashes)
	switch {
	case n == 0:
		writeProblem(w, http.StatusBadRequest, "empty-batch", "give at least one of addresses and scripthashes")
		return
	case n > MaxBatchItems:
		writeProblem(w, http.StatusRequestEntityTooLarge, "batch-too-large", fmt.Sprintf("%d items; at most %d per batch", n, MaxBatchItems))
		return
	}
	limit := DefaultPageLimit
	if req.Limit != nil {
		if *req.Limit < 0 || *req.Limit > MaxPageLimit {
			writeProblem(w, http.StatusBadRequest, "bad-limit", fmt.Sprintf("limit must be from 0 to %d", MaxPageLimit))
			return
		}
		limit = *req.Limit
	}
	targets := make([]target, 0, n)
	for i, a := range req.Addresses {
		script, msg := s.esploraAddress(a)
		if msg != "" {
			writeProblem(w, http.StatusBadRequest, "bad-address", fmt.Sprintf("addresses[%d]: %s", i, msg))
			return
		}
		targets = append(targets, target{address: a, hash: scripthash.Of(script), script: script})
	}
	for i, h := range req.Scripthashes {
		sh, err := scripthash.Parse(h)
		if err != nil {
			writeProblem(w, http.StatusBadRequest, "bad-scripthash", fmt.Sprintf("scripthashes[%d]: must be 64 hex digits", i))
			return
		}
		targets = append(targets, target{hash: sh})
	}
	qs := make([]scripthash.Query, len(targets))
	for i, t := range targets {
		qs[i] = scripthash.Query{Hash: t.hash, Script: t.script, Limit: limit, Summary: true}
	}
	p, err := s.addr.page(r.Context(), s, qs)
	if err != nil {
		s.writeLookupProblem(w, err)
		return
	}
	answeredAt(r, p.tip.Hash, int32(p.tip.Height))
	out := UTXOBatch{Height: p.tip.Height, BestBlock: p.tip.Hash.String(), Results: make([]UTXOBatchItem, len(targets))}
	for i, t := range targets {
		a := p.answers[i]
		pg := p.utxoPage(t, a)
		out.Results[i] = UTXOBatchItem{Address: t.address, Scripthash: pg.Scripthash, UTXOCount: a.Count, UTXOSum: a.Sum,
			UTXOs: pg.UTXOs, NextCursor: pg.NextCursor}
	}
	writeJSON(w, http.StatusOK, out)
}

// decodeBody reads a JSON body of at most limit bytes into v (unknown
// fields refused), writing a problem on failure.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	if r.ContentLength > limit {
		writeProblem(w, http.StatusRequestEntityTooLarge, "body-too-large", fmt.Sprintf("the body is limited to %d bytes", limit))
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeProblem(w, http.StatusRequestEntityTooLarge, "body-too-large", fmt.Sprintf("the body is limited to %d bytes", limit))
			return false
		}
		writeProblem(w, http.StatusBadRequest, "bad-json", "malformed JSON body: "+err.Error())
		return false
	}
	if dec.More() {
		writeProblem(w, http.StatusBadRequest, "bad-json", "the body holds more than one JSON value")
		return false
	}
	return true
}
