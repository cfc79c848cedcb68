package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"utxod/backends"
	"utxod/chainstate"
	"utxod/snapshot"
)

// SnapshotSource is what GET /v1/snapshot needs from the node:
// *chainstate.Chainstate has it. A Chain without it answers 501.
type SnapshotSource interface {
	SnapshotCoins() (*chainstate.CoinSnapshot, error)
}

var _ SnapshotSource = (*chainstate.Chainstate)(nil)

// snapshotWriteIdle bounds how long one write of the stream may wait for a
// slow client: the server's WriteTimeout covers ordinary answers, not a
// dump of the whole UTXO set, so each write gets this much time instead.
const snapshotWriteIdle = time.Minute

// handleSnapshot godoc
//
//	@Summary		The UTXO set as a Bitcoin Core snapshot (dumptxoutset)
//	@Description	Streams the UTXO set at the current tip in Bitcoin Core's snapshot format (version 2, the file of dumptxoutset and loadtxoutset), byte-identical to Core's for the same set. The service keeps running: the set is read from a consistent store snapshot taken when the request starts (blocks connected meanwhile are not in it), one transaction's coins in memory at a time. The headers name the base block and the coin count; the body has no Content-Length (chunked): a transfer cut short is an error for the client, never a shorter valid file.
//	@Tags			chainstate
//	@Produce		octet-stream
//	@Success		200	{file}		file	"the snapshot; headers X-Utxod-Snapshot-Base-Hash, X-Utxod-Snapshot-Base-Height, X-Utxod-Snapshot-Coins"
//	@Failure		500	{object}	Problem	"the store snapshot could not be taken"
//	@Failure		501	{object}	Problem	"this node cannot write snapshots"
//	@Failure		503	{object}	Problem	"disk full (the store could not be flushed first)"
//	@Param			at	query	string	false	"answer only while this block is the active tip: 409 otherwise"
//	@Header			all	{string}	X-Utxod-Tip-Hash	"the active tip the answer was computed at"
//	@Header			all	{integer}	X-Utxod-Tip-Height	"that tip's height"
//	@Header			200	{string}	ETag	"strong; If-None-Match is answered 304"
//	@Router			/v1/snapshot [get]
func (s *Server) handleSnapshot(w http.ResponseWriter, r *http.Request) {
	src, ok := s.chain.(SnapshotSource)
	if !ok {
		writeProblem(w, http.StatusNotImplemented, "not-implemented", "this node cannot write UTXO snapshots")
		return
	}
	snap, err := src.SnapshotCoins()
	if errors.Is(err, backends.ErrDiskFull) {
		s.log.Error("snapshot: disk full", "err", err)
		writeDiskFull(w, "the chainstate could not be flushed for the snapshot")
		return
	}
	if err != nil {
		s.log.Error("snapshot", "err", err)
		writeProblem(w, http.StatusInternalServerError, "internal", "taking the store snapshot failed")
		return
	}
	defer snap.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	st := snap.Stats
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="utxo-%s-%d.dat"`, s.params.Name, st.Height))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Utxod-Snapshot-Base-Hash", st.BestBlock.String())
	h.Set("X-Utxod-Snapshot-Base-Height", strconv.FormatUint(uint64(st.Height), 10))
	h.Set("X-Utxod-Snapshot-Coins", strconv.FormatUint(st.TxOuts, 10))
	answeredAtTip(r, st.BestBlock, int32(st.Height))
	if !beginStream(w, r) {
		return
	}
	w.WriteHeader(http.StatusOK)
	meta := snapshot.Metadata{MessageStart: s.params.Magic, BaseHash: st.BestBlock, Coins: st.TxOuts}
	start := time.Now()
	n, err := snapshot.Dump(&deadlineWriter{w: w, rc: http.NewResponseController(w)}, meta, snap.Scanner)
	if err != nil {
		// The status is sent: abort the connection so that the client sees
		// a broken transfer, not a complete short file.
		s.log.Warn("snapshot stream stopped", "coins_written", n, "of", st.TxOuts, "err", err)
		panic(http.ErrAbortHandler)
	}
	s.log.Info("snapshot streamed", "coins", n, "height", st.Height, "seconds", time.Since(start).Seconds())
}

// deadlineWriter gives every write snapshotWriteIdle from its start.
type deadlineWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (d *deadlineWriter) Write(b []byte) (int, error) {
	// Not every ResponseWriter supports deadlines (tests' recorders); the
	// server's does.
	_ = d.rc.SetWriteDeadline(time.Now().Add(snapshotWriteIdle))
	return d.w.Write(b)
}
