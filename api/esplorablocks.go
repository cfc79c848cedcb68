package api

import (
	"encoding/hex"
	"errors"
	"math"
	"math/big"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"utxod/chainstate"
	"utxod/store"
	"utxod/validate"
	"utxod/wire"
)

// Esplora's block routes (Blockstream/electrs new-index src/rest.rs):
// /block/:hash and its header, raw, txids and txid/:index, and the
// /blocks list. electrs knows the blocks of its best chain (its header
// list) and their metadata; utxod answers from the block index and, where
// a route needs the block itself (the raw bytes, the txids), from the
// block data it keeps: the last 288 blocks, every block with --archive.
// Without the data such a route answers electrs' 404 "Block not found";
// /header, /status and /block-height need only the index, and so do
// /block/:hash and /blocks, whose tx_count, size and weight the index
// keeps for every block whose data the node accepted (an index written
// before it kept them: from the block data, as the other routes).

// esploraBlockLimit is electrs' BLOCK_LIMIT: blocks per /blocks page.
const esploraBlockLimit = 10

// EsploraBlock is electrs' BlockValue, fields in its order: hashes in
// display hex, previousblockhash null for genesis, bits nBits as a number,
// difficulty rust-bitcoin's difficulty_float as serde_json writes an f64.
type EsploraBlock struct {
	ID                string  `json:"id" example:"00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048"`
	Height            uint32  `json:"height" example:"1"`
	Version           uint32  `json:"version" example:"1"`
	Timestamp         uint32  `json:"timestamp" example:"1231469665"`
	TxCount           uint32  `json:"tx_count" example:"1"`
	Size              uint32  `json:"size" example:"215"`
	Weight            uint64  `json:"weight" example:"860"`
	MerkleRoot        string  `json:"merkle_root" example:"0e3e2357e806b6cdb1f70b54c3a3a17b6714ee1f0e68bebb44a74b1efd512098"`
	PreviousBlockHash *string `json:"previousblockhash" example:"000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f"`
	MedianTime        uint32  `json:"mediantime" example:"1231469665"`
	Nonce             uint32  `json:"nonce" example:"2573394689"`
	Bits              uint32  `json:"bits" example:"486604799"`
	// Difficulty is a JSON number: 1.0 is written "1.0", as serde_json
	// (ryu) writes an f64.
	Difficulty serdeFloat `json:"difficulty" swaggertype:"number" example:"1"`
}

// rawBlock returns the stored bytes of block hash (genesis from the
// parameters: it is never in the store), or an error wrapping
// store.ErrNoBlock.
func (s *Server) rawBlock(hash wire.Hash) ([]byte, error) {
	if hash == s.params.GenesisHash {
		return s.params.GenesisBlock, nil
	}
	if bs, ok := s.chain.(BlockStore); ok {
		return bs.BlockData(hash)
	}
	return nil, store.ErrNoBlock
}

// esploraActive looks hash up on the active chain, as electrs'
// header_by_hash does; false for any other block.
func (s *Server) esploraActive(hash wire.Hash) (chainstate.BlockInfo, bool) {
	n, ok := s.chain.Lookup(hash)
	return n, ok && !n.Orphan && n.InActiveChain
}

// esploraActiveBlock is the active-chain block the route's {hash} names,
// recorded as the answer's tip; otherwise it writes electrs' 400 or 404.
func (s *Server) esploraActiveBlock(w http.ResponseWriter, r *http.Request) (chainstate.BlockInfo, bool) {
	hash, ok := parseEsploraHash(w, r)
	if !ok {
		return chainstate.BlockInfo{}, false
	}
	n, ok := s.esploraActive(hash)
	if !ok {
		writeEsploraError(w, http.StatusNotFound, "Block not found")
		return chainstate.BlockInfo{}, false
	}
	answeredAtBlock(r, n)
	return n, true
}

// esploraBlockData reads and parses the data of n, writing electrs' 404
// (or a 500) when it cannot.
func (s *Server) esploraBlockData(w http.ResponseWriter, n chainstate.BlockInfo) (*wire.Block, bool) {
	raw, err := s.rawBlock(n.Hash)
	if err == nil {
		var b *wire.Block
		if b, err = wire.ParseBlock(raw); err == nil {
			return b, true
		}
	}
	if errors.Is(err, store.ErrNoBlock) {
		writeEsploraError(w, http.StatusNotFound, "Block not found")
		return nil, false
	}
	s.log.Error("reading block data", "hash", n.Hash, "err", err)
	writeEsploraError(w, http.StatusInternalServerError, "I/O error reading block "+n.Hash.String())
	return nil, false
}

// esploraStats are n's tx_count, size and weight: from the block index,
// else from the block data (false, with electrs' 404 or a 500 written,
// without either).
func (s *Server) esploraStats(w http.ResponseWriter, n chainstate.BlockInfo) (validate.BlockStats, bool) {
	if n.Stats != (validate.BlockStats{}) {
		return n.Stats, true
	}
	b, ok := s.esploraBlockData(w, n)
	if !ok {
		return validate.BlockStats{}, false
	}
	return validate.StatsOf(b), true
}

// esploraBlockValue is electrs' BlockValue::new for n with its stats.
func esploraBlockValue(n chainstate.BlockInfo, st validate.BlockStats) EsploraBlock {
	v := EsploraBlock{
		ID:         n.Hash.String(),
		Height:     uint32(n.Height),
		Version:    uint32(n.Header.Version),
		Timestamp:  n.Header.Time,
		TxCount:    st.TxCount,
		Size:       st.Size,
		Weight:     uint64(st.Weight),
		MerkleRoot: n.Header.MerkleRoot.String(),
		MedianTime: uint32(n.MedianTime),
		Nonce:      n.Header.Nonce,
		Bits:       n.Header.Bits,
		Difficulty: serdeFloat(difficultyFloat(n.Header.Bits)),
	}
	if n.Header.PrevBlock != (wire.Hash{}) {
		p := n.Header.PrevBlock.String()
		v.PreviousBlockHash = &p
	}
	return v
}

// targetMaxF64 is rust-bitcoin's TARGET_MAX_F64: the largest target
// (0xffff·2^208) as an f64.
const targetMaxF64 = 2.695953529101131e67

// difficultyFloat is rust-bitcoin's Header::difficulty_float:
// TARGET_MAX_F64 divided by the target of bits (Target::from_compact) as
// the nearest f64 (U256::to_f64 rounds to nearest, ties to even, as
// big.Float does). Unlike Core's GetDifficulty it divides once, so the two
// can differ in the last bit.
func difficultyFloat(bits uint32) float64 {
	mant, exp := bits&0xffffff, bits>>24
	t := new(big.Int)
	if mant <= 0x7fffff {
		if exp <= 3 {
			t.SetUint64(uint64(mant >> (8 * (3 - exp))))
		} else {
			t.Lsh(t.SetUint64(uint64(mant)), uint(8*(exp-3)))
		}
	}
	f, _ := new(big.Float).SetInt(t).Float64()
	return targetMaxF64 / f
}

// serdeFloat encodes an f64 as serde_json does (the ryu crate's shortest
// round-trip digits): "1.0", "0.001234", "4.656542373906925e-10",
// "1e21"; null when not finite.
type serdeFloat float64

// MarshalJSON implements json.Marshaler.
func (f serdeFloat) MarshalJSON() ([]byte, error) {
	return appendSerdeFloat(nil, float64(f)), nil
}

func appendSerdeFloat(dst []byte, v float64) []byte {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return append(dst, "null"...)
	case v == 0:
		if math.Signbit(v) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	// Shortest digits d1d2…dn and exponent e with v = 0.d1…dn × 10^kk.
	sci := strconv.FormatFloat(v, 'e', -1, 64) // d.ddde±xx
	mant, expStr, _ := cutByte(sci, 'e')
	digits := mant[:1]
	if len(mant) > 2 {
		digits += mant[2:]
	}
	e, _ := strconv.Atoi(expStr)
	length, kk := len(digits), e+1
	k := kk - length // v = digits × 10^k
	switch {
	case k >= 0 && kk <= 16: // 1234e7 → 12340000000.0
		dst = append(dst, digits...)
		for range k {
			dst = append(dst, '0')
		}
		return append(dst, ".0"...)
	case kk > 0 && kk <= 16: // 1234e-2 → 12.34
		dst = append(dst, digits[:kk]...)
		dst = append(dst, '.')
		return append(dst, digits[kk:]...)
	case kk > -5 && kk <= 0: // 1234e-6 → 0.001234
		dst = append(dst, "0."...)
		for range -kk {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	case length == 1: // 1e30
		dst = append(dst, digits...)
	default: // 1234e30 → 1.234e33
		dst = append(dst, digits[0], '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'e')
	return strconv.AppendInt(dst, int64(kk-1), 10)
}

func cutByte(s string, c byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// parseEsploraHash is electrs' BlockHash::from_str with its 400.
func parseEsploraHash(w http.ResponseWriter, r *http.Request) (wire.Hash, bool) {
	h, err := wire.ParseHash(chi.URLParam(r, "hash"))
	if err != nil {
		writeEsploraError(w, http.StatusBadRequest, "Invalid hex string")
		return h, false
	}
	return h, true
}

// handleEsploraBlock godoc
//
//	@Summary		Esplora: a block
//	@Description	electrs' BlockValue of an active-chain block (fields in electrs' order; difficulty as serde_json writes an f64). tx_count, size and weight come from the block index, which keeps them for every block whose data the node accepted, so pruned blocks answer too; a block whose index entry was written before utxod kept them needs its data (404 without it).
//	@Tags			esplora
//	@Produce		json
//	@Param			hash	path		string	true	"block hash (64 hex digits)"
//	@Success		200		{object}	EsploraBlock
//	@Failure		400		{string}	string	"Invalid hex string"
//	@Failure		404		{string}	string	"Block not found"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/api/block/{hash} [get]
func (s *Server) handleEsploraBlock(w http.ResponseWriter, r *http.Request) {
	n, ok := s.esploraActiveBlock(w, r)
	if !ok {
		return
	}
	st, ok := s.esploraStats(w, n)
	if !ok {
		return
	}
	writeEsploraJSONCached(w, esploraBlockValue(n, st), blockCacheControl(n))
}

// handleEsploraBlockHeader godoc
//
//	@Summary		Esplora: a block's header
//	@Description	The 80-byte header of an active-chain block in hex, plain text without a newline. Needs only the block index.
//	@Tags			esplora
//	@Produce		plain
//	@Param			hash	path		string	true	"block hash (64 hex digits)"
//	@Success		200		{string}	string	"header hex"
//	@Failure		400		{string}	string	"Invalid hex string"
//	@Failure		404		{string}	string	"Block not found"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/api/block/{hash}/header [get]
func (s *Server) handleEsploraBlockHeader(w http.ResponseWriter, r *http.Request) {
	n, ok := s.esploraActiveBlock(w, r)
	if !ok {
		return
	}
	writeEsploraCached(w, "text/plain", []byte(hex.EncodeToString(n.Header.AppendTo(nil))), blockCacheControl(n))
}

// handleEsploraBlockRaw godoc
//
//	@Summary		Esplora: a block's raw bytes
//	@Description	The serialized block (application/octet-stream) of an active-chain block whose data is kept.
//	@Tags			esplora
//	@Produce		octet-stream
//	@Param			hash	path		string	true	"block hash (64 hex digits)"
//	@Success		200		{string}	string	"the block"
//	@Failure		400		{string}	string	"Invalid hex string"
//	@Failure		404		{string}	string	"Block not found"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/api/block/{hash}/raw [get]
func (s *Server) handleEsploraBlockRaw(w http.ResponseWriter, r *http.Request) {
	n, ok := s.esploraActiveBlock(w, r)
	if !ok {
		return
	}
	b, ok := s.esploraBlockData(w, n)
	if !ok {
		return
	}
	writeEsploraCached(w, "application/octet-stream", b.Raw, blockCacheControl(n))
}

// esploraTxids returns the txids of a known block whose data is kept
// (electrs keeps the txids of every block it indexed, stale ones too).
func (s *Server) esploraTxids(w http.ResponseWriter, r *http.Request) ([]string, chainstate.BlockInfo, bool) {
	hash, ok := parseEsploraHash(w, r)
	if !ok {
		return nil, chainstate.BlockInfo{}, false
	}
	n, ok := s.chain.Lookup(hash)
	if !ok || n.Orphan {
		writeEsploraError(w, http.StatusNotFound, "Block not found")
		return nil, n, false
	}
	answeredAtBlock(r, n)
	b, ok := s.esploraBlockData(w, n)
	if !ok {
		return nil, n, false
	}
	txids := make([]string, len(b.Txs))
	for i := range b.Txs {
		txids[i] = b.Txs[i].TxID.String()
	}
	return txids, n, true
}

// handleEsploraBlockTxids godoc
//
//	@Summary		Esplora: a block's txids
//	@Description	Every txid of the block, in block order, as a JSON array; the block's data must be kept.
//	@Tags			esplora
//	@Produce		json
//	@Param			hash	path		string	true	"block hash (64 hex digits)"
//	@Success		200		{array}		string
//	@Failure		400		{string}	string	"Invalid hex string"
//	@Failure		404		{string}	string	"Block not found"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/api/block/{hash}/txids [get]
func (s *Server) handleEsploraBlockTxids(w http.ResponseWriter, r *http.Request) {
	txids, n, ok := s.esploraTxids(w, r)
	if !ok {
		return
	}
	writeEsploraJSONCached(w, txids, blockCacheControl(n))
}

// handleEsploraBlockTxid godoc
//
//	@Summary		Esplora: the txid at a position of a block
//	@Description	Plain text without a newline. 400 "Invalid number" for an index that is not a decimal integer, 404 "tx index out of range" past the last transaction.
//	@Tags			esplora
//	@Produce		plain
//	@Param			hash	path		string	true	"block hash (64 hex digits)"
//	@Param			index	path		string	true	"transaction index (0 = coinbase)"
//	@Success		200		{string}	string	"txid"
//	@Failure		400		{string}	string	"Invalid hex string or Invalid number"
//	@Failure		404		{string}	string	"Block not found or tx index out of range"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/api/block/{hash}/txid/{index} [get]
func (s *Server) handleEsploraBlockTxid(w http.ResponseWriter, r *http.Request) {
	if _, err := wire.ParseHash(chi.URLParam(r, "hash")); err != nil {
		writeEsploraError(w, http.StatusBadRequest, "Invalid hex string")
		return
	}
	i, ok := parseUsize(chi.URLParam(r, "index"))
	if !ok {
		writeEsploraError(w, http.StatusBadRequest, "Invalid number")
		return
	}
	txids, n, ok := s.esploraTxids(w, r)
	if !ok {
		return
	}
	if i >= uint64(len(txids)) {
		writeEsploraError(w, http.StatusNotFound, "tx index out of range")
		return
	}
	writeEsploraCached(w, "text/plain", []byte(txids[i]), blockCacheControl(n))
}

// handleEsploraBlocksTip godoc
//
//	@Summary		Esplora: the ten blocks down from the tip
//	@Description	As /api/blocks/{start_height} from the tip (electrs' GET /blocks).
//	@Tags			esplora
//	@Produce		json
//	@Success		200	{array}		EsploraBlock
//	@Failure		404	{string}	string	"Block not found"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/api/blocks [get]
func (s *Server) handleEsploraBlocksTip(w http.ResponseWriter, r *http.Request) {
	s.handleEsploraBlocks(w, r)
}

// handleEsploraBlocks godoc
//
//	@Summary		Esplora: ten blocks down from a height
//	@Description	electrs' BlockValue of up to 10 active-chain blocks, from start_height down toward genesis; a start_height that is not a decimal integer means the tip, as in electrs (so /api/blocks/tip is the list from the tip). 404 "Block not found" above the tip. tx_count, size and weight come from the block index; the list stops before the first block whose index entry lacks them (written before utxod kept them) and whose data is no longer kept (404 when that is the first).
//	@Tags			esplora
//	@Produce		json
//	@Param			start_height	path		string	true	"height of the first block"
//	@Success		200				{array}		EsploraBlock
//	@Failure		404				{string}	string	"Block not found"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/api/blocks/{start_height} [get]
func (s *Server) handleEsploraBlocks(w http.ResponseWriter, r *http.Request) {
	h, fromHeight := parseUsize(chi.URLParam(r, "start_height"))
	for range lookupRetries {
		tip := s.chain.Tip()
		start := tip
		if fromHeight {
			n, ok := s.chain.AtHeight(int32(min(h, math.MaxInt32)))
			if h > uint64(tip.Height) || !ok {
				writeEsploraError(w, http.StatusNotFound, "Block not found")
				return
			}
			start = n
		}
		out, whole, err := s.esploraBlockList(start)
		if err != nil {
			s.log.Error("reading block data", "err", err)
			writeEsploraError(w, http.StatusInternalServerError, "I/O error reading block data")
			return
		}
		if !whole {
			continue // a reorganisation replaced blocks of the list
		}
		if len(out) == 0 {
			writeEsploraError(w, http.StatusNotFound, "Block not found")
			return
		}
		answeredAtTip(r, start.TipHash, start.TipHeight)
		writeEsploraJSON(w, out, ttlShort)
		return
	}
	writeEsploraError(w, http.StatusServiceUnavailable, errTipMoved.Error())
}

// esploraBlockList is electrs' blocks(): up to esploraBlockLimit blocks
// from start down its ancestry, ending before the first without stats in
// the index or kept data. whole is false when the active chain no longer links them.
func (s *Server) esploraBlockList(start chainstate.BlockInfo) (out []EsploraBlock, whole bool, err error) {
	out = make([]EsploraBlock, 0, esploraBlockLimit)
	want := start.Hash
	for h := start.Height; h >= 0 && len(out) < esploraBlockLimit; h-- {
		n, ok := s.chain.AtHeight(h)
		if !ok || n.Hash != want {
			return nil, false, nil
		}
		st := n.Stats
		if st == (validate.BlockStats{}) { // an entry written without them
			raw, err := s.rawBlock(n.Hash)
			if errors.Is(err, store.ErrNoBlock) {
				break
			}
			if err != nil {
				return nil, false, err
			}
			b, err := wire.ParseBlock(raw)
			if err != nil {
				return nil, false, err
			}
			st = validate.StatsOf(b)
		}
		out = append(out, esploraBlockValue(n, st))
		want = n.Header.PrevBlock
	}
	return out, true, nil
}
