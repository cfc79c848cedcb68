package api

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"

	"utxod/descriptor"
	"utxod/scripthash"
	"utxod/utxo"
)

// POST /v1/scan is Core's scantxoutset (rpc/blockchain.cpp) over HTTP: the
// same actions, scan objects and answer fields. One scan runs at a time, as
// in Core; it uses the scripthash index when the datadir has one and scans
// the coin set otherwise.

// Limits of /v1/scan.
const (
	// MaxScanObjects bounds the scan objects of one request.
	MaxScanObjects = 1000
	// MaxScanScripts bounds the scripts they expand to (Core allows ranges
	// of a million; a script and its descriptor take some hundred bytes).
	MaxScanScripts = 100_000
	maxScanBody    = 1 << 20
)

// scanJob is the one scan in progress (Core's g_scan_in_progress).
type scanJob struct {
	mu       sync.Mutex
	running  bool
	cancel   context.CancelFunc
	progress atomic.Int32
}

// reserve claims the one scan slot; cancel is what abort calls.
func (j *scanJob) reserve(cancel context.CancelFunc) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.running {
		return false
	}
	j.running, j.cancel = true, cancel
	j.progress.Store(0)
	return true
}

func (j *scanJob) release() {
	j.mu.Lock()
	j.running, j.cancel = false, nil
	j.progress.Store(0)
	j.mu.Unlock()
}

// abort is Core's "abort": true if a scan will stop.
func (j *scanJob) abort() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.running {
		return false
	}
	j.cancel()
	return true
}

// status is Core's "status": the progress, or false when none runs.
func (j *scanJob) status() (int, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return int(j.progress.Load()), j.running
}

// ScanRequest is scantxoutset's arguments as a JSON object.
type ScanRequest struct {
	// Action is start, status or abort (required).
	Action *string `json:"action" swaggertype:"string" enums:"start,status,abort" example:"start"`
	// ScanObjects (start only): each a descriptor string or
	// {"desc": "...", "range": end | [begin, end]} (default range 1000).
	ScanObjects []json.RawMessage `json:"scanobjects" swaggertype:"array,object"`
}

// ScanUnspent is one unspent output a scan found.
type ScanUnspent struct {
	TxID         string `json:"txid" example:"0e3e2357e806b6cdb1f70b54c3a3a17b6714ee1f0e68bebb44a74b1efd512098"`
	Vout         uint32 `json:"vout" example:"0"`
	ScriptPubKey string `json:"scriptPubKey" example:"76a91411b366edfc0a8b66feebae5c2e25a7b6a5d1cf3188ac"`
	Desc         string `json:"desc" example:"addr(12cbQLTFMXRnSzktFkuoG3eHoMeFtpTu3S)#jx7sf2lv"`
	// Amount is in BTC with eight decimals.
	Amount        utxo.Amount `json:"amount" swaggertype:"number" example:"50.00000000"`
	Coinbase      bool        `json:"coinbase" example:"true"`
	Height        uint32      `json:"height" example:"1"`
	BlockHash     string      `json:"blockhash" example:"00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048"`
	Confirmations uint32      `json:"confirmations" example:"14131"`
}

// ScanResult is scantxoutset's answer to "start".
type ScanResult struct {
	// Success is false when the scan was aborted (the fields then cover
	// the coins visited so far).
	Success bool `json:"success" example:"true"`
	// TxOuts is the number of unspent outputs scanned (with the index: the
	// size of the set the index describes).
	TxOuts    uint64        `json:"txouts" example:"14132"`
	Height    uint32        `json:"height" example:"14131"`
	BestBlock string        `json:"bestblock" example:"00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c"`
	Unspents  []ScanUnspent `json:"unspents"`
	// TotalAmount is in BTC with eight decimals.
	TotalAmount utxo.Amount `json:"total_amount" swaggertype:"number" example:"50.00000000"`
}

// ScanProgress is the answer to "status" while a scan runs; a nil
// *ScanProgress (JSON null) when none does.
type ScanProgress struct {
	Progress int `json:"progress" example:"42"`
}

// ScanAborted is the answer to "abort": true if a scan will stop, false if
// none runs.
type ScanAborted bool

// handleScan godoc
//
//	@Summary		Scan the UTXO set for output descriptors (Core's scantxoutset)
//	@Description	action "start" scans for the scripts of scanobjects and answers when done, with Core's fields (success, txouts, height, bestblock, unspents with txid, vout, scriptPubKey, desc, amount, coinbase, height, blockhash, confirmations, and total_amount; unspents in outpoint order, desc as Core infers it). Descriptors: addr, raw, pk, pkh, wpkh, combo, sh(wpkh|pkh|pk), wsh(pkh|pk), tr(KEY) without a script tree, rawtr; keys as hex, xpub/xprv (tpub/tprv off mainnet) with origin, path, /* and /*' (hardened needs the xprv) and a range (default [0,1000]); an optional #checksum is verified. "status" answers {"progress": percent} or null, "abort" true or false; GET /v1/scan/status and DELETE /v1/scan do the same. One scan at a time: 409 while one runs. With a scripthash index no scan is needed.
//	@Tags			scan
//	@Accept			json
//	@Produce		json
//	@Param			request	body		ScanRequest	true	"action and scan objects"
//	@Success		200		{object}	ScanResult	"start (status: ScanProgress or null; abort: true or false)"
//	@Failure		400		{object}	Problem	"malformed request, invalid descriptor or range, needs a private key, unsupported descriptor"
//	@Failure		409		{object}	Problem	"Scan already in progress"
//	@Failure		413		{object}	Problem	"body above 1 MiB, too many scan objects or scripts"
//	@Failure		501		{object}	Problem	"no scripthash index and no coin set to scan"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Router			/v1/scan [post]
func (s *Server) handleScan(w http.ResponseWriter, r *http.Request) {
	var req ScanRequest
	if !decodeBody(w, r, maxScanBody, &req) {
		return
	}
	if req.Action == nil {
		writeProblem(w, http.StatusBadRequest, "bad-scan-request", `action is required: "start", "status" or "abort"`)
		return
	}
	switch *req.Action {
	case "status":
		s.handleScanStatus(w, r)
	case "abort":
		s.handleScanAbort(w, r)
	case "start":
		if req.ScanObjects == nil {
			writeProblem(w, http.StatusBadRequest, "bad-scan-request", "scanobjects argument is required for the start action")
			return
		}
		s.startScan(w, r, req.ScanObjects)
	default:
		writeProblem(w, http.StatusBadRequest, "bad-scan-request", fmt.Sprintf("Invalid action '%s'", *req.Action))
	}
}

// handleScanStatus godoc
//
//	@Summary		Progress of the scan in progress
//	@Description	{"progress": percent} while a scan runs, null otherwise (Core's scantxoutset "status").
//	@Tags			scan
//	@Produce		json
//	@Success		200	{object}	ScanProgress	"or null"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/v1/scan/status [get]
func (s *Server) handleScanStatus(w http.ResponseWriter, _ *http.Request) {
	var out *ScanProgress // null when no scan runs
	if p, ok := s.addr.scan.status(); ok {
		out = &ScanProgress{Progress: p}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleScanAbort godoc
//
//	@Summary		Abort the scan in progress
//	@Description	true if a scan will stop (its start request then answers with success false), false if none runs (Core's scantxoutset "abort").
//	@Tags			scan
//	@Produce		json
//	@Success		200	{object}	ScanAborted
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Router			/v1/scan [delete]
func (s *Server) handleScanAbort(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, ScanAborted(s.addr.scan.abort()))
}

// parseScanObjects is EvalDescriptorStringOrObject's argument handling.
func parseScanObjects(raw []json.RawMessage) ([]descriptor.ScanObject, error) {
	if len(raw) > MaxScanObjects {
		return nil, fmt.Errorf("%d scan objects; at most %d", len(raw), MaxScanObjects)
	}
	out := make([]descriptor.ScanObject, len(raw))
	for i, m := range raw {
		var str string
		if json.Unmarshal(m, &str) == nil {
			out[i].Desc = str
			continue
		}
		var obj struct {
			Desc  *string         `json:"desc"`
			Range json.RawMessage `json:"range"`
		}
		dec := json.NewDecoder(bytes.NewReader(m))
		dec.DisallowUnknownFields()
		if !bytes.HasPrefix(bytes.TrimSpace(m), []byte("{")) || dec.Decode(&obj) != nil {
			return nil, errors.New("Scan object needs to be either a string or an object")
		}
		if obj.Desc == nil {
			return nil, errors.New("Descriptor needs to be provided in scan object")
		}
		out[i].Desc = *obj.Desc
		if len(obj.Range) > 0 && string(obj.Range) != "null" {
			r, err := parseRange(obj.Range)
			if err != nil {
				return nil, err
			}
			out[i].Range = &r
		}
	}
	return out, nil
}

// parseRange is Core's ParseRange: an integer end, or [begin, end].
func parseRange(m json.RawMessage) (descriptor.Range, error) {
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(m))
	dec.UseNumber()
	if dec.Decode(&n) == nil {
		end, err := n.Int64()
		if err != nil {
			return descriptor.Range{}, errors.New("JSON integer out of range")
		}
		return descriptor.Range{End: end}, nil
	}
	var pair []json.Number
	dec = json.NewDecoder(bytes.NewReader(m))
	dec.UseNumber()
	if dec.Decode(&pair) == nil && len(pair) == 2 {
		b, err1 := pair[0].Int64()
		e, err2 := pair[1].Int64()
		if err1 != nil || err2 != nil {
			return descriptor.Range{}, errors.New("JSON integer out of range")
		}
		return descriptor.Range{Begin: b, End: e, Pair: true}, nil
	}
	return descriptor.Range{}, errors.New("Range must be specified as end or as [begin,end]")
}

func (s *Server) startScan(w http.ResponseWriter, r *http.Request, raw []json.RawMessage) {
	objs, err := parseScanObjects(raw)
	if err != nil {
		status := http.StatusBadRequest
		if len(raw) > MaxScanObjects {
			status = http.StatusRequestEntityTooLarge
		}
		writeProblem(w, status, "bad-scan-object", err.Error())
		return
	}
	if s.addr.index == nil && s.addr.coins == nil {
		s.writeLookupProblem(w, errNoScripts)
		return
	}
	job := &s.addr.scan
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if !job.reserve(cancel) {
		writeProblem(w, http.StatusConflict, "scan-in-progress", `Scan already in progress, use action "abort" or "status"`)
		return
	}
	defer job.release()

	needles, err := descriptor.Expand(ctx, objs, s.params, MaxScanScripts)
	if err != nil {
		writeDescriptorProblem(w, err)
		return
	}
	qs := make([]scripthash.Query, len(needles))
	for i, n := range needles {
		qs[i] = scripthash.Query{Hash: scripthash.Of(n.Script), Script: n.Script, Limit: scripthash.NoLimit}
	}
	var res scripthash.Result
	var scanErr error
	indexed := false
	for range lookupRetries {
		res, indexed, scanErr = s.scanLookup(ctx, qs)
		if scanErr != nil && !errors.Is(scanErr, context.Canceled) {
			s.writeLookupProblem(w, scanErr)
			return
		}
		if s.tipHolds(res.Tip) {
			break
		}
	}
	if !s.tipHolds(res.Tip) {
		s.writeLookupProblem(w, errTipMoved)
		return
	}
	out := ScanResult{Success: scanErr == nil, TxOuts: res.Scanned, Height: res.Tip.Height,
		BestBlock: res.Tip.Hash.String(), Unspents: []ScanUnspent{}}
	if indexed {
		out.TxOuts = res.Tip.TxOuts
	}
	type hit struct {
		u scripthash.UTXO
		n *descriptor.Needle
	}
	var hits []hit
	for i, a := range res.Answers {
		for _, u := range a.UTXOs {
			hits = append(hits, hit{u, &needles[i]})
		}
	}
	// Core's std::map<COutPoint, Coin> order: txid bytes, then vout.
	sort.Slice(hits, func(i, j int) bool {
		if c := bytes.Compare(hits[i].u.Outpoint.Hash[:], hits[j].u.Outpoint.Hash[:]); c != 0 {
			return c < 0
		}
		return hits[i].u.Outpoint.Index < hits[j].u.Outpoint.Index
	})
	var total int64
	for _, h := range hits {
		n, ok := s.chain.AtHeight(int32(h.u.Height))
		if !ok {
			s.writeLookupProblem(w, errTipMoved)
			return
		}
		total += h.u.Value
		out.Unspents = append(out.Unspents, ScanUnspent{
			TxID: h.u.Outpoint.Hash.String(), Vout: h.u.Outpoint.Index, ScriptPubKey: hex.EncodeToString(h.n.Script),
			Desc: h.n.Desc, Amount: utxo.Amount(h.u.Value), Coinbase: h.u.Coinbase, Height: h.u.Height,
			BlockHash: n.Hash.String(), Confirmations: res.Tip.Height - h.u.Height + 1,
		})
	}
	out.TotalAmount = utxo.Amount(total)
	writeJSON(w, http.StatusOK, out)
}

// scanLookup asks the index, else scans the coin set with progress.
func (s *Server) scanLookup(ctx context.Context, qs []scripthash.Query) (scripthash.Result, bool, error) {
	if s.addr.index != nil {
		res, err := s.addr.index.Lookup(ctx, qs)
		if !errors.Is(err, scripthash.ErrNoIndex) {
			return res, true, err
		}
	}
	if s.addr.coins == nil {
		return scripthash.Result{}, false, errNoScripts
	}
	job := &s.addr.scan
	res, err := scripthash.Scan(ctx, s.addr.coins, qs, func(p int) { job.progress.Store(int32(p)) })
	return res, false, err
}

// tipHolds reports that the active chain still has tip. AtHeight answers
// without waiting, from the chain as the chainstate's last write hold left
// it; an index applies a block inside that hold, so its tip can be one the
// answer does not have yet, and Lookup, which waits for the hold, decides.
func (s *Server) tipHolds(tip scripthash.Tip) bool {
	if n, ok := s.chain.AtHeight(int32(tip.Height)); ok && n.Hash == tip.Hash {
		return true
	}
	n, ok := s.chain.Lookup(tip.Hash)
	return ok && n.InActiveChain && n.Height == int32(tip.Height)
}

// writeDescriptorProblem maps descriptor errors to 400 or 413.
func writeDescriptorProblem(w http.ResponseWriter, err error) {
	var de *descriptor.Error
	switch {
	case errors.Is(err, context.Canceled):
		writeProblem(w, http.StatusServiceUnavailable, "aborted", "the scan was aborted while its descriptors were expanded")
	case errors.As(err, &de) && errors.Is(err, descriptor.ErrUnsupported):
		writeProblem(w, http.StatusBadRequest, "unsupported-descriptor", de.Error())
	case errors.As(err, &de) && errors.Is(err, descriptor.ErrPrivateKeyNeeded):
		writeProblem(w, http.StatusBadRequest, "needs-private-key", de.Error())
	case errors.As(err, &de) && errors.Is(err, descriptor.ErrTooManyScripts):
		writeProblem(w, http.StatusRequestEntityTooLarge, "too-many-scripts", de.Error())
	case errors.As(err, &de) && errors.Is(err, descriptor.ErrRange):
		writeProblem(w, http.StatusBadRequest, "bad-range", de.Error())
	case errors.As(err, &de):
		writeProblem(w, http.StatusBadRequest, "bad-descriptor", de.Error())
	default:
		writeProblem(w, http.StatusBadRequest, "bad-descriptor", err.Error())
	}
}
