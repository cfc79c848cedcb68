package api

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"utxod/chainstate"
	"utxod/store"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// Core's REST routes for followers that want more than whole blocks:
// /rest/spenttxouts (Core v30: the outputs a block spent, from its undo
// data) and /rest/blockpart (Core v31: a byte range of the raw block).

// SpentSource is implemented by a Chain that reads back what a block spent,
// as *chainstate.Chainstate does (SpentOutputs); /rest/spenttxouts serves
// it. A Chain without it answers "undo not available".
type SpentSource interface {
	SpentOutputs(hash wire.Hash) ([][]utxo.Coin, chainstate.BlockInfo, error)
}

var _ SpentSource = (*chainstate.Chainstate)(nil)

// SpentTxOut is one spent output in Core's /rest/spenttxouts JSON
// (BlockUndoToJSON): value in BTC, scriptPubKey as ScriptToUniv writes it.
type SpentTxOut struct {
	Value        utxo.Amount  `json:"value" swaggertype:"number" example:"50.00000000"`
	ScriptPubKey ScriptPubKey `json:"scriptPubKey"`
}

// SpentTxOuts is the JSON answer of /rest/spenttxouts: one list per
// transaction of the block, the coinbase's (always empty) first.
type SpentTxOuts [][]SpentTxOut

// restSpentTxOuts godoc
//
//	@Summary		Outputs a block spent (Core REST)
//	@Description	Bitcoin Core REST /rest/spenttxouts/{hash}.{bin|hex|json} (Core 30): per transaction of the block, the coinbase first with an empty list, the outputs its inputs spent in input order, from the block's undo data (Core's CBlockUndo). bin is Core's serialization: CompactSize(transactions), then per transaction CompactSize(count) and each CTxOut (int64 value, CompactSize script length, script); hex is that in hex plus a newline; json lists {value, scriptPubKey}. Served for active-chain blocks whose data is kept (the last 288 blocks, all with --archive); others are 404 "undo not available".
//	@Tags			core-rest
//	@Produce		json
//	@Produce		octet-stream
//	@Produce		plain
//	@Param			hashext	path		string	true	"block hash followed by .bin, .hex or .json"
//	@Success		200		{object}	SpentTxOuts
//	@Failure		400		{object}	Problem	"bad hash or URI"
//	@Failure		404		{object}	Problem	"unknown block, undo data not available, or unknown format"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/rest/spenttxouts/{hashext} [get]
func (s *Server) restSpentTxOuts(w http.ResponseWriter, r *http.Request, rest string) {
	param, f := parseDataFormat(rest)
	if strings.Contains(param, "/") {
		restError(w, http.StatusBadRequest, "bad-uri", "Invalid URI format. Expected /rest/spenttxouts/<hash>.<ext>")
		return
	}
	hash, ok := parseHashStr(param)
	if !ok {
		restError(w, http.StatusBadRequest, "bad-hash", "Invalid hash: "+param)
		return
	}
	var spent [][]utxo.Coin
	var n chainstate.BlockInfo
	err := store.ErrNoUndo
	if src, ok := s.chain.(SpentSource); ok {
		spent, n, err = src.SpentOutputs(hash)
		answeredAtBlock(r, n)
	} else if n, ok := s.chain.Lookup(hash); !ok || n.Orphan {
		err = chainstate.ErrUnknownBlock
	}
	switch {
	case errors.Is(err, chainstate.ErrUnknownBlock):
		restError(w, http.StatusNotFound, "block-not-found", param+" not found")
		return
	case errors.Is(err, store.ErrNoUndo), errors.Is(err, store.ErrNoBlock):
		restError(w, http.StatusNotFound, "undo-not-available", param+" undo not available")
		return
	case err != nil:
		s.log.Error("reading undo data", "hash", hash, "err", err)
		restError(w, http.StatusInternalServerError, "io-error", "I/O error reading "+param)
		return
	}
	switch f {
	case fmtBin, fmtHex:
		w.Header().Set("Cache-Control", blockCacheControl(n))
		writeBinOrHex(w, f, appendSpentTxOuts(nil, spent))
	case fmtJSON:
		w.Header().Set("Cache-Control", blockCacheControl(n))
		out := make(SpentTxOuts, 0, len(spent)+1)
		out = append(out, []SpentTxOut{})
		for _, tx := range spent {
			outs := make([]SpentTxOut, len(tx))
			for i, c := range tx {
				outs[i] = SpentTxOut{Value: utxo.Amount(c.Value), ScriptPubKey: describeScript(c.Script, s.params)}
			}
			out = append(out, outs)
		}
		writeJSON(w, http.StatusOK, out)
	default:
		restError(w, http.StatusNotFound, "format-not-found", availableFormats)
	}
}

// appendSpentTxOuts is Core's SerializeBlockUndo: CompactSize(txs + 1), an
// empty list for the coinbase, then per transaction its CTxOuts.
func appendSpentTxOuts(b []byte, spent [][]utxo.Coin) []byte {
	b = wire.AppendCompactSize(b, uint64(len(spent)+1))
	b = wire.AppendCompactSize(b, 0)
	for _, tx := range spent {
		b = wire.AppendCompactSize(b, uint64(len(tx)))
		for _, c := range tx {
			b = binary.LittleEndian.AppendUint64(b, uint64(c.Value))
			b = wire.AppendCompactSize(b, uint64(len(c.Script)))
			b = append(b, c.Script...)
		}
	}
	return b
}

// parseSize is Core's ToIntegral<size_t>: decimal digits only (no sign,
// no spaces), within 64 bits.
func parseSize(s string) (uint64, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// restBlockPart godoc
//
//	@Summary		A byte range of a raw block (Core REST)
//	@Description	Bitcoin Core REST /rest/blockpart/{hash}.{bin|hex}?offset=N&size=M (Core 31): size bytes of the serialized block from offset, bin raw, hex plus a newline. A range that is empty or runs past the block is 400 "Bad block part offset/size", json 400. Blocks as /rest/block: the last 288 (all with --archive), stored side branches and genesis.
//	@Tags			core-rest
//	@Produce		octet-stream
//	@Produce		plain
//	@Param			hashext	path		string	true	"block hash followed by .bin or .hex"
//	@Param			offset	query		integer	true	"first byte"
//	@Param			size	query		integer	true	"number of bytes (at least 1)"
//	@Success		200		{string}	string	"the bytes"
//	@Failure		400		{object}	Problem	"missing or invalid offset or size, bad hash, a range outside the block, or json"
//	@Failure		404		{object}	Problem	"unknown block, data not kept, or unknown format"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/rest/blockpart/{hashext} [get]
func (s *Server) restBlockPart(w http.ResponseWriter, r *http.Request, rest string) {
	q := r.URL.Query()
	offset, ok := parseSize(q.Get("offset"))
	if !ok {
		restError(w, http.StatusBadRequest, "bad-offset", "Block part offset missing or invalid")
		return
	}
	size, ok := parseSize(q.Get("size"))
	if !ok {
		restError(w, http.StatusBadRequest, "bad-size", "Block part size missing or invalid")
		return
	}
	hashStr, f := parseDataFormat(rest)
	raw, n, ok := s.restRawBlock(w, r, hashStr)
	if !ok {
		return
	}
	if size == 0 || offset > uint64(len(raw)) || size > uint64(len(raw))-offset {
		restError(w, http.StatusBadRequest, "bad-block-part", fmt.Sprintf("Bad block part offset/size %d/%d for %s", offset, size, hashStr))
		return
	}
	part := raw[offset : offset+size]
	switch f {
	case fmtBin, fmtHex:
		w.Header().Set("Cache-Control", blockCacheControl(n))
		writeBinOrHex(w, f, part)
	case fmtJSON:
		restError(w, http.StatusBadRequest, "format-not-supported", "JSON output is not supported for this request type")
	default:
		restError(w, http.StatusNotFound, "format-not-found", availableFormats)
	}
}

// restRawBlock is the part of Core's rest_block before the format: parse
// the hash, look the block up, read its data; on failure it writes Core's
// error.
func (s *Server) restRawBlock(w http.ResponseWriter, r *http.Request, hashStr string) ([]byte, chainstate.BlockInfo, bool) {
	hash, ok := parseHashStr(hashStr)
	if !ok {
		restError(w, http.StatusBadRequest, "bad-hash", "Invalid hash: "+hashStr)
		return nil, chainstate.BlockInfo{}, false
	}
	n, ok := s.chain.Lookup(hash)
	if !ok || n.Orphan {
		restError(w, http.StatusNotFound, "block-not-found", hashStr+" not found")
		return nil, n, false
	}
	answeredAtBlock(r, n)
	raw, err := s.rawBlock(hash)
	switch {
	case errors.Is(err, store.ErrNoBlock):
		// Core: BLOCK_HAVE_DATA unset, pruned or never downloaded.
		if st := n.Status; st.Has(validate.StatusDataValid) || st.Has(validate.StatusConnected) {
			restError(w, http.StatusNotFound, "block-pruned", hashStr+" not available (pruned data)")
		} else {
			restError(w, http.StatusNotFound, "block-not-downloaded", hashStr+" not available (not fully downloaded)")
		}
		return nil, n, false
	case err != nil:
		s.log.Error("reading block data", "hash", hash, "err", err)
		restError(w, http.StatusInternalServerError, "io-error", "I/O error reading "+hashStr)
		return nil, n, false
	}
	return raw, n, true
}
