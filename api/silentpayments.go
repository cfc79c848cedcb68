package api

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"utxod/silentpayments"
	"utxod/utxo"
)

// Silent payments (BIP352) routes, answered from the store's tweak index
// (--index silentpayments): the BIP352 index-server specification's tweak
// server (/getinfo, /tweaks/{height}), BlindBit Oracle's v1 HTTP routes
// under /blindbit (a BlindBit client's base URL is http://host/blindbit),
// and /v1/silentpayments/tweaks, many blocks at once with their hashes.
//
// Dust: a transaction is left out when its largest taproot output is below
// the limit (BlindBit's rule). Cut-through (filter_spent, BlindBit's
// /tweaks): a transaction is left out when every taproot output it made is
// spent at the index's tip, decided per transaction, never per output.

// MaxTweakBlocks bounds ?count= of /v1/silentpayments/tweaks.
const MaxTweakBlocks = 144

// SPInfo is the BIP352 index-server specification's GET /getinfo.
type SPInfo struct {
	Version     string `json:"version" example:"1.0.0"`
	Network     string `json:"network" example:"mainnet"`
	BlockHeight int32  `json:"block_height" example:"850000"`
	// DustLimit is the server's default dust limit (0: none).
	DustLimit int64 `json:"dust_limit" example:"0"`
	// FilterSpent says whether filter_spent may be asked ("optional").
	FilterSpent string `json:"filter_spent" example:"optional"`
}

// SPBlockTweaks is the BIP352 index-server specification's GET
// /tweaks/{height}: the block's tweaks (33-byte compressed points, hex) in
// txid order, with the filters applied echoed.
type SPBlockTweaks struct {
	Height      int32    `json:"height" example:"850000"`
	Hash        string   `json:"hash" example:"00000000000000000002a7c4c1e48d76c5a37902165a270156b7a8d72728a054"`
	DustLimit   int64    `json:"dust_limit" example:"546"`
	FilterSpent int      `json:"filter_spent" example:"1"`
	Tweaks      []string `json:"tweaks"`
}

// SPTweak is one eligible transaction of /v1/silentpayments/tweaks.
type SPTweak struct {
	Txid  string `json:"txid"`
	Tweak string `json:"tweak" example:"0298caba5b281fd238bdf00bd357b8991dba9dea0ebf901e9865e43cd70581d270"`
	// MaxValue is the largest taproot output value in satoshis.
	MaxValue int64 `json:"max_value"`
	// Unspent is how many of its taproot outputs are unspent at the tip.
	Unspent uint32 `json:"unspent"`
	// Outputs are the vouts of its taproot outputs.
	Outputs []uint32 `json:"outputs"`
}

// SPRangeBlock is one block of /v1/silentpayments/tweaks.
type SPRangeBlock struct {
	Height int32     `json:"height"`
	Hash   string    `json:"hash"`
	Tweaks []SPTweak `json:"tweaks"`
}

// SPTweakRange is GET /v1/silentpayments/tweaks: every block the index
// covers in [from, from+count), all read at one tip. A client compares each
// block's hash with the one it saw before to detect a reorganisation.
type SPTweakRange struct {
	TipHeight int32  `json:"tip_height"`
	TipHash   string `json:"tip_hash"`
	// IndexedFrom is the lowest height the index has rows for.
	IndexedFrom int32          `json:"indexed_from"`
	DustLimit   int64          `json:"dust_limit"`
	FilterSpent int            `json:"filter_spent"`
	Blocks      []SPRangeBlock `json:"blocks"`
}

// BlindBitInfo is BlindBit Oracle's GET /info.
type BlindBitInfo struct {
	Network                        string `json:"network" example:"mainnet"`
	Height                         int32  `json:"height"`
	TweaksOnly                     bool   `json:"tweaks_only"`
	TweaksFullBasic                bool   `json:"tweaks_full_basic"`
	TweaksFullWithDustFilter       bool   `json:"tweaks_full_with_dust_filter"`
	TweaksCutThroughWithDustFilter bool   `json:"tweaks_cut_through_with_dust_filter"`
}

// BlindBitHeight is BlindBit Oracle's GET /block-height.
type BlindBitHeight struct {
	BlockHeight int32 `json:"block_height"`
}

// BlindBitHash is BlindBit Oracle's GET /block-hash/{height}.
type BlindBitHash struct {
	BlockHash string `json:"block_hash"`
}

// BlindBitUTXO is one element of BlindBit Oracle's GET /utxos/{height}: an
// unspent taproot output of an eligible transaction of the block.
type BlindBitUTXO struct {
	Txid         string `json:"txid"`
	Vout         uint32 `json:"vout"`
	Value        int64  `json:"value"`
	ScriptPubKey string `json:"scriptpubkey"`
	BlockHeight  int32  `json:"block_height"`
	BlockHash    string `json:"block_hash"`
	Timestamp    uint32 `json:"timestamp"`
	Spent        bool   `json:"spent"`
}

func (s *Server) silentPaymentsRoutes(r chi.Router) {
	r.Get("/getinfo", s.handleSPInfo)
	r.Get("/tweaks/{height}", s.handleSPTweaks)
	r.Get("/v1/silentpayments/tweaks", s.handleSPRange)
	r.Route("/blindbit", func(r chi.Router) {
		r.Get("/info", s.handleBlindBitInfo)
		r.Get("/block-height", s.handleBlindBitHeight)
		r.Get("/block-hash/{height}", s.handleBlindBitHash)
		r.Get("/tweaks/{height}", s.handleBlindBitTweaks)
		r.Get("/tweak-index/{height}", s.handleBlindBitTweakIndex)
		r.Get("/utxos/{height}", s.handleBlindBitUTXOs)
	})
}

// networkName is the network as BIP352 servers name it.
func (s *Server) networkName() string {
	switch s.params.Name {
	case "main":
		return "mainnet"
	case "testnet3":
		return "testnet"
	}
	return s.params.Name
}

// spIndex returns the index, or writes the 501 problem.
func (s *Server) spIndex(w http.ResponseWriter) (silentpayments.Index, bool) {
	if s.sp == nil {
		writeNoTweakIndex(w)
		return nil, false
	}
	return s.sp, true
}

func writeNoTweakIndex(w http.ResponseWriter) {
	writeProblem(w, http.StatusNotImplemented, "no-silentpayments-index", "this node keeps no silent-payments tweak index (start it with --index silentpayments)")
}

// spFilter is a request's dust limit and cut-through.
type spFilter struct {
	dust        int64
	filterSpent bool
}

func (f spFilter) keep(r *silentpayments.TweakRow) bool {
	return r.MaxValue >= f.dust && (!f.filterSpent || r.Unspent > 0)
}

func (f spFilter) spent() int {
	if f.filterSpent {
		return 1
	}
	return 0
}

// parseSPFilter reads dust_limit and filter_spent (or the camelCase
// spellings dustLimit and filterSpent); false after a 400.
func parseSPFilter(w http.ResponseWriter, r *http.Request) (spFilter, bool) {
	var f spFilter
	q := r.URL.Query()
	get := func(a, b string) (string, string) {
		if v := q.Get(a); v != "" {
			return a, v
		}
		return b, q.Get(b)
	}
	if name, v := get("dust_limit", "dustLimit"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > utxo.MaxMoney {
			writeProblem(w, http.StatusBadRequest, "bad-dust-limit", fmt.Sprintf("%s: want satoshis from 0 to %d, got %q", name, utxo.MaxMoney, v))
			return f, false
		}
		f.dust = n
	}
	if name, v := get("filter_spent", "filterSpent"); v != "" {
		switch v {
		case "1", "true":
			f.filterSpent = true
		case "0", "false":
		default:
			writeProblem(w, http.StatusBadRequest, "bad-filter-spent", fmt.Sprintf("%s: want 0, 1, true or false, got %q", name, v))
			return f, false
		}
	}
	return f, true
}

// parseSPHeight reads a height path or query value; false after a 400.
func parseSPHeight(w http.ResponseWriter, name, v string) (int32, bool) {
	n, err := strconv.ParseUint(v, 10, 31)
	if err != nil {
		writeProblem(w, http.StatusBadRequest, "bad-height", fmt.Sprintf("%s: want a block height, got %q", name, v))
		return 0, false
	}
	return int32(n), true
}

// spBlock reads the block at height; false after a 404 (not indexed) or a
// 500.
func (s *Server) spBlock(w http.ResponseWriter, r *http.Request, ix silentpayments.Index, height int32) (silentpayments.BlockTweaks, bool) {
	tip, blocks, err := ix.Blocks(r.Context(), height, 1)
	if err != nil {
		s.spError(w, err)
		return silentpayments.BlockTweaks{}, false
	}
	if len(blocks) == 0 {
		writeProblem(w, http.StatusNotFound, "not-indexed", notIndexed(height, tip))
		return silentpayments.BlockTweaks{}, false
	}
	return blocks[0], true
}

func notIndexed(height int32, tip silentpayments.IndexTip) string {
	if tip.From > tip.Height {
		return fmt.Sprintf("height %d is not indexed: the index has no block yet (tip %d)", height, tip.Height)
	}
	return fmt.Sprintf("height %d is not indexed: the index covers heights %d to %d", height, tip.From, tip.Height)
}

func (s *Server) spError(w http.ResponseWriter, err error) {
	if errors.Is(err, silentpayments.ErrNoIndex) {
		writeProblem(w, http.StatusNotImplemented, "no-silentpayments-index", err.Error())
		return
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		writeProblem(w, http.StatusServiceUnavailable, "cancelled", err.Error())
		return
	}
	s.log.Error("silent-payments index read", "err", err)
	writeProblem(w, http.StatusInternalServerError, "internal", "reading the silent-payments index failed")
}

// handleSPInfo godoc
//
//	@Summary		BIP352 tweak server information
//	@Description	The BIP352 index-server specification's /getinfo: network, the index's tip height, the default dust limit (0: none) and whether filter_spent may be asked.
//	@Tags			silentpayments
//	@Produce		json
//	@Success		200	{object}	SPInfo
//	@Failure		501	{object}	Problem	"no silent-payments index"
//	@Router			/getinfo [get]
func (s *Server) handleSPInfo(w http.ResponseWriter, _ *http.Request) {
	ix, ok := s.spIndex(w)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, SPInfo{Version: "1.0.0", Network: s.networkName(), BlockHeight: ix.Tip().Height, FilterSpent: "optional"})
}

// handleSPTweaks godoc
//
//	@Summary		BIP352 tweaks of a block
//	@Description	The BIP352 index-server specification's /tweaks/{height}: the tweak (input_hash·A, 33 bytes hex) of every eligible transaction of the active chain's block at height, in txid order. dust_limit leaves out transactions whose largest taproot output is below it; filter_spent=1 leaves out those whose taproot outputs are all spent (cut-through per transaction). The camelCase spellings dustLimit and filterSpent are accepted.
//	@Tags			silentpayments
//	@Produce		json
//	@Param			height			path		integer	true	"block height"
//	@Param			dust_limit		query		integer	false	"satoshis (0: none)"
//	@Param			filter_spent	query		integer	false	"1: leave out fully spent transactions"	Enums(0, 1)
//	@Success		200				{object}	SPBlockTweaks
//	@Failure		400				{object}	Problem	"bad height, dust_limit or filter_spent"
//	@Failure		404				{object}	Problem	"height not indexed"
//	@Failure		501				{object}	Problem	"no silent-payments index"
//	@Router			/tweaks/{height} [get]
func (s *Server) handleSPTweaks(w http.ResponseWriter, r *http.Request) {
	ix, ok := s.spIndex(w)
	if !ok {
		return
	}
	height, ok := parseSPHeight(w, "height", chi.URLParam(r, "height"))
	if !ok {
		return
	}
	f, ok := parseSPFilter(w, r)
	if !ok {
		return
	}
	b, ok := s.spBlock(w, r, ix, height)
	if !ok {
		return
	}
	out := SPBlockTweaks{Height: b.Height, Hash: b.Hash.String(), DustLimit: f.dust, FilterSpent: f.spent(), Tweaks: tweakList(b.Rows, f)}
	writeJSON(w, http.StatusOK, out)
}

func tweakList(rows []silentpayments.TweakRow, f spFilter) []string {
	out := []string{}
	for i := range rows {
		if f.keep(&rows[i]) {
			out = append(out, hex.EncodeToString(rows[i].Tweak[:]))
		}
	}
	return out
}

// handleSPRange godoc
//
//	@Summary		Tweaks of many blocks with their hashes
//	@Description	Every block the index covers in [from, from+count) with its hash and the eligible transactions kept by dust_limit and filter_spent (txid, tweak, largest taproot value, taproot outputs unspent at the tip, their vouts), all read at one tip. Blocks beyond the index's tip are not returned (an empty list past it); compare each hash with the one seen before to detect a reorganisation.
//	@Tags			silentpayments
//	@Produce		json
//	@Param			from			query		integer	true	"first height"
//	@Param			count			query		integer	false	"blocks (1-144)"	default(1)
//	@Param			dust_limit		query		integer	false	"satoshis (0: none)"
//	@Param			filter_spent	query		integer	false	"1: leave out fully spent transactions"	Enums(0, 1)
//	@Success		200				{object}	SPTweakRange
//	@Failure		400				{object}	Problem	"bad from, count, dust_limit or filter_spent"
//	@Failure		404				{object}	Problem	"from below the index's first height"
//	@Failure		501				{object}	Problem	"no silent-payments index"
//	@Router			/v1/silentpayments/tweaks [get]
func (s *Server) handleSPRange(w http.ResponseWriter, r *http.Request) {
	ix, ok := s.spIndex(w)
	if !ok {
		return
	}
	q := r.URL.Query()
	if q.Get("from") == "" {
		writeProblem(w, http.StatusBadRequest, "bad-height", "from: required")
		return
	}
	from, ok := parseSPHeight(w, "from", q.Get("from"))
	if !ok {
		return
	}
	count := 1
	if v := q.Get("count"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxTweakBlocks {
			writeProblem(w, http.StatusBadRequest, "bad-count", fmt.Sprintf("count: want 1 to %d blocks, got %q", MaxTweakBlocks, v))
			return
		}
		count = n
	}
	f, ok := parseSPFilter(w, r)
	if !ok {
		return
	}
	tip, blocks, err := ix.Blocks(r.Context(), from, count)
	if err != nil {
		s.spError(w, err)
		return
	}
	// Below the first indexed height (other than genesis, which has no
	// eligible transaction) the index cannot answer.
	if from < tip.From && tip.From > 1 && tip.From <= tip.Height {
		writeProblem(w, http.StatusNotFound, "not-indexed", notIndexed(from, tip))
		return
	}
	out := SPTweakRange{TipHeight: tip.Height, TipHash: tip.Hash.String(), IndexedFrom: tip.From,
		DustLimit: f.dust, FilterSpent: f.spent(), Blocks: make([]SPRangeBlock, 0, len(blocks))}
	for _, b := range blocks {
		rb := SPRangeBlock{Height: b.Height, Hash: b.Hash.String(), Tweaks: []SPTweak{}}
		for i := range b.Rows {
			row := &b.Rows[i]
			if f.keep(row) {
				rb.Tweaks = append(rb.Tweaks, SPTweak{Txid: row.Txid.String(), Tweak: hex.EncodeToString(row.Tweak[:]),
					MaxValue: row.MaxValue, Unspent: row.Unspent, Outputs: row.Outputs})
			}
		}
		out.Blocks = append(out.Blocks, rb)
	}
	writeJSON(w, http.StatusOK, out)
}

// handleBlindBitInfo godoc
//
//	@Summary		BlindBit Oracle: server information
//	@Description	BlindBit Oracle's /info: network, the index's tip height and the tweak modes served (all: full index, dust filter, cut-through with dust filter).
//	@Tags			silentpayments
//	@Produce		json
//	@Success		200	{object}	BlindBitInfo
//	@Failure		501	{object}	Problem	"no silent-payments index"
//	@Router			/blindbit/info [get]
func (s *Server) handleBlindBitInfo(w http.ResponseWriter, _ *http.Request) {
	ix, ok := s.spIndex(w)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, BlindBitInfo{Network: s.networkName(), Height: ix.Tip().Height,
		TweaksFullBasic: true, TweaksFullWithDustFilter: true, TweaksCutThroughWithDustFilter: true})
}

// handleBlindBitHeight godoc
//
//	@Summary		BlindBit Oracle: the indexed tip height
//	@Tags			silentpayments
//	@Produce		json
//	@Success		200	{object}	BlindBitHeight
//	@Failure		501	{object}	Problem	"no silent-payments index"
//	@Router			/blindbit/block-height [get]
func (s *Server) handleBlindBitHeight(w http.ResponseWriter, _ *http.Request) {
	ix, ok := s.spIndex(w)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, BlindBitHeight{BlockHeight: ix.Tip().Height})
}

// blindBitBlock parses {height} and reads the block; false after an error.
func (s *Server) blindBitBlock(w http.ResponseWriter, r *http.Request) (silentpayments.BlockTweaks, bool) {
	ix, ok := s.spIndex(w)
	if !ok {
		return silentpayments.BlockTweaks{}, false
	}
	height, ok := parseSPHeight(w, "blockheight", chi.URLParam(r, "height"))
	if !ok {
		return silentpayments.BlockTweaks{}, false
	}
	return s.spBlock(w, r, ix, height)
}

// handleBlindBitHash godoc
//
//	@Summary		BlindBit Oracle: block hash at a height
//	@Tags			silentpayments
//	@Produce		json
//	@Param			height	path		integer	true	"block height"
//	@Success		200		{object}	BlindBitHash
//	@Failure		400		{object}	Problem	"bad height"
//	@Failure		404		{object}	Problem	"height not indexed"
//	@Failure		501		{object}	Problem	"no silent-payments index"
//	@Router			/blindbit/block-hash/{height} [get]
func (s *Server) handleBlindBitHash(w http.ResponseWriter, r *http.Request) {
	if b, ok := s.blindBitBlock(w, r); ok {
		writeJSON(w, http.StatusOK, BlindBitHash{BlockHash: b.Hash.String()})
	}
}

// handleBlindBitTweaks godoc
//
//	@Summary		BlindBit Oracle: tweaks of a block, cut-through
//	@Description	BlindBit Oracle's /tweaks/{height}: a JSON array of the tweaks (hex) of the block's eligible transactions that still have an unspent taproot output, leaving out those whose largest taproot output is below dustLimit.
//	@Tags			silentpayments
//	@Produce		json
//	@Param			height		path		integer	true	"block height"
//	@Param			dustLimit	query		integer	false	"satoshis (0: none)"
//	@Success		200			{array}		string
//	@Failure		400			{object}	Problem	"bad height or dustLimit"
//	@Failure		404			{object}	Problem	"height not indexed"
//	@Failure		501			{object}	Problem	"no silent-payments index"
//	@Router			/blindbit/tweaks/{height} [get]
func (s *Server) handleBlindBitTweaks(w http.ResponseWriter, r *http.Request) {
	s.blindBitTweaks(w, r, true)
}

// handleBlindBitTweakIndex godoc
//
//	@Summary		BlindBit Oracle: full tweak index of a block
//	@Description	BlindBit Oracle's /tweak-index/{height}: a JSON array of the tweaks (hex) of every eligible transaction of the block, spent or not, leaving out those whose largest taproot output is below dustLimit.
//	@Tags			silentpayments
//	@Produce		json
//	@Param			height		path		integer	true	"block height"
//	@Param			dustLimit	query		integer	false	"satoshis (0: none)"
//	@Success		200			{array}		string
//	@Failure		400			{object}	Problem	"bad height or dustLimit"
//	@Failure		404			{object}	Problem	"height not indexed"
//	@Failure		501			{object}	Problem	"no silent-payments index"
//	@Router			/blindbit/tweak-index/{height} [get]
func (s *Server) handleBlindBitTweakIndex(w http.ResponseWriter, r *http.Request) {
	s.blindBitTweaks(w, r, false)
}

func (s *Server) blindBitTweaks(w http.ResponseWriter, r *http.Request, cutThrough bool) {
	f, ok := parseSPFilter(w, r)
	if !ok {
		return
	}
	f.filterSpent = cutThrough
	if b, ok := s.blindBitBlock(w, r); ok {
		writeJSON(w, http.StatusOK, tweakList(b.Rows, f))
	}
}

// handleBlindBitUTXOs godoc
//
//	@Summary		BlindBit Oracle: taproot outputs of a block for scanning
//	@Description	BlindBit Oracle's /utxos/{height}: the unspent taproot outputs of the block's eligible transactions (txid, vout, value, scriptpubkey, the block's height, hash and time), read from the coin set. Spent outputs are left out (their transactions are cut through), so every element has spent false.
//	@Tags			silentpayments
//	@Produce		json
//	@Param			height	path		integer	true	"block height"
//	@Success		200		{array}		BlindBitUTXO
//	@Failure		400		{object}	Problem	"bad height"
//	@Failure		404		{object}	Problem	"height not indexed"
//	@Failure		501		{object}	Problem	"no silent-payments index"
//	@Router			/blindbit/utxos/{height} [get]
func (s *Server) handleBlindBitUTXOs(w http.ResponseWriter, r *http.Request) {
	b, ok := s.blindBitBlock(w, r)
	if !ok {
		return
	}
	var ops []utxo.Outpoint
	for i := range b.Rows {
		if b.Rows[i].Unspent == 0 {
			continue
		}
		for _, v := range b.Rows[i].Outputs {
			ops = append(ops, utxo.Outpoint{Hash: b.Rows[i].Txid, Index: v})
		}
	}
	out := []BlindBitUTXO{}
	if len(ops) > 0 {
		found, coins, _, err := s.chain.Coins(ops)
		if err != nil {
			s.spError(w, err)
			return
		}
		var ts uint32
		if bi, ok := s.chain.Lookup(b.Hash); ok {
			ts = bi.Header.Time
		}
		// coins holds the unspent ones only, in order.
		for i, op := range ops {
			if !found[i] {
				continue
			}
			c := coins[0]
			coins = coins[1:]
			out = append(out, BlindBitUTXO{Txid: op.Hash.String(), Vout: op.Index, Value: c.Value,
				ScriptPubKey: hex.EncodeToString(c.Script), BlockHeight: b.Height, BlockHash: b.Hash.String(), Timestamp: ts})
		}
	}
	writeJSON(w, http.StatusOK, out)
}
