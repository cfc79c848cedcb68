package api

import (
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"utxod/backends"
	"utxod/chainstate"
	"utxod/utxo"
	"utxod/wire"
)

// ChainstateInfo is the answer of GET /v1/chainstate: Bitcoin Core's
// gettxoutsetinfo object. It is utxo.ChainstateInfo field for field (the
// handler converts one to the other, so the compiler keeps them equal) with
// the API's documentation.
type ChainstateInfo struct {
	Height          uint32     `json:"height" example:"2016"`
	BestBlock       wire.Hash  `json:"bestblock" swaggertype:"string" example:"00000000a141216a896c54f211301c436e557a8d55900637bbdce14c6c7bddef"`
	TxOuts          uint64     `json:"txouts" example:"1946"`
	BogoSize        uint64     `json:"bogosize" example:"227472"`
	HashSerialized3 *wire.Hash `json:"hash_serialized_3,omitempty" swaggertype:"string" example:"743b5d0274f6b2158d438045d2b22bcf147405f497e68b5c485402587949af32"`
	MuHash          *wire.Hash `json:"muhash,omitempty" swaggertype:"string" example:"631a447308c064e30e2699059ebc40f571fa1fab44c93d7e303ef04fc0632bcc"`
	Transactions    uint64     `json:"transactions" example:"1945"`
	// TotalAmount is in BTC with eight decimals.
	TotalAmount    utxo.Amount `json:"total_amount" swaggertype:"number" example:"100800.00000000"`
	TotalAmountSat int64       `json:"total_amount_sat" example:"10080000000000"`
	// The assume-valid block the node runs with (--assume-valid, Core's -assumevalid); null when every script is verified. Not part of gettxoutsetinfo.
	AssumeValid *wire.Hash `json:"assume_valid" swaggertype:"string" example:"00000000000000000000ccebd6d74d9194d8dcdc1d177c478e094bfad51ba5ac"`
	// Height of the highest active-chain block connected without verifying its scripts (assumed valid; every other rule was checked); null when every block's scripts were verified. Not part of gettxoutsetinfo.
	AssumedValidHeight *int32 `json:"assumed_valid_height" example:"936327"`
	// The block of the UTXO snapshot the chainstate was loaded from (utxod snapshot load); omitted when it was built block by block. Not part of gettxoutsetinfo.
	SnapshotBase *wire.Hash `json:"snapshot_base,omitempty" swaggertype:"string" example:"00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c"`
	// Height of snapshot_base; omitted with it.
	SnapshotBaseHeight *int32 `json:"snapshot_base_height,omitempty" example:"14131"`
}

// handleChainstate godoc
//
//	@Summary		UTXO-set statistics (Core's gettxoutsetinfo)
//	@Description	hash_type muhash (default) includes the MuHash3072 digest; hash_serialized_3 adds Core's hash_serialized_3 (one scan of the coin set, cached per tip) next to muhash; none omits digests. Amounts are BTC with eight decimals. assume_valid and assumed_valid_height say whether and up to which height scripts were assumed valid (Core's assume-valid) instead of verified.
//	@Tags			chainstate
//	@Produce		json
//	@Param			hash_type	query		string	false	"digest to include"	Enums(muhash, hash_serialized_3, none)	default(muhash)
//	@Success		200			{object}	ChainstateInfo
//	@Failure		400			{object}	Problem	"unknown hash_type"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/v1/chainstate [get]
func (s *Server) handleChainstate(w http.ResponseWriter, r *http.Request) {
	ht := r.URL.Query().Get("hash_type")
	switch ht {
	case "", chainstate.HashTypeMuHash, chainstate.HashTypeHashSerialized3, chainstate.HashTypeNone:
	default:
		writeProblem(w, http.StatusBadRequest, "bad-hash-type", "hash_type must be muhash, hash_serialized_3 or none")
		return
	}
	info, err := s.chainstateInfo(ht)
	if errors.Is(err, backends.ErrDiskFull) {
		s.log.Error("chainstate info: disk full", "err", err)
		writeDiskFull(w, "the chainstate could not be flushed for the scan")
		return
	}
	if err != nil {
		s.log.Error("chainstate info", "err", err)
		writeProblem(w, http.StatusInternalServerError, "internal", "computing the chainstate statistics failed")
		return
	}
	answeredAtTip(r, info.BestBlock, int32(info.Height))
	writeJSON(w, http.StatusOK, ChainstateInfo(info))
}

// chainstateInfo returns Info(ht); for hash_serialized_3 the muhash of the
// same tip is added (retrying if a block lands between the two reads).
func (s *Server) chainstateInfo(ht string) (utxo.ChainstateInfo, error) {
	if ht != chainstate.HashTypeHashSerialized3 {
		return s.chain.Info(ht)
	}
	for {
		info, err := s.chain.Info(ht)
		if err != nil {
			return info, err
		}
		mu, err := s.chain.Info(chainstate.HashTypeMuHash)
		if err != nil {
			return info, err
		}
		if mu.BestBlock == info.BestBlock {
			info.MuHash = mu.MuHash
			return info, nil
		}
	}
}

// UTXO is one unspent output.
type UTXO struct {
	TxID wire.Hash `json:"txid" swaggertype:"string" example:"0e3e2357e806b6cdb1f70b54c3a3a17b6714ee1f0e68bebb44a74b1efd512098"`
	Vout uint32    `json:"vout" example:"0"`
	// Value in BTC with eight decimals, as Core writes amounts.
	Value        utxo.Amount `json:"value" swaggertype:"number" example:"50.00000000"`
	ValueSat     int64       `json:"value_sat" example:"5000000000"`
	Height       uint32      `json:"height" example:"1"`
	Coinbase     bool        `json:"coinbase" example:"true"`
	ScriptPubKey string      `json:"script_pubkey" example:"410496b538e853519c726a2c91e61ec11600ae1390813a627c66fb8be7947be63c52da7589379515d4e0a604f8141781e62294721166bf621e73a82cbf2342c858eeac"`
	// Tip is the active tip the output was read at.
	Tip TipRef `json:"tip"`
}

// handleUTXO godoc
//
//	@Summary	One unspent output
//	@Tags		chainstate
//	@Produce	json
//	@Param		txid	path		string	true	"transaction id (64 hex digits, display order)"
//	@Param		vout	path		integer	true	"output index"
//	@Success	200		{object}	UTXO
//	@Failure	400		{object}	Problem	"malformed txid or vout"
//	@Failure	404		{object}	Problem	"spent or never existed"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router		/v1/utxos/{txid}/{vout} [get]
func (s *Server) handleUTXO(w http.ResponseWriter, r *http.Request) {
	txid, err := wire.ParseHash(chi.URLParam(r, "txid"))
	if err != nil {
		writeProblem(w, http.StatusBadRequest, "bad-txid", "txid must be 64 hex digits")
		return
	}
	vout, err := strconv.ParseUint(chi.URLParam(r, "vout"), 10, 32)
	if err != nil {
		writeProblem(w, http.StatusBadRequest, "bad-vout", "vout must be a decimal integer below 2^32")
		return
	}
	op := utxo.Outpoint{Hash: txid, Index: uint32(vout)}
	found, coins, tip, err := s.chain.Coins([]utxo.Outpoint{op})
	if err != nil {
		s.log.Error("coin lookup", "err", err)
		writeProblem(w, http.StatusInternalServerError, "internal", "coin lookup failed")
		return
	}
	answeredAtTip(r, tip.Hash, tip.Height)
	if !found[0] {
		writeProblem(w, http.StatusNotFound, "utxo-not-found", "no unspent output "+txid.String()+":"+strconv.FormatUint(vout, 10))
		return
	}
	c := coins[0]
	writeJSON(w, http.StatusOK, UTXO{
		TxID: txid, Vout: uint32(vout), Value: utxo.Amount(c.Value), ValueSat: c.Value,
		Height: c.Height, Coinbase: c.Coinbase, ScriptPubKey: hex.EncodeToString(c.Script),
		Tip: tipRef(tip.Hash, tip.Height),
	})
}
