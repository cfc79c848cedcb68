package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// problemBase is the prefix of the "type" URI of every problem this API
// returns; the reason is appended (RFC 9457 §3.1.1 allows any URI).
const problemBase = "https://utxod.invalid/problems/"

// Problem is an RFC 9457 problem details object. Reason is a short,
// machine-readable cause: for rejected blocks it is Bitcoin Core's reject
// reason (e.g. "bad-txnmrklroot"), otherwise a utxod-specific token such as
// "unauthorized" or "body-too-large".
type Problem struct {
	Type   string `json:"type" example:"https://utxod.invalid/problems/bad-txnmrklroot"`
	Title  string `json:"title" example:"Unprocessable Entity"`
	Status int    `json:"status" example:"422"`
	Detail string `json:"detail,omitempty" example:"hashMerkleRoot mismatch"`
	Reason string `json:"reason" example:"bad-txnmrklroot"`
}

// writeProblem renders a problem+json response.
func writeProblem(w http.ResponseWriter, status int, reason, detail string) {
	p := Problem{
		Type:   problemBase + reason,
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
		Reason: reason,
	}
	b, err := marshalLine(p)
	if err != nil { // cannot happen: plain strings and ints
		b = []byte(`{"type":"about:blank","status":500,"reason":"internal"}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeDiskFull renders a store failure caused by a full disk (an error
// wrapping backends.ErrDiskFull) as 503 problem+json with reason
// "disk-full". The detail names the cause but not the files (the error's
// own text, which does, goes to the server log).
func writeDiskFull(w http.ResponseWriter, what string) {
	writeProblem(w, http.StatusServiceUnavailable, "disk-full",
		what+": the data directory's disk is full (no space left on device, ENOSPC). Free space and restart utxod; it reopens at its last flushed tip")
}

// writeJSON renders v as compact JSON followed by a newline, as Core's REST
// interface does.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshalLine(v)
	if err != nil {
		writeProblem(w, http.StatusInternalServerError, "internal", "encoding the response failed")
		return
	}
	writeBody(w, status, "application/json", b)
}

// writeBody writes b with the given content type.
func writeBody(w http.ResponseWriter, status int, contentType string, b []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// marshalLine encodes v as compact JSON plus a newline without HTML
// escaping (Core's UniValue writes '<', '>' and '&' as they are).
func marshalLine(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
