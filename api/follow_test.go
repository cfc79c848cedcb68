package api

import (
	"context"
	"errors"
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
	if got := strings.Join(jsonKeys(t, rec.Body.Bytes()), ","); got != "status,height,tip,in_sync,follow" {
		t.Fatalf("keys %s", got)
	}
	var got Health
	decodeJSON(t, rec, &got)
	if got.Status != "ok" || got.Height != 3 || got.InSync == nil || *got.InSync || got.Follow == nil ||
		got.Follow.State != "paused" || got.Follow.Rejected.Reason != "bad-cb-amount" || got.Follow.SourceHeight != 5 {
		t.Fatalf("%+v %+v", got, got.Follow)
	}
}

func TestSubmitBlock(t *testing.T) {
	s, cs, blocks := mainnetServer(t, 3)
	res, err := s.SubmitBlock(context.Background(), blocks[4])
	if err != nil || res.Status != chainstate.StatusConnected || cs.Tip().Height != 4 {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := s.SubmitBlock(context.Background(), blocks[4][:100]); !errors.Is(err, chainstate.ErrParse) {
		t.Fatalf("garbage: %v", err)
	}
	// Waiting for the slot ends with the context.
	s.sem <- struct{}{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.SubmitBlock(ctx, blocks[5]); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	<-s.sem
	s.Close()
	if _, err := s.SubmitBlock(context.Background(), blocks[5]); !errors.Is(err, ErrClosed) || cs.Tip().Height != 4 {
		t.Fatalf("after Close: %v, tip %d", err, cs.Tip().Height)
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
