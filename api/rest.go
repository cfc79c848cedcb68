package api

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"utxod/chainstate"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// This file serves Bitcoin Core's REST interface (src/rest.cpp,
// doc/REST-interface.md) for the parts utxod can answer: chaininfo,
// getutxos (BIP64), blockhashbyheight, headers, block (restblock.go),
// spenttxouts and blockpart (restundo.go). Successful answers match
// Core byte for byte (bin, hex) and field for field (json). Errors keep
// Core's status codes and carry Core's message as the problem detail.

// Core's limits.
const (
	maxGetUTXOsOutpoints = 15
	maxRESTHeaders       = 2000
	maxGetUTXOsBody      = 1 << 16
)

type restFormat int

const (
	fmtUndef restFormat = iota
	fmtBin
	fmtHex
	fmtJSON
)

// parseDataFormat is Core's ParseDataFormat: split a trailing .bin, .hex or
// .json off param.
func parseDataFormat(s string) (string, restFormat) {
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

// restError renders a Core REST error (RESTERR) as problem+json.
func restError(w http.ResponseWriter, status int, reason, msg string) {
	writeProblem(w, status, reason, msg)
}

// restPrefixes is Core's uri_prefixes table restricted to what utxod
// serves, in Core's order.
var restPrefixes = []struct {
	prefix string
	fn     func(s *Server, w http.ResponseWriter, r *http.Request, rest string)
}{
	{"/rest/block/notxdetails/", (*Server).restBlockNoTxDetails},
	{"/rest/block/", (*Server).restBlock},
	{"/rest/blockpart/", (*Server).restBlockPart},
	{"/rest/chaininfo", (*Server).restChainInfo},
	{"/rest/headers/", (*Server).restHeaders},
	{"/rest/getutxos", (*Server).restGetUTXOs},
	{"/rest/blockhashbyheight/", (*Server).restBlockHashByHeight},
	{"/rest/spenttxouts/", (*Server).restSpentTxOuts},
}

// handleREST dispatches /rest/... by prefix like Core's HTTP server.
func (s *Server) handleREST(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	for _, p := range restPrefixes {
		if strings.HasPrefix(path, p.prefix) {
			p.fn(s, w, r, path[len(p.prefix):])
			return
		}
	}
	restError(w, http.StatusNotFound, "not-found", "REST endpoint not served by utxod (available: block, block/notxdetails, blockpart, chaininfo, headers, getutxos, blockhashbyheight, spenttxouts)")
}

// ChainInfo is Core's getblockchaininfo object (Core 29 field set) as
// served by /rest/chaininfo.json.
type ChainInfo struct {
	Chain                string    `json:"chain" example:"main"`
	Blocks               int32     `json:"blocks" example:"14131"`
	Headers              int32     `json:"headers" example:"14131"`
	BestBlockHash        string    `json:"bestblockhash" example:"00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c"`
	Bits                 string    `json:"bits" example:"1d00ffff"`
	Target               string    `json:"target" example:"00000000ffff0000000000000000000000000000000000000000000000000000"`
	Difficulty           coreFloat `json:"difficulty" swaggertype:"number" example:"1"`
	Time                 int64     `json:"time" example:"1242110617"`
	MedianTime           int64     `json:"mediantime" example:"1242107283"`
	VerificationProgress coreFloat `json:"verificationprogress" swaggertype:"number" example:"0.03"`
	InitialBlockDownload bool      `json:"initialblockdownload" example:"true"`
	ChainWork            string    `json:"chainwork" example:"0000000000000000000000000000000000000000000000000000372037203720"`
	SizeOnDisk           int64     `json:"size_on_disk" example:"0"`
	Pruned               bool      `json:"pruned" example:"false"`
	Warnings             []string  `json:"warnings"`
}

// coreFloat encodes like UniValue's double (precision 16, %g style).
type coreFloat float64

// MarshalJSON implements json.Marshaler.
func (f coreFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', 16, 64), nil
}

// chainName is Core's GetChainTypeString.
func chainName(network string) string {
	switch network {
	case "main", "mainnet":
		return "main"
	case "testnet3", "testnet", "test":
		return "test"
	}
	return network
}

// difficulty is Core's GetDifficulty.
func difficulty(bits uint32) float64 {
	shift := int(bits>>24) & 0xff
	d := float64(0x0000ffff) / float64(bits&0x00ffffff)
	for ; shift < 29; shift++ {
		d *= 256
	}
	for ; shift > 29; shift-- {
		d /= 256
	}
	return d
}

// targetHex is Core's GetTarget(...).GetHex(): the 256-bit target of bits.
func targetHex(bits uint32) string {
	t, neg, over := validate.CompactToBig(bits)
	if neg || over || t == nil {
		return strings.Repeat("0", 64)
	}
	return hex64(t)
}

// maxTipAge is Core's DEFAULT_MAX_TIP_AGE.
const maxTipAge = 24 * time.Hour

// chainInfo builds the getblockchaininfo object.
func (s *Server) chainInfo() ChainInfo {
	tip := s.chain.Tip()
	now := s.now()
	ci := ChainInfo{
		Chain:         chainName(s.params.Name),
		Blocks:        tip.Height,
		Headers:       s.chain.BestHeader().Height, // Core: m_best_header (headers-first import learns them ahead)
		BestBlockHash: tip.Hash.String(),
		Bits:          fmt.Sprintf("%08x", tip.Header.Bits),
		Target:        targetHex(tip.Header.Bits),
		Difficulty:    coreFloat(difficulty(tip.Header.Bits)),
		Time:          int64(tip.Header.Time),
		MedianTime:    tip.MedianTime,
		ChainWork:     tip.ChainWork.String(),
		SizeOnDisk:    s.sizeOnDisk(),
		Warnings:      []string{},
	}
	ci.InitialBlockDownload = time.Unix(int64(tip.Header.Time), 0).Before(now.Add(-maxTipAge))
	if g, ok := s.chain.AtHeight(0); ok {
		span := float64(now.Unix() - int64(g.Header.Time))
		done := float64(int64(tip.Header.Time) - int64(g.Header.Time))
		if span > 0 {
			ci.VerificationProgress = coreFloat(math.Max(0, math.Min(1, done/span)))
		}
	}
	return ci
}

// restChainInfo godoc
//
//	@Summary		Chain state (Core's getblockchaininfo)
//	@Description	Bitcoin Core REST /rest/chaininfo.json. headers is the best header's height (above blocks after a headers-first import that has not connected every block); verificationprogress is estimated from the tip's timestamp; size_on_disk is the datadir size (0 in memory).
//	@Tags			core-rest
//	@Produce		json
//	@Success		200	{object}	ChainInfo
//	@Failure		404	{object}	Problem	"format other than .json"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/rest/chaininfo.json [get]
func (s *Server) restChainInfo(w http.ResponseWriter, r *http.Request, rest string) {
	if _, f := parseDataFormat(rest); f != fmtJSON {
		restError(w, http.StatusNotFound, "format-not-found", "output format not found (available: json)")
		return
	}
	ci := s.chainInfo()
	if h, err := wire.ParseHash(ci.BestBlockHash); err == nil {
		answeredAt(r, h, ci.Blocks)
	}
	writeJSON(w, http.StatusOK, ci)
}

// parseHashStr is Core's ParseHashStr: exactly 64 hex digits.
func parseHashStr(s string) (wire.Hash, bool) {
	h, err := wire.ParseHash(s)
	return h, err == nil
}

// BlockHeader is Core's blockheaderToJSON (Core 29 fields). nTx is the
// block's transaction count once its data was accepted, 0 for a header
// alone, as Core's CBlockIndex::nTx.
type BlockHeader struct {
	Hash              string    `json:"hash"`
	Confirmations     int32     `json:"confirmations"`
	Height            int32     `json:"height"`
	Version           int32     `json:"version"`
	VersionHex        string    `json:"versionHex"`
	MerkleRoot        string    `json:"merkleroot"`
	Time              uint32    `json:"time"`
	MedianTime        int64     `json:"mediantime"`
	Nonce             uint32    `json:"nonce"`
	Bits              string    `json:"bits"`
	Target            string    `json:"target"`
	Difficulty        coreFloat `json:"difficulty" swaggertype:"number"`
	ChainWork         string    `json:"chainwork"`
	NTx               uint32    `json:"nTx"`
	PreviousBlockHash string    `json:"previousblockhash,omitempty"`
	NextBlockHash     string    `json:"nextblockhash,omitempty"`
}

// restHeaders godoc
//
//	@Summary		Block headers upward from a block (Core REST)
//	@Description	Bitcoin Core REST /rest/headers/{hash}.{bin|hex|json}?count=N (default 5, 1-2000); the deprecated /rest/headers/{count}/{hash}.{ext} form is served too. Empty when the block is unknown or not on the active chain. bin is the 80-byte headers concatenated; hex is that in hex plus a newline. JSON nTx is 0 for a block known only by its header, as Core.
//	@Tags			core-rest
//	@Produce		json
//	@Produce		octet-stream
//	@Produce		plain
//	@Param			hashext	path		string	true	"block hash followed by .bin, .hex or .json"
//	@Param			count	query		integer	false	"number of headers (1-2000)"	default(5)
//	@Success		200		{array}		BlockHeader
//	@Failure		400		{object}	Problem	"bad count or hash"
//	@Failure		404		{object}	Problem	"unknown format"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/rest/headers/{hashext} [get]
func (s *Server) restHeaders(w http.ResponseWriter, r *http.Request, rest string) {
	param, f := parseDataFormat(rest)
	parts := strings.Split(param, "/")
	var rawCount, hashStr string
	switch len(parts) {
	case 2:
		rawCount, hashStr = parts[0], parts[1]
	case 1:
		hashStr = parts[0]
		rawCount = "5"
		if q := r.URL.Query(); q.Has("count") {
			rawCount = q.Get("count")
		}
	default:
		restError(w, http.StatusBadRequest, "bad-uri", "Invalid URI format. Expected /rest/headers/<hash>.<ext>?count=<count>")
		return
	}
	count, err := strconv.ParseUint(rawCount, 10, 64)
	if err != nil || count < 1 || count > maxRESTHeaders {
		restError(w, http.StatusBadRequest, "bad-count", fmt.Sprintf("Header count is invalid or out of acceptable range (1-%d): %s", maxRESTHeaders, rawCount))
		return
	}
	hash, ok := parseHashStr(hashStr)
	if !ok {
		restError(w, http.StatusBadRequest, "bad-hash", "Invalid hash: "+hashStr)
		return
	}
	if f == fmtUndef {
		restError(w, http.StatusNotFound, "format-not-found", availableFormats)
		return
	}
	headers := s.chain.ActiveFrom(hash, int(count))
	if len(headers) > 0 {
		last := headers[len(headers)-1]
		answeredAtTip(r, last.TipHash, last.TipHeight)
		if len(headers) < int(count) {
			last.InActiveChain = false // more headers may follow: not final
		}
		w.Header().Set("Cache-Control", blockCacheControl(last))
	}
	switch f {
	case fmtBin, fmtHex:
		buf := make([]byte, 0, len(headers)*wire.HeaderSize)
		for _, h := range headers {
			buf = h.Header.AppendTo(buf)
		}
		writeBinOrHex(w, f, buf)
	default:
		out := make([]BlockHeader, 0, len(headers))
		for _, h := range headers {
			out = append(out, headerJSON(h))
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// headerJSON is Core's blockheaderToJSON(tip, n).
func headerJSON(n chainstate.BlockInfo) BlockHeader {
	bh := BlockHeader{
		Hash:          n.Hash.String(),
		Confirmations: -1,
		Height:        n.Height,
		Version:       n.Header.Version,
		VersionHex:    fmt.Sprintf("%08x", uint32(n.Header.Version)),
		MerkleRoot:    n.Header.MerkleRoot.String(),
		Time:          n.Header.Time,
		MedianTime:    n.MedianTime,
		Nonce:         n.Header.Nonce,
		Bits:          fmt.Sprintf("%08x", n.Header.Bits),
		Target:        targetHex(n.Header.Bits),
		Difficulty:    coreFloat(difficulty(n.Header.Bits)),
		ChainWork:     n.ChainWork.String(),
		NTx:           n.Stats.TxCount,
	}
	if n.Height > 0 {
		bh.PreviousBlockHash = n.Header.PrevBlock.String()
	}
	if n.InActiveChain {
		bh.Confirmations = n.TipHeight - n.Height + 1
		if n.Next != (wire.Hash{}) {
			bh.NextBlockHash = n.Next.String()
		}
	}
	return bh
}

// writeBinOrHex writes b raw (application/octet-stream) or as hex plus a
// newline (text/plain), as Core does.
func writeBinOrHex(w http.ResponseWriter, f restFormat, b []byte) {
	if f == fmtBin {
		writeBody(w, http.StatusOK, "application/octet-stream", b)
		return
	}
	out := make([]byte, hex.EncodedLen(len(b))+1)
	hex.Encode(out, b)
	out[len(out)-1] = '\n'
	writeBody(w, http.StatusOK, "text/plain", out)
}

// restBlockHashByHeight godoc
//
//	@Summary		Active-chain block hash at a height (Core REST)
//	@Description	Bitcoin Core REST /rest/blockhashbyheight/{height}.{bin|hex|json}: bin is the 32-byte hash in internal byte order, hex the display-order hex plus a newline, json {"blockhash": ...}.
//	@Tags			core-rest
//	@Produce		json
//	@Produce		octet-stream
//	@Produce		plain
//	@Param			heightext	path		string	true	"height followed by .bin, .hex or .json"
//	@Success		200			{object}	BlockHash
//	@Failure		400			{object}	Problem	"bad height"
//	@Failure		404			{object}	Problem	"height above the tip or unknown format"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/rest/blockhashbyheight/{heightext} [get]
func (s *Server) restBlockHashByHeight(w http.ResponseWriter, r *http.Request, rest string) {
	hs, f := parseDataFormat(rest)
	// Core's ToIntegral<int32_t>: from_chars takes no leading '+'.
	h, err := strconv.ParseInt(hs, 10, 32)
	if err != nil || h < 0 || strings.HasPrefix(hs, "+") {
		restError(w, http.StatusBadRequest, "bad-height", "Invalid height: "+sanitize(hs))
		return
	}
	n, ok := s.chain.AtHeight(int32(h))
	if !ok {
		restError(w, http.StatusNotFound, "height-out-of-range", "Block height out of range")
		return
	}
	answeredAtTip(r, n.TipHash, n.TipHeight)
	switch f {
	case fmtBin:
		writeBody(w, http.StatusOK, "application/octet-stream", n.Hash[:])
	case fmtHex:
		writeBody(w, http.StatusOK, "text/plain", []byte(n.Hash.String()+"\n"))
	case fmtJSON:
		writeJSON(w, http.StatusOK, BlockHash{BlockHash: n.Hash.String()})
	default:
		restError(w, http.StatusNotFound, "format-not-found", availableFormats)
	}
}

// BlockHash is the JSON answer of /rest/blockhashbyheight.
type BlockHash struct {
	BlockHash string `json:"blockhash" example:"000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f"`
}

// sanitize is Core's SanitizeString (SAFE_CHARS_DEFAULT).
func sanitize(s string) string {
	const safe = " abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;-_/:?@()"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(safe, s[i]) >= 0 {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// GetUTXOs is the JSON answer of /rest/getutxos (BIP64).
type GetUTXOs struct {
	ChainHeight  int32         `json:"chainHeight" example:"14131"`
	ChaintipHash wire.Hash     `json:"chaintipHash" swaggertype:"string" example:"00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c"`
	Bitmap       string        `json:"bitmap" example:"10"`
	UTXOs        []GetUTXOsOut `json:"utxos"`
}

// GetUTXOsOut is one unspent output of GetUTXOs.
type GetUTXOsOut struct {
	Height int32 `json:"height" example:"9"`
	// Value is in BTC with eight decimals.
	Value        utxo.Amount  `json:"value" swaggertype:"number" example:"50.00000000"`
	ScriptPubKey ScriptPubKey `json:"scriptPubKey"`
}

// restGetUTXOs godoc
//
//	@Summary		Query unspent outputs (Core REST, BIP64)
//	@Description	Bitcoin Core REST /rest/getutxos[/checkmempool]/{txid}-{n}/....{bin|hex|json}, at most 15 outpoints. utxod has no mempool: checkmempool answers from the chainstate. bin/hex answers are BIP64's layout (int32 height, tip hash, bitmap, CCoin vector) exactly as Core writes them. A bin/hex POST body carries the BIP64 request (bool checkmempool, vector<COutPoint>) instead of URI outpoints.
//	@Tags			core-rest
//	@Produce		json
//	@Produce		octet-stream
//	@Produce		plain
//	@Param			outpoints	path		string	true	"[checkmempool/]txid-n/txid-n... followed by .bin, .hex or .json"
//	@Success		200			{object}	GetUTXOs
//	@Failure		400			{object}	Problem	"parse error, empty request or more than 15 outpoints"
//	@Failure		404			{object}	Problem	"unknown format"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/rest/getutxos/{outpoints} [get]
func (s *Server) restGetUTXOs(w http.ResponseWriter, r *http.Request, rest string) {
	param, f := parseDataFormat(rest)
	var uriParts []string
	if len(param) > 1 {
		uriParts = strings.Split(param[1:], "/")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxGetUTXOsBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			restError(w, http.StatusRequestEntityTooLarge, "body-too-large", "request body too large")
			return
		}
		restError(w, http.StatusBadRequest, "body-read-failed", "reading the request body failed")
		return
	}
	if len(body) == 0 && len(uriParts) == 0 {
		restError(w, http.StatusBadRequest, "empty-request", "Error: empty request")
		return
	}
	inputParsed := false
	var outpoints []utxo.Outpoint
	if len(uriParts) > 0 {
		start := 0
		if uriParts[0] == "checkmempool" {
			start = 1
		}
		for _, part := range uriParts[start:] {
			txidStr, outStr, ok := strings.Cut(part, "-")
			if !ok || strings.Contains(outStr, "-") {
				restError(w, http.StatusBadRequest, "parse-error", "Parse error")
				return
			}
			txid, okHash := parseHashStr(txidStr)
			n, err := strconv.ParseUint(outStr, 10, 32)
			if !okHash || err != nil {
				restError(w, http.StatusBadRequest, "parse-error", "Parse error")
				return
			}
			outpoints = append(outpoints, utxo.Outpoint{Hash: txid, Index: uint32(n)})
		}
		if len(outpoints) == 0 {
			restError(w, http.StatusBadRequest, "empty-request", "Error: empty request")
			return
		}
		inputParsed = true
	}
	switch f {
	case fmtHex, fmtBin:
		if f == fmtHex {
			body = parseHexLenient(body)
		}
		if len(body) > 0 {
			if inputParsed {
				restError(w, http.StatusBadRequest, "parse-error", "Combination of URI scheme inputs and raw post data is not allowed")
				return
			}
			ops, ok := decodeGetUTXOsRequest(body)
			if !ok {
				restError(w, http.StatusBadRequest, "parse-error", "Parse error")
				return
			}
			outpoints = ops
		}
	case fmtJSON:
		if !inputParsed {
			restError(w, http.StatusBadRequest, "empty-request", "Error: empty request")
			return
		}
	default:
		restError(w, http.StatusNotFound, "format-not-found", availableFormats)
		return
	}
	if len(outpoints) > maxGetUTXOsOutpoints {
		restError(w, http.StatusBadRequest, "too-many-outpoints", fmt.Sprintf("Error: max outpoints exceeded (max: %d, tried: %d)", maxGetUTXOsOutpoints, len(outpoints)))
		return
	}

	hits, coins, tip, err := s.chain.Coins(outpoints)
	if err != nil {
		s.log.Error("coin lookup", "err", err)
		restError(w, http.StatusInternalServerError, "internal", "coin lookup failed")
		return
	}
	if r.Method == http.MethodGet {
		answeredAtTip(r, tip.Hash, tip.Height)
	} else {
		answeredAt(r, tip.Hash, tip.Height)
	}
	bitmap := make([]byte, (len(outpoints)+7)/8)
	var bitstr strings.Builder
	for i, hit := range hits {
		if hit {
			bitmap[i/8] |= 1 << (i % 8)
			bitstr.WriteByte('1')
		} else {
			bitstr.WriteByte('0')
		}
	}
	switch f {
	case fmtBin, fmtHex:
		// BIP64: int32 chainHeight, uint256 chainTipHash, vector<uint8>
		// bitmap, vector<CCoin>; CCoin is uint32 nTxVerDummy (0), uint32
		// nHeight, CTxOut (int64 value, script).
		b := binary.LittleEndian.AppendUint32(nil, uint32(tip.Height))
		b = append(b, tip.Hash[:]...)
		b = wire.AppendCompactSize(b, uint64(len(bitmap)))
		b = append(b, bitmap...)
		b = wire.AppendCompactSize(b, uint64(len(coins)))
		for _, c := range coins {
			b = binary.LittleEndian.AppendUint32(b, 0)
			b = binary.LittleEndian.AppendUint32(b, c.Height)
			b = binary.LittleEndian.AppendUint64(b, uint64(c.Value))
			b = wire.AppendCompactSize(b, uint64(len(c.Script)))
			b = append(b, c.Script...)
		}
		writeBinOrHex(w, f, b)
	default:
		ap := s.params
		out := GetUTXOs{ChainHeight: tip.Height, ChaintipHash: tip.Hash, Bitmap: bitstr.String(), UTXOs: make([]GetUTXOsOut, 0, len(coins))}
		for _, c := range coins {
			out.UTXOs = append(out.UTXOs, GetUTXOsOut{Height: int32(c.Height), Value: utxo.Amount(c.Value), ScriptPubKey: describeScript(c.Script, ap)})
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// parseHexLenient is Core's ParseHex: hex digit pairs, optionally
// separated by whitespace; anything else yields an empty result.
func parseHexLenient(b []byte) []byte {
	var out []byte
	for i := 0; ; {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i == len(b) {
			return out
		}
		if i+1 >= len(b) {
			return nil
		}
		var v [1]byte
		if _, err := hex.Decode(v[:], b[i:i+2]); err != nil {
			return nil
		}
		out = append(out, v[0])
		i += 2
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// decodeGetUTXOsRequest decodes BIP64's request: bool checkmempool,
// vector<COutPoint>. Trailing bytes are ignored, as Core does.
func decodeGetUTXOsRequest(b []byte) ([]utxo.Outpoint, bool) {
	if len(b) < 1 {
		return nil, false
	}
	b = b[1:] // checkmempool: no mempool, answered from the chainstate
	n, off, err := wire.ReadCompactSize(b, 0)
	if err != nil || n > uint64(len(b)-off)/36 {
		return nil, false
	}
	b = b[off:]
	ops := make([]utxo.Outpoint, n)
	for i := range ops {
		copy(ops[i].Hash[:], b[:32])
		ops[i].Index = binary.LittleEndian.Uint32(b[32:36])
		b = b[36:]
	}
	return ops, true
}
