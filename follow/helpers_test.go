package follow

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

var (
	mainnetOnce   sync.Once
	mainnetBlocks [][]byte
	mainnetErr    error
)

// mainnet returns the bundled mainnet sample's blocks 0..top.
func mainnet(t testing.TB, top int) [][]byte {
	t.Helper()
	mainnetOnce.Do(func() {
		f, err := os.Open("../testdata/mainnet/blk_0_to_14131.dat")
		if err != nil {
			mainnetErr = err
			return
		}
		defer f.Close()
		mainnetBlocks, mainnetErr = wire.ReadAllBlocks(bufio.NewReader(f), params.MainNet().Magic)
	})
	if mainnetErr != nil {
		t.Fatal(mainnetErr)
	}
	return mainnetBlocks[:top+1]
}

func newChainstate(t testing.TB, p *params.Params) *chainstate.Chainstate {
	t.Helper()
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil),
		Store: store.NewMem(), Now: func() time.Time { return time.Unix(1<<31, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// serve starts an HTTP server for h and returns a client for it.
func serve(t testing.TB, h http.Handler, p *params.Params) *Client {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	c, err := NewClient(ClientConfig{URL: ts.URL, Params: p, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fastConfig is a Config with test-sized delays.
func fastConfig(src *Client, cs Chain) Config {
	return Config{Source: src, Chain: cs, PollInterval: 10 * time.Millisecond, MinBackoff: 5 * time.Millisecond,
		MaxBackoff: 40 * time.Millisecond, RejectPause: 150 * time.Millisecond, Attempts: 3}
}

func newFollower(t testing.TB, cfg Config) *Follower {
	t.Helper()
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// infoOf is the chainstate's digests with hash_serialized_3.
func infoOf(t testing.TB, cs *chainstate.Chainstate) utxo.ChainstateInfo {
	t.Helper()
	info, err := cs.Info(chainstate.HashTypeHashSerialized3)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// value reads a counter or gauge.
func value(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		panic(err)
	}
	if d.Counter != nil {
		return d.Counter.GetValue()
	}
	return d.Gauge.GetValue()
}
