package api

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"utxod/backends"
	"utxod/chainstate"
	"utxod/validate"
	"utxod/wire"
)

// Body limits of POST /v1/blocks. MaxBlockBytes is the consensus maximum
// serialized size (MAX_BLOCK_SERIALIZED_SIZE); hex bodies may carry up to
// hexWhitespaceSlack bytes of whitespace (line breaks) on top of the
// 2*MaxBlockBytes hex digits.
const (
	MaxBlockBytes      = 4_000_000
	MaxBlockHexChars   = 2 * MaxBlockBytes
	hexWhitespaceSlack = 1 << 20
)

// BlockResult is the answer to a submitted block.
type BlockResult struct {
	Hash   string `json:"hash" example:"00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048"`
	Height int32  `json:"height" example:"1"`
	Status string `json:"status" enums:"connected,side-branch,orphan,duplicate" example:"connected"`
	// FlushedHeight is the height of the tip of the chain state on disk
	// (the last flush's, recorded once its synced batch returned) when the
	// answer was made: a crash reopens the node there.
	FlushedHeight int32 `json:"flushed_height" example:"1"`
	// FlushedHash is the hash of that tip.
	FlushedHash string `json:"flushed_hash" example:"00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048"`
	// Durable: the block is on the active chain at or below the flushed
	// tip, so it survives a crash. When false, a crash loses it until it is
	// submitted again; ask ?durable=1 (or Prefer: durable) for an answer
	// given only after a flush.
	Durable bool `json:"durable" example:"true"`
}

// handlePostBlock godoc
//
//	@Summary		Submit a block
//	@Description	Validates the block fully and connects it when it extends the most-work chain. The body is the raw serialized block (application/octet-stream) or its hex (text/plain, whitespace ignored). Blocks are processed one at a time; concurrent submissions queue. Orphans (parent unknown) are held and connected when the parent arrives. The chain state reaches the disk at flushes (the coins cache full, shutdown, serve --follow's --follow-flush): the answer's flushed_height and durable say whether a crash now would lose the block. A flush the block makes due (the coins cache full) runs after the answer: the next submission waits for it, lookups do not. If it fails, the next submission retries it first and, while it fails, is answered with its problem (503 disk-full) and not processed. With durable=1 (or the header Prefer: durable, answered with Preference-Applied: durable) a connected or duplicate block is flushed before the answer, which then says durable: true; concurrent durable submissions share flushes. A failed durable flush answers its problem (503 disk-full) with the block still connected.
//	@Tags			blocks
//	@Accept			octet-stream
//	@Accept			plain
//	@Produce		json
//	@Security		BearerAuth
//	@Param			block	body		string	true	"raw block or its hex"
//	@Param			durable	query		boolean	false	"answer only once the block is on disk (1 or true)"
//	@Success		200		{object}	BlockResult
//	@Failure		400		{object}	Problem	"empty, malformed hex or unparseable block, or a durable that is not a boolean"
//	@Failure		401		{object}	Problem	"missing or wrong bearer token"
//	@Failure		413		{object}	Problem	"body above the consensus maximum block size"
//	@Failure		409		{object}	Problem	"need-headers: the chainstate was loaded from a UTXO snapshot without the headers to its base"
//	@Failure		415		{object}	Problem	"unsupported Content-Type"
//	@Failure		422		{object}	Problem	"invalid block; reason is Bitcoin Core's reject reason"
//	@Failure		503		{object}	Problem	"shutting down, orphan pool full, or disk full"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Router			/v1/blocks [post]
func (s *Server) handlePostBlock(w http.ResponseWriter, r *http.Request) {
	durable, ok := durableRequest(r)
	if !ok {
		writeProblem(w, http.StatusBadRequest, "bad-durable", "durable must be 1, true, 0 or false")
		return
	}
	isHex := false
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		switch {
		case err != nil:
			writeProblem(w, http.StatusUnsupportedMediaType, "unsupported-media-type", "malformed Content-Type")
			return
		case mt == "application/octet-stream":
		case mt == "text/plain":
			isHex = true
		default:
			writeProblem(w, http.StatusUnsupportedMediaType, "unsupported-media-type",
				fmt.Sprintf("Content-Type %q: send application/octet-stream (raw block) or text/plain (hex)", mt))
			return
		}
	}
	limit := int64(MaxBlockBytes)
	if isHex {
		limit = MaxBlockHexChars + hexWhitespaceSlack
	}
	if r.ContentLength > limit {
		writeProblem(w, http.StatusRequestEntityTooLarge, "body-too-large", tooLargeDetail(isHex))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeProblem(w, http.StatusRequestEntityTooLarge, "body-too-large", tooLargeDetail(isHex))
			return
		}
		writeProblem(w, http.StatusBadRequest, "body-read-failed", "reading the request body failed")
		return
	}
	raw := body
	if isHex {
		var reason, detail string
		raw, reason, detail = decodeHexBody(body)
		if reason == "body-too-large" {
			writeProblem(w, http.StatusRequestEntityTooLarge, reason, detail)
			return
		}
		if reason != "" {
			writeProblem(w, http.StatusBadRequest, reason, detail)
			return
		}
	}
	if len(raw) == 0 {
		writeProblem(w, http.StatusBadRequest, "empty-body", "the body holds no block")
		return
	}

	// The node takes one block at a time; the request's context ends the
	// wait if the client goes away.
	start := time.Now()
	res, err := s.chain.SubmitWith(r.Context(), raw, chainstate.SubmitOptions{Durable: durable})
	if err != nil {
		s.blockError(w, raw, err)
		return
	}
	s.metrics.blocks.WithLabelValues(string(res.Status)).Inc()
	s.log.Debug("block processed", "hash", res.Hash, "height", res.Height, "status", res.Status, "durable", res.Durable, "seconds", time.Since(start).Seconds())
	if durable && r.URL.Query().Get("durable") == "" {
		w.Header().Set("Preference-Applied", "durable")
	}
	writeJSON(w, http.StatusOK, BlockResult{Hash: res.Hash.String(), Height: res.Height, Status: string(res.Status),
		FlushedHeight: res.Flushed.Height, FlushedHash: res.Flushed.Hash.String(), Durable: res.Durable})
}

// durableRequest reads a submission's wish for a durable answer: the query
// parameter durable (a boolean; it wins over the header) or the RFC 7240
// preference "Prefer: durable". ok is false for a malformed parameter.
func durableRequest(r *http.Request) (durable, ok bool) {
	if q := r.URL.Query(); q.Has("durable") {
		v, err := strconv.ParseBool(q.Get("durable"))
		return v, err == nil
	}
	for _, h := range r.Header.Values("Prefer") {
		for _, pref := range strings.Split(h, ",") {
			name, _, _ := strings.Cut(pref, ";")
			name, _, _ = strings.Cut(name, "=")
			if strings.EqualFold(strings.TrimSpace(name), "durable") {
				return true, true
			}
		}
	}
	return false, true
}

func tooLargeDetail(isHex bool) string {
	if isHex {
		return fmt.Sprintf("hex body above %d hex digits (the %d-byte consensus maximum)", MaxBlockHexChars, MaxBlockBytes)
	}
	return fmt.Sprintf("body above the %d-byte consensus maximum block size", MaxBlockBytes)
}

// decodeHexBody strips ASCII whitespace and decodes hex. On failure it
// returns a reason and detail.
func decodeHexBody(body []byte) (raw []byte, reason, detail string) {
	digits := make([]byte, 0, len(body))
	for _, c := range body {
		switch c {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			continue
		}
		digits = append(digits, c)
	}
	if len(digits) > MaxBlockHexChars {
		return nil, "body-too-large", tooLargeDetail(true)
	}
	if len(digits)%2 != 0 {
		return nil, "bad-hex", "odd number of hex digits"
	}
	raw = make([]byte, len(digits)/2)
	if _, err := hex.Decode(raw, digits); err != nil {
		var ie hex.InvalidByteError
		if errors.As(err, &ie) {
			return nil, "bad-hex", fmt.Sprintf("invalid hex character %q", rune(ie))
		}
		return nil, "bad-hex", "invalid hex"
	}
	return raw, "", ""
}

// blockError renders a Submit failure.
func (s *Server) blockError(w http.ResponseWriter, raw []byte, err error) {
	hash := "unknown"
	if len(raw) >= wire.HeaderSize {
		hash = wire.DoubleSHA256(raw[:wire.HeaderSize]).String()
	}
	var re *validate.RuleError
	switch {
	case errors.Is(err, chainstate.ErrClosed):
		writeProblem(w, http.StatusServiceUnavailable, "shutting-down", "the server is shutting down")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		writeProblem(w, http.StatusServiceUnavailable, "cancelled", "request cancelled while queued")
	case errors.Is(err, chainstate.ErrParse):
		s.metrics.rejects.WithLabelValues("block-decode-failed").Inc()
		writeProblem(w, http.StatusBadRequest, "block-decode-failed", "the body is not a serialized block: "+err.Error())
	case errors.As(err, &re):
		s.metrics.rejects.WithLabelValues(re.Reason).Inc()
		s.log.Info("block rejected", "hash", hash, "reason", re.Reason, "detail", re.Detail)
		detail := re.Detail
		if detail == "" {
			detail = re.Reason
		}
		writeProblem(w, http.StatusUnprocessableEntity, re.Reason, "block "+hash+": "+detail)
	case errors.Is(err, backends.ErrDiskFull):
		s.log.Error("processing block: disk full", "hash", hash, "err", err)
		writeDiskFull(w, "block "+hash+" could not be saved")
	case errors.Is(err, chainstate.ErrNeedHeaders):
		writeProblem(w, http.StatusConflict, "need-headers", err.Error())
	case errors.Is(err, chainstate.ErrOrphanPoolFull):
		writeProblem(w, http.StatusServiceUnavailable, "orphan-pool-full", "too many orphan blocks are waiting for their parents; submit the parents first")
	default:
		s.log.Error("processing block failed", "hash", hash, "err", err)
		writeProblem(w, http.StatusInternalServerError, "internal", "processing the block failed; see the server log")
	}
}

// BlockInfo is a block-index entry.
type BlockInfo struct {
	Hash string `json:"hash" example:"00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048"`
	// Height is -1 for orphans (parent unknown).
	Height int32 `json:"height" example:"1"`
	// Status: valid (block data passed validation), invalid (the block or an
	// ancestor failed), header-only (header accepted, data not validated:
	// e.g. a stored side branch or a mutated body), orphan (parent unknown).
	Status string `json:"status" enums:"valid,invalid,header-only,orphan" example:"valid"`
	// Flags are the raw block-index status flags.
	Flags             string `json:"flags,omitempty" example:"header-valid|data-valid"`
	InActiveChain     bool   `json:"in_active_chain" example:"true"`
	Confirmations     int32  `json:"confirmations" example:"14131"`
	ChainWork         string `json:"chainwork,omitempty" example:"0000000000000000000000000000000000000000000000000000000200020002"`
	PreviousBlockHash string `json:"previousblockhash,omitempty" example:"000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f"`
	NextBlockHash     string `json:"nextblockhash,omitempty" example:"000000006a625f06636b8bb6ac7b960a8d03705d1ace08b1a19da3fdcc99ddbd"`
	RejectReason      string `json:"reject_reason,omitempty" example:"bad-cb-amount"`
	Version           int32  `json:"version" example:"1"`
	MerkleRoot        string `json:"merkleroot,omitempty" example:"0e3e2357e806b6cdb1f70b54c3a3a17b6714ee1f0e68bebb44a74b1efd512098"`
	Time              uint32 `json:"time" example:"1231469665"`
	Bits              string `json:"bits,omitempty" example:"1d00ffff"`
	Nonce             uint32 `json:"nonce" example:"2573394689"`
	// Tip is the active tip the entry was read at (confirmations count to it).
	Tip TipRef `json:"tip"`
}

// blockInfo describes n.
func blockInfo(n chainstate.BlockInfo) BlockInfo {
	bi := BlockInfo{
		Hash:          n.Hash.String(),
		Height:        n.Height,
		Flags:         n.Status.String(),
		Confirmations: -1,
		ChainWork:     n.ChainWork.String(),
		Version:       n.Header.Version,
		MerkleRoot:    n.Header.MerkleRoot.String(),
		Time:          n.Header.Time,
		Bits:          fmt.Sprintf("%08x", n.Header.Bits),
		Nonce:         n.Header.Nonce,
		Tip:           tipRef(n.TipHash, n.TipHeight),
	}
	switch {
	case n.Status.Invalid():
		bi.Status = "invalid"
		bi.RejectReason = n.RejectReason
		if bi.RejectReason == "" && n.Status.Has(validate.StatusFailedParent) {
			bi.RejectReason = "bad-prevblk"
		}
	case n.Status.Has(validate.StatusDataValid) || n.Status.Has(validate.StatusConnected):
		bi.Status = "valid"
	default:
		bi.Status = "header-only"
	}
	if n.Height > 0 {
		bi.PreviousBlockHash = n.Header.PrevBlock.String()
	}
	if n.InActiveChain {
		bi.InActiveChain = true
		bi.Confirmations = n.TipHeight - n.Height + 1
		if n.Next != (wire.Hash{}) {
			bi.NextBlockHash = n.Next.String()
		}
	}
	return bi
}

// hex64 is Core's uint256 GetHex of a non-negative big integer.
func hex64(x *big.Int) string {
	if x == nil {
		return ""
	}
	return fmt.Sprintf("%064x", x)
}

// handleGetBlock godoc
//
//	@Summary		Block-index entry by hash
//	@Description	Status valid, invalid (with Core's reject reason), header-only or orphan.
//	@Tags			blocks
//	@Produce		json
//	@Param			hash	path		string	true	"block hash (64 hex digits, display order)"
//	@Success		200		{object}	BlockInfo
//	@Failure		400		{object}	Problem	"malformed hash"
//	@Failure		404		{object}	Problem	"unknown block"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/v1/blocks/{hash} [get]
func (s *Server) handleGetBlock(w http.ResponseWriter, r *http.Request) {
	hs := chi.URLParam(r, "hash")
	hash, err := wire.ParseHash(hs)
	if err != nil {
		writeProblem(w, http.StatusBadRequest, "bad-hash", "block hash must be 64 hex digits")
		return
	}
	switch n, ok := s.chain.Lookup(hash); {
	case ok && n.Orphan:
		tip := s.chain.Tip()
		answeredAt(r, tip.Hash, tip.Height)
		w.Header().Set("Cache-Control", blockCacheControl(n))
		writeJSON(w, http.StatusOK, BlockInfo{Hash: hash.String(), Height: -1, Status: "orphan", Confirmations: -1,
			PreviousBlockHash: n.Header.PrevBlock.String(), Tip: tipRef(tip.Hash, tip.Height)})
	case ok:
		answeredAtBlock(r, n)
		w.Header().Set("Cache-Control", blockCacheControl(n))
		writeJSON(w, http.StatusOK, blockInfo(n))
	default:
		writeProblem(w, http.StatusNotFound, "block-not-found", "block "+hash.String()+" is unknown")
	}
}

// handleTip godoc
//
//	@Summary		Active chain tip
//	@Description	The tip's block-index entry, and the tip of the state on disk (flushed_height, flushed_hash), where a crash reopens the node.
//	@Tags			blocks
//	@Produce		json
//	@Success		200	{object}	TipInfo
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/v1/tip [get]
func (s *Server) handleTip(w http.ResponseWriter, r *http.Request) {
	tip, f := s.chain.Tip(), s.chain.Flushed()
	answeredAtBlock(r, tip)
	writeJSON(w, http.StatusOK, TipInfo{BlockInfo: blockInfo(tip), FlushedHeight: f.Height, FlushedHash: f.Hash.String()})
}

// TipInfo is the /v1/tip answer: the tip's BlockInfo and the flushed tip.
type TipInfo struct {
	BlockInfo
	// FlushedHeight is the height of the tip of the chain state on disk
	// (the last flush's): a crash reopens the node there.
	FlushedHeight int32 `json:"flushed_height" example:"1"`
	// FlushedHash is the hash of that tip.
	FlushedHash string `json:"flushed_hash" example:"00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048"`
}

// handleBlockAtHeight godoc
//
//	@Summary	Active-chain block at a height
//	@Tags		blocks
//	@Produce	json
//	@Param		height	path		integer	true	"height (0 = genesis)"
//	@Success	200		{object}	BlockInfo
//	@Failure	400		{object}	Problem	"malformed height"
//	@Failure	404		{object}	Problem	"height above the tip"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router		/v1/blocks/height/{height} [get]
func (s *Server) handleBlockAtHeight(w http.ResponseWriter, r *http.Request) {
	h, err := strconv.ParseInt(chi.URLParam(r, "height"), 10, 32)
	if err != nil || h < 0 {
		writeProblem(w, http.StatusBadRequest, "bad-height", "height must be a non-negative decimal integer")
		return
	}
	n, ok := s.chain.AtHeight(int32(h))
	if !ok {
		writeProblem(w, http.StatusNotFound, "height-out-of-range", fmt.Sprintf("height %d is above the active tip", h))
		return
	}
	answeredAtBlock(r, n)
	writeJSON(w, http.StatusOK, blockInfo(n))
}
