package scripthash_test

import (
	"context"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"utxod/scripthash"
	"utxod/scripthash/indextest"
	"utxod/utxo"
)

// fakeSource is a CoinSource over a slice in txid order.
type fakeSource struct {
	coins []utxo.Entry
	tip   scripthash.Tip
	scans atomic.Int32
	gate  chan struct{} // if set, each scan waits on it first
}

func (f *fakeSource) ScanCoins(fn func(utxo.Entry) error) (utxo.Stats, error) {
	f.scans.Add(1)
	if f.gate != nil {
		<-f.gate
	}
	var st utxo.Stats
	st.SetTip(f.tip.Height, f.tip.Hash)
	st.TxOuts = f.tip.TxOuts
	for _, e := range f.coins {
		if err := fn(e); err != nil {
			return st, err
		}
	}
	return st, nil
}

func TestScannerConformance(t *testing.T) {
	indextest.Run(t, func(t *testing.T, coins []utxo.Entry, tip scripthash.Tip) scripthash.Index {
		return scripthash.NewScanner(&fakeSource{coins: coins, tip: tip}, 0)
	})
}

// scanIndex is Scan as an Index (one pass per Lookup).
type scanIndex struct{ src scripthash.CoinSource }

func (s scanIndex) Lookup(ctx context.Context, qs []scripthash.Query) (scripthash.Result, error) {
	return scripthash.Scan(ctx, s.src, qs, nil)
}

func TestScanConformance(t *testing.T) {
	indextest.Run(t, func(t *testing.T, coins []utxo.Entry, tip scripthash.Tip) scripthash.Index {
		return scanIndex{&fakeSource{coins: coins, tip: tip}}
	})
}

// The Esplora scripthash of the genesis P2PKH address (ElectrumX docs,
// "Script Hashes"; Esplora's form is the unreversed one).
func TestHashOf(t *testing.T) {
	s, _ := hex.DecodeString("76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac")
	if got := scripthash.Of(s).String(); got != "6191c3b590bfcfa0475e877c302da1e323497acf3b42c08d8fa28e364edf018b" {
		t.Fatalf("Of = %s", got)
	}
	h, err := scripthash.Parse("6191C3B590BFCFA0475E877C302DA1E323497ACF3B42C08D8FA28E364EDF018B")
	if err != nil || h != scripthash.Of(s) {
		t.Fatalf("Parse upper case: %v", err)
	}
	for _, bad := range []string{"", "6191", "zz91c3b590bfcfa0475e877c302da1e323497acf3b42c08d8fa28e364edf018b",
		"6191c3b590bfcfa0475e877c302da1e323497acf3b42c08d8fa28e364edf018b00"} {
		if _, err := scripthash.Parse(bad); !errors.Is(err, scripthash.ErrBadHash) {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
}

// Lookups that arrive while a scan runs share the next scan.
func TestScannerBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &fakeSource{coins: indextest.Coins(), tip: indextest.Tip, gate: make(chan struct{})}
		s := scripthash.NewScanner(src, 0)
		q := []scripthash.Query{{Hash: scripthash.Of(indextest.ManyScript), Limit: 1, Summary: true}}
		var wg sync.WaitGroup
		errs := make(chan error, 11)
		lookup := func() {
			defer wg.Done()
			res, err := s.Lookup(context.Background(), q)
			if err == nil && res.Answers[0].Count == 0 {
				err = errors.New("no rows")
			}
			errs <- err
		}
		wg.Add(1)
		go lookup() // starts the first scan, which waits on the gate
		synctest.Wait()
		for range 10 {
			wg.Add(1)
			go lookup() // these queue for the second scan
		}
		synctest.Wait()
		close(src.gate)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n := src.scans.Load(); n != 2 {
			t.Errorf("%d scans for 11 lookups, want 2", n)
		}
	})
}

// A waiter that gives up does not get an answer; the scan nobody waits for
// stops.
func TestScannerCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &fakeSource{coins: indextest.Coins(), tip: indextest.Tip, gate: make(chan struct{})}
		s := scripthash.NewScanner(src, 0)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() {
			_, err := s.Lookup(ctx, []scripthash.Query{{Hash: scripthash.Of(indextest.ManyScript), Limit: 1}})
			done <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled lookup: %v", err)
		}
		close(src.gate)
		// The Scanner still works afterwards.
		res, err := s.Lookup(context.Background(), []scripthash.Query{{Hash: scripthash.Of(indextest.ManyScript), Limit: 1}})
		if err != nil || len(res.Answers[0].UTXOs) != 1 {
			t.Fatalf("after cancel: %+v, %v", res, err)
		}
	})
}

func TestScannerBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &fakeSource{coins: indextest.Coins(), tip: indextest.Tip, gate: make(chan struct{})}
		s := scripthash.NewScanner(src, 3)
		q := scripthash.Query{Hash: scripthash.Of(indextest.ManyScript), Limit: 1}
		go func() { _, _ = s.Lookup(context.Background(), []scripthash.Query{q}) }()
		synctest.Wait()
		if _, err := s.Lookup(context.Background(), []scripthash.Query{q, q, q, q}); !errors.Is(err, scripthash.ErrBusy) {
			t.Errorf("4 queries with room for 3: %v", err)
		}
		close(src.gate)
		synctest.Wait()
	})
}

// Scan reports partial results and the context's error when cancelled,
// and progress up to 100 when it completes.
func TestScanProgressAndAbort(t *testing.T) {
	coins := make([]utxo.Entry, 20000)
	for i := range coins {
		coins[i].Hash[0], coins[i].Hash[1] = byte(i>>8*256/79), byte(i)
		coins[i].Script = indextest.ManyScript
	}
	src := &fakeSource{coins: coins, tip: indextest.Tip}
	var pcts []int
	res, err := scripthash.Scan(context.Background(), src, []scripthash.Query{{Hash: scripthash.Of(indextest.ManyScript), Limit: 0, Summary: true}},
		func(p int) { pcts = append(pcts, p) })
	if err != nil || res.Scanned != 20000 || res.Answers[0].Count != 20000 {
		t.Fatalf("%+v %v", res, err)
	}
	if len(pcts) < 2 || pcts[len(pcts)-1] != 100 {
		t.Errorf("progress %v", pcts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err = scripthash.Scan(ctx, src, []scripthash.Query{{Hash: scripthash.Of(indextest.ManyScript), Limit: 0, Summary: true}}, nil)
	if !errors.Is(err, context.Canceled) || res.Scanned != 8192 {
		t.Errorf("aborted scan: %d scanned, %v", res.Scanned, err)
	}
}
