package api

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"utxod/address"
	"utxod/scripthash"
	"utxod/wire"
)

// The Esplora REST API (Blockstream/esplora API.md; Blockstream/electrs and
// mempool/electrs src/rest.rs) under /api, as blockstream.info and
// mempool.space mount it: the routes of a UTXO set, with electrs' exact
// bodies. Plain values are text/plain without a newline, objects compact
// JSON without a newline, errors text/plain with the message. Without a
// scripthash index the address routes scan the coin set (concurrent
// requests share one scan).

// electrs' cache lifetimes (rest.rs): TTL_SHORT for the tip and address
// routes and for blocks with fewer than CONF_FINAL confirmations.
const (
	ttlShort  = 10
	ttlLong   = 157_784_630
	confFinal = 10
)

// DefaultUTXOLimit is electrs' --utxos-limit default: an address with more
// unspent outputs gets 400 on GET /api/address/{address}/utxo.
const DefaultUTXOLimit = 500

// esploraRoutes mounts the Esplora routes on r (the /api sub-router).
func (s *Server) esploraRoutes(r chi.Router) {
	notFound := func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimPrefix(r.URL.Path, "/api")
		writeEsploraError(w, http.StatusNotFound, "endpoint does not exist "+strconv.Quote(path))
	}
	r.NotFound(notFound)
	r.MethodNotAllowed(notFound)
	r.Get("/blocks/tip/height", s.handleEsploraTipHeight)
	r.Get("/blocks/tip/hash", s.handleEsploraTipHash)
	r.Get("/block-height/{height}", s.handleEsploraBlockHeight)
	r.Get("/block/{hash}/status", s.handleEsploraBlockStatus)
	r.Get("/block/{hash}", s.handleEsploraBlock)
	r.Get("/block/{hash}/header", s.handleEsploraBlockHeader)
	r.Get("/block/{hash}/raw", s.handleEsploraBlockRaw)
	r.Get("/block/{hash}/txids", s.handleEsploraBlockTxids)
	r.Get("/block/{hash}/txid/{index}", s.handleEsploraBlockTxid)
	r.Get("/blocks", s.handleEsploraBlocksTip)
	r.Get("/blocks/", s.handleEsploraBlocksTip)
	r.Get("/blocks/{start_height}", s.handleEsploraBlocks)
	r.Get("/address/{address}/utxo", s.handleEsploraAddressUTXO)
	r.Get("/scripthash/{hash}/utxo", s.handleEsploraScripthashUTXO)
}

// writeEsplora writes an electrs success body with its Cache-Control.
func writeEsplora(w http.ResponseWriter, contentType string, body []byte, ttl int) {
	writeEsploraCached(w, contentType, body, "public, max-age="+strconv.Itoa(ttl))
}

// writeEsploraCached writes an electrs success body with the given
// Cache-Control (blockCacheControl for the per-block routes).
func writeEsploraCached(w http.ResponseWriter, contentType string, body []byte, cacheControl string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", cacheControl)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// writeEsploraJSON writes v as compact JSON without a trailing newline
// (serde_json::to_string).
func writeEsploraJSON(w http.ResponseWriter, v any, ttl int) {
	writeEsploraJSONCached(w, v, "public, max-age="+strconv.Itoa(ttl))
}

func writeEsploraJSONCached(w http.ResponseWriter, v any, cacheControl string) {
	b, err := marshalLine(v)
	if err != nil {
		writeEsploraError(w, http.StatusInternalServerError, "encoding the response failed")
		return
	}
	writeEsploraCached(w, "application/json", bytes.TrimSuffix(b, []byte("\n")), cacheControl)
}

// writeEsploraError is electrs' HttpError: text/plain, the message, no
// Cache-Control.
func writeEsploraError(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain")
	h.Set("Content-Length", strconv.Itoa(len(msg)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg))
}

// ttlByDepth is electrs' ttl_by_confirmations.
func ttlByDepth(tip, height int32) int {
	if tip-height >= confFinal {
		return ttlLong
	}
	return ttlShort
}

// handleEsploraTipHeight godoc
//
//	@Summary		Esplora: height of the tip
//	@Description	The active tip's height as plain text without a newline (Esplora GET /blocks/tip/height).
//	@Tags			esplora
//	@Produce		plain
//	@Success		200	{string}	string	"e.g. 14131"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/api/blocks/tip/height [get]
func (s *Server) handleEsploraTipHeight(w http.ResponseWriter, r *http.Request) {
	tip := s.chain.Tip()
	answeredAtTip(r, tip.Hash, tip.Height)
	writeEsplora(w, "text/plain", []byte(strconv.Itoa(int(tip.Height))), ttlShort)
}

// handleEsploraTipHash godoc
//
//	@Summary		Esplora: hash of the tip
//	@Description	The active tip's hash (64 lowercase hex digits, display order) as plain text without a newline.
//	@Tags			esplora
//	@Produce		plain
//	@Success		200	{string}	string	"block hash"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/api/blocks/tip/hash [get]
func (s *Server) handleEsploraTipHash(w http.ResponseWriter, r *http.Request) {
	tip := s.chain.Tip()
	answeredAtTip(r, tip.Hash, tip.Height)
	writeEsplora(w, "text/plain", []byte(tip.Hash.String()), ttlShort)
}

// parseUsize is Rust's usize::from_str: decimal digits, one optional '+'.
func parseUsize(s string) (uint64, bool) {
	s = strings.TrimPrefix(s, "+")
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// handleEsploraBlockHeight godoc
//
//	@Summary		Esplora: hash of the active-chain block at a height
//	@Description	Plain text without a newline. 400 "Invalid number" for a height that is not a decimal integer; 404 "Block not found" above the tip.
//	@Tags			esplora
//	@Produce		plain
//	@Param			height	path		string	true	"height"
//	@Success		200		{string}	string	"block hash"
//	@Failure		400		{string}	string	"Invalid number"
//	@Failure		404		{string}	string	"Block not found"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/api/block-height/{height} [get]
func (s *Server) handleEsploraBlockHeight(w http.ResponseWriter, r *http.Request) {
	h, ok := parseUsize(chi.URLParam(r, "height"))
	if !ok {
		writeEsploraError(w, http.StatusBadRequest, "Invalid number")
		return
	}
	tip := s.chain.Tip()
	if h > uint64(tip.Height) {
		writeEsploraError(w, http.StatusNotFound, "Block not found")
		return
	}
	n, ok := s.chain.AtHeight(int32(h))
	if !ok {
		writeEsploraError(w, http.StatusNotFound, "Block not found")
		return
	}
	answeredAtTip(r, n.TipHash, n.TipHeight)
	writeEsplora(w, "text/plain", []byte(n.Hash.String()), ttlByDepth(tip.Height, n.Height))
}

// EsploraBlockStatus is Esplora's BlockStatus: height and next_best are
// null for a block outside the best chain (unknown blocks included).
type EsploraBlockStatus struct {
	InBestChain bool    `json:"in_best_chain" example:"true"`
	Height      *int32  `json:"height" example:"100"`
	NextBest    *string `json:"next_best" example:"00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c"`
}

// handleEsploraBlockStatus godoc
//
//	@Summary		Esplora: whether a block is in the best chain
//	@Description	For a block of the active chain: its height and the next block's hash (null at the tip). Any other hash, unknown or stale, gets 200 with in_best_chain false and nulls, as electrs answers.
//	@Tags			esplora
//	@Produce		json
//	@Param			hash	path		string	true	"block hash (64 hex digits)"
//	@Success		200		{object}	EsploraBlockStatus
//	@Failure		400		{string}	string	"Invalid hex string"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/api/block/{hash}/status [get]
func (s *Server) handleEsploraBlockStatus(w http.ResponseWriter, r *http.Request) {
	hash, err := wire.ParseHash(chi.URLParam(r, "hash"))
	if err != nil {
		writeEsploraError(w, http.StatusBadRequest, "Invalid hex string")
		return
	}
	tip := s.chain.Tip()
	st := EsploraBlockStatus{}
	ttl := ttlShort
	n, ok := s.chain.Lookup(hash)
	if ok && !n.Orphan {
		answeredAt(r, n.TipHash, n.TipHeight)
	} else {
		answeredAtTip(r, tip.Hash, tip.Height)
	}
	if ok && !n.Orphan {
		if at, ok := s.chain.AtHeight(n.Height); ok && at.Hash == hash {
			h := n.Height
			st.InBestChain, st.Height = true, &h
			if next, ok := s.chain.AtHeight(n.Height + 1); ok {
				nh := next.Hash.String()
				st.NextBest = &nh
			}
			ttl = ttlByDepth(tip.Height, n.Height)
		}
	}
	writeEsploraJSON(w, st, ttl)
}

// EsploraUTXO is Esplora's UtxoValue.
type EsploraUTXO struct {
	TxID   string          `json:"txid" example:"0e3e2357e806b6cdb1f70b54c3a3a17b6714ee1f0e68bebb44a74b1efd512098"`
	Vout   uint32          `json:"vout" example:"0"`
	Status EsploraTxStatus `json:"status"`
	Value  int64           `json:"value" example:"5000000000"`
}

// EsploraTxStatus is Esplora's TransactionStatus of a confirmed output (a
// UTXO set has no mempool).
type EsploraTxStatus struct {
	Confirmed   bool   `json:"confirmed" example:"true"`
	BlockHeight uint32 `json:"block_height" example:"1"`
	BlockHash   string `json:"block_hash" example:"00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048"`
	BlockTime   uint32 `json:"block_time" example:"1231469665"`
}

// handleEsploraAddressUTXO godoc
//
//	@Summary		Esplora: unspent outputs of an address
//	@Description	Every unspent output paying exactly the address's script, as Esplora's UtxoValue array (in index order: height, txid, vout; Esplora clients treat it as a set). Base58 P2PKH/P2SH, bech32 v0 and bech32m v1+ addresses of this node's network. Past the UTXO limit (--utxos-limit, default 500) the answer is electrs' 400 "Too many unspent transaction outputs (>N)."; GET /v1/address/{address}/utxos pages past it. Without a scripthash index the coin set is scanned (concurrent requests share one scan).
//	@Tags			esplora
//	@Produce		json
//	@Param			address	path	string	true	"address"
//	@Success		200		{array}		EsploraUTXO
//	@Failure		400		{string}	string	"Invalid Bitcoin address: ..., Address on invalid network: ..., or Too many unspent transaction outputs (>500). ..."
//	@Failure		501		{string}	string	"no scripthash index and no coin set to scan"
//	@Failure		503		{string}	string	"too many queries waiting for a scan"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/api/address/{address}/utxo [get]
func (s *Server) handleEsploraAddressUTXO(w http.ResponseWriter, r *http.Request) {
	script, msg := s.esploraAddress(chi.URLParam(r, "address"))
	if msg != "" {
		writeEsploraError(w, http.StatusBadRequest, msg)
		return
	}
	s.esploraUTXOs(w, r, scripthash.Query{Hash: scripthash.Of(script), Script: script})
}

// esploraAddress decodes an address, or returns electrs' 400 message.
func (s *Server) esploraAddress(a string) ([]byte, string) {
	script, err := address.Decode(a, s.params)
	var ae *address.Error
	switch {
	case err == nil:
		return script, ""
	case errors.Is(err, address.ErrWrongNetwork) && errors.As(err, &ae):
		return nil, "Address on invalid network: " + ae.Reason
	case errors.As(err, &ae):
		return nil, "Invalid Bitcoin address: " + ae.Error()
	}
	return nil, "Invalid Bitcoin address"
}

// handleEsploraScripthashUTXO godoc
//
//	@Summary		Esplora: unspent outputs of a scripthash
//	@Description	As /api/address/{address}/utxo for the script whose SHA-256, in natural byte order, is hash (Esplora's scripthash, the reverse of Electrum's).
//	@Tags			esplora
//	@Produce		json
//	@Param			hash	path	string	true	"scripthash (64 hex digits)"
//	@Success		200		{array}		EsploraUTXO
//	@Failure		400		{string}	string	"Invalid scripthash, or Too many unspent transaction outputs (>500). ..."
//	@Failure		501		{string}	string	"no scripthash index and no coin set to scan"
//	@Failure		503		{string}	string	"too many queries waiting for a scan"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/api/scripthash/{hash}/utxo [get]
func (s *Server) handleEsploraScripthashUTXO(w http.ResponseWriter, r *http.Request) {
	h, err := scripthash.Parse(chi.URLParam(r, "hash"))
	if err != nil {
		writeEsploraError(w, http.StatusBadRequest, "Invalid scripthash")
		return
	}
	s.esploraUTXOs(w, r, scripthash.Query{Hash: h})
}

// esploraUTXOs answers one /utxo route: every row, or electrs' 400 past
// the limit.
func (s *Server) esploraUTXOs(w http.ResponseWriter, r *http.Request, q scripthash.Query) {
	limit := s.addr.utxoLimit
	q.Limit = scripthash.NoLimit
	if limit > 0 {
		q.Limit = limit
	}
	page, err := s.addr.page(r.Context(), s, []scripthash.Query{q})
	if err != nil {
		status, msg := lookupStatus(err)
		writeEsploraError(w, status, msg)
		return
	}
	a := page.answers[0]
	answeredAtTip(r, page.tip.Hash, int32(page.tip.Height))
	if a.More {
		writeEsploraError(w, http.StatusBadRequest, tooManyUTXOs(limit))
		return
	}
	writeEsploraJSON(w, page.esplora(a.UTXOs), ttlShort)
}

// tooManyUTXOs is mempool/electrs' TooManyUtxos text (wallets look for its
// first words), with where to go instead of "Contact support".
func tooManyUTXOs(limit int) string {
	return "Too many unspent transaction outputs (>" + strconv.Itoa(limit) + "). Page through them with GET /v1/address/{address}/utxos or /v1/scripthash/{hash}/utxos and a cursor."
}
