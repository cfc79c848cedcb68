package api

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Registerer is the registry behind /metrics, for collectors of other
// components (the follower's utxod_follow_* metrics).
func (s *Server) Registerer() prometheus.Registerer { return s.metrics.reg }

// FollowHealth is /healthz's account of following a source (utxod serve
// --follow URL).
type FollowHealth struct {
	// Source is the followed node's REST base URL.
	Source string `json:"source" example:"http://127.0.0.1:8332"`
	// State: starting (no answer from the source yet), syncing, in-sync,
	// retrying (the source failed; backing off), paused (a block from the
	// source was rejected), diverged (the source's chain is behind this
	// node's or ties with it), stopped.
	State        string `json:"state" enums:"starting,syncing,in-sync,retrying,paused,diverged,stopped" example:"in-sync"`
	SourceHeight int32  `json:"source_height" example:"14131"`
	SourceTip    string `json:"source_tip" example:"00000000b3e750f37fdb42e1018799a9f44b546d393b130b369590a072430a1c"`
	// LastPoll is when the source last answered (RFC 3339).
	LastPoll  string `json:"last_poll,omitempty" example:"2026-05-01T12:00:00Z"`
	LastError string `json:"last_error,omitempty" example:"follow: block ... rejected: bad-txnmrklroot"`
	// Rejected is the block that paused following.
	Rejected *FollowRejection `json:"rejected,omitempty"`
	// Counters since start: blocks processed from the source, failed
	// requests, rejected blocks, reorgs.
	Blocks         uint64 `json:"blocks" example:"14131"`
	Errors         uint64 `json:"errors" example:"0"`
	RejectedBlocks uint64 `json:"rejected_blocks" example:"0"`
	Reorgs         uint64 `json:"reorgs" example:"0"`
}

// FollowRejection is a block from the source the chainstate refused.
type FollowRejection struct {
	Hash   string `json:"hash"`
	Height int32  `json:"height"`
	Reason string `json:"reason" example:"bad-cb-amount"`
	Detail string `json:"detail,omitempty"`
}
