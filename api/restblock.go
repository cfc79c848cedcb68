package api

import (
	"fmt"
	"net/http"

	"utxod/chainstate"
	"utxod/wire"
)

// BlockStore is implemented by a Chain that keeps raw blocks, as
// *chainstate.Chainstate does; /rest/block serves them. BlockData returns
// a copy the caller owns, or an error wrapping store.ErrNoBlock when the
// block's data is not kept.
type BlockStore interface {
	BlockData(hash wire.Hash) ([]byte, error)
}

var _ BlockStore = (*chainstate.Chainstate)(nil)

// restBlock godoc
//
//	@Summary		Raw block (Core REST)
//	@Description	Bitcoin Core REST /rest/block/{hash}.{bin|hex}: the block as stored, bin raw (application/octet-stream), hex plus a newline (text/plain). utxod keeps the blocks of the last 288 heights (all of them with --archive), stored side branches and genesis; others are 404 "not available (pruned data)" as on a pruned Core node. The .json form (transactions with prevouts) is not served (404); /rest/block/notxdetails/{hash}.json is.
//	@Tags			core-rest
//	@Produce		octet-stream
//	@Produce		plain
//	@Param			hashext	path		string	true	"block hash followed by .bin or .hex"
//	@Success		200		{string}	string	"the block"
//	@Failure		400		{object}	Problem	"bad hash"
//	@Failure		404		{object}	Problem	"unknown block, data not kept, or unknown format"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/rest/block/{hashext} [get]
func (s *Server) restBlock(w http.ResponseWriter, r *http.Request, rest string) {
	s.serveRESTBlock(w, r, rest, false)
}

// restBlockNoTxDetails godoc
//
//	@Summary		Block with txids (Core REST)
//	@Description	Bitcoin Core REST /rest/block/notxdetails/{hash}.{bin|hex|json}. bin and hex as /rest/block; json is Core's getblock at verbosity 1 (header fields, strippedsize, size, weight, coinbase_tx, tx as txids) in Core master's field order.
//	@Tags			core-rest
//	@Produce		json
//	@Produce		octet-stream
//	@Produce		plain
//	@Param			hashext	path		string	true	"block hash followed by .bin, .hex or .json"
//	@Success		200		{object}	BlockJSON
//	@Failure		400		{object}	Problem	"bad hash"
//	@Failure		404		{object}	Problem	"unknown block, data not kept, or unknown format"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/rest/block/notxdetails/{hashext} [get]
func (s *Server) restBlockNoTxDetails(w http.ResponseWriter, r *http.Request, rest string) {
	s.serveRESTBlock(w, r, rest, true)
}

// serveRESTBlock is Core's rest_block.
func (s *Server) serveRESTBlock(w http.ResponseWriter, r *http.Request, rest string, txids bool) {
	hashStr, f := parseDataFormat(rest)
	raw, n, ok := s.restRawBlock(w, r, hashStr)
	if !ok {
		return
	}
	cacheControl := blockCacheControl(n)
	switch f {
	case fmtBin, fmtHex:
		w.Header().Set("Cache-Control", cacheControl)
		writeBinOrHex(w, f, raw)
	case fmtJSON:
		if !txids {
			restError(w, http.StatusNotFound, "format-not-supported", "JSON output of /rest/block/ (transactions with prevouts) is not served by utxod: use .bin, .hex or /rest/block/notxdetails/<hash>.json")
			return
		}
		b, err := wire.ParseBlock(raw)
		if err != nil {
			s.log.Error("stored block does not parse", "hash", n.Hash, "err", err)
			restError(w, http.StatusInternalServerError, "io-error", "I/O error reading "+hashStr)
			return
		}
		w.Header().Set("Cache-Control", cacheControl)
		writeJSON(w, http.StatusOK, s.blockJSON(n, b))
	default:
		restError(w, http.StatusNotFound, "format-not-found", availableFormats)
	}
}

// BlockJSON is Core's blockToJSON at TxVerbosity::SHOW_TXID (getblock
// verbosity 1), Core master's fields in its order.
type BlockJSON struct {
	BlockHeader
	StrippedSize int        `json:"strippedsize"`
	Size         int        `json:"size"`
	Weight       int        `json:"weight"`
	CoinbaseTx   CoinbaseTx `json:"coinbase_tx"`
	Tx           []string   `json:"tx"`
}

// CoinbaseTx is Core's coinbaseTxToJSON.
type CoinbaseTx struct {
	Version  int32  `json:"version"`
	LockTime uint32 `json:"locktime"`
	Sequence uint32 `json:"sequence"`
	Coinbase string `json:"coinbase"`
	Witness  string `json:"witness,omitempty"`
}

// blockJSON builds the verbosity-1 object of b, whose index entry is n.
func (s *Server) blockJSON(n chainstate.BlockInfo, b *wire.Block) BlockJSON {
	h := headerJSON(n)
	h.NTx = uint32(len(b.Txs))
	out := BlockJSON{BlockHeader: h, Size: len(b.Raw), Tx: make([]string, len(b.Txs))}
	// Stripped size: the block without witness data (TX_NO_WITNESS); Core's
	// GetBlockWeight is stripped × 3 + full size.
	out.StrippedSize = wire.HeaderSize + wire.CompactSizeLen(uint64(len(b.Txs)))
	for i := range b.Txs {
		tx := &b.Txs[i]
		out.StrippedSize += tx.BaseSize()
		out.Tx[i] = tx.TxID.String()
	}
	out.Weight = out.StrippedSize*3 + out.Size
	if len(b.Txs) > 0 && len(b.Txs[0].Inputs) > 0 {
		cb := &b.Txs[0]
		in := cb.Inputs[0]
		out.CoinbaseTx = CoinbaseTx{Version: cb.Version, LockTime: cb.LockTime, Sequence: in.Sequence, Coinbase: fmt.Sprintf("%x", in.Script)}
		if len(in.Witness) > 0 {
			out.CoinbaseTx.Witness = fmt.Sprintf("%x", in.Witness[0])
		}
	}
	return out
}
