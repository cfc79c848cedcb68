package api

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"utxod/params"
	"utxod/testkit/chaingen"
	"utxod/wire"
)

// checkBlockInfo checks what one answer about one block must say of
// itself, however the chain moves meanwhile: on the active chain it is
// confirmed at least once and has a successor unless it is the tip.
func checkBlockInfo(bi BlockInfo) error {
	if !bi.InActiveChain {
		if bi.Confirmations != -1 || bi.NextBlockHash != "" {
			return fmt.Errorf("%s off the active chain: confirmations %d, next %q", bi.Hash, bi.Confirmations, bi.NextBlockHash)
		}
		return nil
	}
	if bi.Confirmations < 1 || (bi.Confirmations == 1) != (bi.NextBlockHash == "") {
		return fmt.Errorf("%s on the active chain: confirmations %d, next %q", bi.Hash, bi.Confirmations, bi.NextBlockHash)
	}
	return nil
}

// checkHeaders checks a /rest/headers answer: a run of the active chain,
// each header the parent of the next, taken from one view of the chain.
func checkHeaders(hs []BlockHeader) error {
	for i, h := range hs {
		if h.Confirmations < 1 || (h.Confirmations == 1) != (h.NextBlockHash == "") {
			return fmt.Errorf("header %d %s: confirmations %d, next %q", i, h.Hash, h.Confirmations, h.NextBlockHash)
		}
		if i == 0 {
			continue
		}
		p := hs[i-1]
		if h.PreviousBlockHash != p.Hash || p.NextBlockHash != h.Hash || h.Height != p.Height+1 || h.Confirmations != p.Confirmations-1 {
			return fmt.Errorf("headers %d and %d do not chain: %+v then %+v", i-1, i, p, h)
		}
	}
	return nil
}

// TestConcurrentPostsAndGets posts a generated chain with reorg branches
// from several goroutines (so blocks arrive out of order: orphans, side
// branches, reorgs) while others read every kind of route. Run with -race
// (make test does): handlers hold no lock on chain data, so this is where
// a missing copy would show. Every answer must be consistent in itself,
// and the final state equal a sequential replay's.
func TestConcurrentPostsAndGets(t *testing.T) {
	data, sum, err := chaingen.Generate(chaingen.Config{Profile: chaingen.ProfileModern, Seed: 7, Blocks: 90, Reorgs: 3, MaxTxs: 6})
	if err != nil {
		t.Fatal(err)
	}
	p := params.RegTest()
	raws, err := wire.ReadAllBlocks(bytes.NewReader(data), p.Magic)
	if err != nil {
		t.Fatal(err)
	}
	hashes := make([]wire.Hash, len(raws))
	for i, raw := range raws {
		hashes[i] = wire.DoubleSHA256(raw[:wire.HeaderSize])
	}
	cs := newChainstate(t, p)
	s := newServer(t, cs, p)

	var (
		wg      sync.WaitGroup
		posting atomic.Int32
		reads   atomic.Int64
	)
	next := make(chan int, len(raws))
	for i := range raws {
		next <- i
	}
	close(next)
	for range 3 {
		posting.Add(1)
		wg.Go(func() {
			defer posting.Add(-1)
			for i := range next {
				if rec := postBlock(t, s, raws[i]); rec.Code != http.StatusOK {
					t.Errorf("block %d: %d %s", i, rec.Code, rec.Body)
				}
			}
		})
	}
	for g := range 3 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for posting.Load() > 0 {
				h := hashes[rng.IntN(len(hashes))]
				switch rec := do(t, s, "GET", "/v1/blocks/"+h.String(), nil); rec.Code {
				case http.StatusOK:
					var bi BlockInfo
					decodeJSON(t, rec, &bi)
					if err := checkBlockInfo(bi); err != nil {
						t.Error(err)
					}
				case http.StatusNotFound: // not posted yet
				default:
					t.Errorf("block %s: %d %s", h, rec.Code, rec.Body)
				}
				for _, target := range []string{"/v1/tip", fmt.Sprintf("/v1/blocks/height/%d", rng.IntN(20))} {
					rec := do(t, s, "GET", target, nil)
					if rec.Code == http.StatusNotFound && target != "/v1/tip" {
						continue // above the tip yet
					}
					if rec.Code != http.StatusOK {
						t.Errorf("%s: %d %s", target, rec.Code, rec.Body)
						continue
					}
					var bi BlockInfo // fresh: decoding keeps fields the answer omits
					decodeJSON(t, rec, &bi)
					if err := checkBlockInfo(bi); err != nil {
						t.Error(err)
					}
				}
				var hs []BlockHeader
				rec := do(t, s, "GET", "/rest/headers/"+h.String()+".json?count=30", nil)
				if rec.Code != http.StatusOK {
					t.Errorf("headers: %d %s", rec.Code, rec.Body)
				} else if decodeJSON(t, rec, &hs); checkHeaders(hs) != nil {
					t.Error(checkHeaders(hs))
				}
				targets := []string{"/healthz", "/rest/chaininfo.json", "/rest/blockhashbyheight/0.json",
					"/rest/getutxos/" + h.String() + "-0.json", "/v1/utxos/" + h.String() + "/0"}
				if rng.IntN(8) == 0 { // the digest and the metrics are slow under -race
					targets = append(targets, "/v1/chainstate", "/metrics")
				}
				for _, target := range targets {
					rec := do(t, s, "GET", target, nil)
					if rec.Code != http.StatusOK && !(rec.Code == http.StatusNotFound && target[:9] == "/v1/utxos") {
						t.Errorf("%s: %d %s", target, rec.Code, rec.Body)
					}
				}
				reads.Add(1)
			}
		})
	}
	wg.Wait()
	t.Logf("%d blocks posted, %d rounds of reads meanwhile", len(raws), reads.Load())
	if tip := cs.Tip(); tip.Hash != sum.Tip || tip.Height != sum.Height {
		t.Fatalf("tip %s@%d, generator %s@%d", tip.Hash, tip.Height, sum.Tip, sum.Height)
	}
	ref := newChainstate(t, p)
	for i, raw := range raws {
		if _, err := ref.ProcessBlock(raw); err != nil {
			t.Fatalf("sequential replay, block %d: %v", i, err)
		}
	}
	got := do(t, s, "GET", "/v1/chainstate?hash_type=hash_serialized_3", nil).Body.String()
	want := do(t, newServer(t, ref, p), "GET", "/v1/chainstate?hash_type=hash_serialized_3", nil).Body.String()
	if got != want {
		t.Fatalf("after concurrent posts:\n%s\nsequential:\n%s", got, want)
	}
}
