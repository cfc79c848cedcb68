package api

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"utxod/chainstate"
	"utxod/params"
)

func TestHealthFollow(t *testing.T) {
	s, cs, _ := mainnetServer(t, 3)
	var h map[string]any
	decodeJSON(t, do(t, s, "GET", "/healthz", nil), &h)
	if _, ok := h["in_sync"]; ok || h["follow"] != nil || h["status"] != "ok" || h["height"] != 3.0 {
		t.Fatalf("without --follow: %v", h)
	}
	fh := FollowHealth{Source: "http://127.0.0.1:8332", State: "paused", SourceHeight: 5, Rejected: &FollowRejection{Reason: "bad-cb-amount", Height: 4}}
	s2, err := New(Config{Chain: cs, Params: params.MainNet(), Token: testToken, Follow: func() (FollowHealth, bool) { return fh, false }})
	if err != nil {
		t.Fatal(err)
	}
	rec := do(t, s2, "GET", "/healthz", nil)
	if got := strings.Join(jsonKeys(t, rec.Body.Bytes()), ","); got != "status,height,tip,flushed_height,flushed_hash,in_sync,follow" {
		t.Fatalf("keys %s", got)
	}
	var got Health
	decodeJSON(t, rec, &got)
	if got.Status != "ok" || got.Height != 3 || got.InSync == nil || *got.InSync || got.Follow == nil ||
		got.Follow.State != "paused" || got.Follow.Rejected.Reason != "bad-cb-amount" || got.Follow.SourceHeight != 5 {
		t.Fatalf("%+v %+v", got, got.Follow)
	}
}

// queueChain answers every submission with err, as the chainstate does for
// a submission refused while queued.
type queueChain struct {
	Chain
	err error
}

func (q queueChain) SubmitWith(context.Context, []byte, chainstate.SubmitOptions) (chainstate.Result, error) {
	return chainstate.Result{Height: -1}, q.err
}

// TestPostBlockQueueErrors: the chainstate's queue refusals map to 503
// problems (the queue itself is chainstate's, TestSubmit).
func TestPostBlockQueueErrors(t *testing.T) {
	_, cs, blocks := mainnetServer(t, 1)
	for _, tc := range []struct {
		err    error
		reason string
	}{
		{chainstate.ErrClosed, "shutting-down"},
		{context.Canceled, "cancelled"},
		{context.DeadlineExceeded, "cancelled"},
	} {
		s := newServer(t, queueChain{Chain: cs, err: tc.err}, params.MainNet())
		if rec := postBlock(t, s, blocks[2]); rec.Code != 503 || problemOf(t, rec).Reason != tc.reason {
			t.Errorf("%v: %d %s", tc.err, rec.Code, rec.Body)
		}
	}
}

func TestRegisterer(t *testing.T) {
	s, _, _ := mainnetServer(t, 1)
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "utxod_follow_test_total", Help: "test"})
	if err := s.Registerer().Register(c); err != nil {
		t.Fatal(err)
	}
	c.Add(7)
	if body := do(t, s, "GET", "/metrics", nil).Body.String(); !strings.Contains(body, "utxod_follow_test_total 7") {
		t.Fatal("counter not exported")
	}
}
