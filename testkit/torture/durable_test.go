package torture

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"utxod/wire"
)

// durableKills is the number of SIGKILLs per store of TestCrashDurable: a
// few in "make test", UTXOD_TORTURE_KILLS when set.
func durableKills() int {
	if n, err := strconv.Atoi(os.Getenv(envKills)); err == nil && n > 0 {
		return n
	}
	return 4
}

// durableStats counts what TestCrashDurable saw on one store.
type durableStats struct {
	Kills, DuringPost, DuringDurable int
	Posted, DurableAsked, Durable    int // answers 200; asked ?durable=1; answered durable
	Checked                          int // durable answers checked after a restart
	Lost                             int // acknowledged connected, not durable, gone after the kill
	Elapsed                          time.Duration
}

func (d *durableStats) String() string {
	return fmt.Sprintf("%d kills (%d during a POST, %d during a durable POST), %d POSTs (%d asked durable, %d answered durable), %d durable answers checked after restarts, %d non-durable acknowledged blocks lost, %.1fs",
		d.Kills, d.DuringPost, d.DuringDurable, d.Posted, d.DurableAsked, d.Durable, d.Checked, d.Lost, d.Elapsed.Seconds())
}

// TestCrashDurable: "utxod serve" takes the corpus over POST /v1/blocks,
// a third of them with ?durable=1, while a second client re-POSTs earlier
// blocks with ?durable=1 (durable duplicates: concurrent flushes), and is
// SIGKILLed at random moments, on every store. After every restart: the
// datadir is consistent (every gettxoutsetinfo field equal to the clean
// run at its tip); it reopens at or above the highest flushed_height any
// answer reported, and at its flushed tip (/v1/tip, /healthz); every block
// answered durable is known and valid, and on the active chain unless the
// chain moved off the flushed tip that answer reported; every answer to a
// durable request for a connected block said durable; no answer said
// durable for a block outside its flushed tip's chain.
func TestCrashDurable(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and kills the binary")
	}
	bin, _ := binary(t)
	c := testCorpus(t)
	for _, store := range stores(t) {
		t.Run(store, func(t *testing.T) {
			st := durableTorture(t, bin, c, store, durableKills(), rand.New(rand.NewPCG(uint64(len(store)), 43)))
			t.Logf("durable %s: %s", store, st)
		})
	}
}

// ack is one 200 answer to a POST.
type ack struct {
	pos     int
	asked   bool // ?durable=1
	answer  BlockAnswer
	flushed wire.Hash
}

func durableTorture(t *testing.T, bin string, c *Corpus, store string, nKills int, rng *rand.Rand) *durableStats {
	start := time.Now()
	dir := filepath.Join(t.TempDir(), store)
	client := newClient()
	ctx := context.Background()
	st := &durableStats{}
	srv, err := StartServer(bin, dir, serveArgs(store)...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if srv != nil && !srv.Exited() {
			srv.Kill()
		}
	}()
	n := len(c.Blocks)
	var mu sync.Mutex
	var acks []ack

	// post submits block i (durable when asked) and records the answer.
	// Transport errors (the process was killed) are returned; wrong answers
	// are test errors.
	post := func(srv *Server, i int, durable bool) error {
		path := "/v1/blocks"
		if durable {
			path += "?durable=1"
		}
		r, err := srv.Do(ctx, client, http.MethodPost, path, c.Blocks[i], "application/octet-stream", srv.Token)
		if err != nil {
			return err
		}
		var a BlockAnswer
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &a) != nil || a.Hash != c.Hashes[i].String() {
			t.Errorf("%s: POST block %d (durable %v): %d %s", store, i, durable, r.Status, r.Body)
			return errBadAnswer
		}
		f, err := wire.ParseHash(a.FlushedHash)
		if err != nil {
			t.Errorf("%s: POST block %d: flushed_hash %q", store, i, a.FlushedHash)
			return errBadAnswer
		}
		// Honest: durable only for a block on its flushed tip's chain, and
		// always for a connected block asked durable (nothing else moves
		// the chain between its connect and its flush here).
		if a.Durable && !slices.Contains(c.Ancestors(f), i) {
			t.Errorf("%s: block %d answered durable, flushed tip %d %s is not its descendant", store, i, a.FlushedHeight, f)
		}
		if durable && a.Status == "connected" && !a.Durable {
			t.Errorf("%s: block %d asked durable, answered %s", store, i, r.Body)
		}
		mu.Lock()
		acks = append(acks, ack{pos: i, asked: durable, answer: a, flushed: f})
		mu.Unlock()
		return nil
	}
	// Since the datadir was created: the durable answers, and the highest
	// flushed height any answer reported.
	var durables []ack
	var maxFlushed int32
	next := 0
	var postDur atomic.Int64
	postDur.Store(int64(5 * time.Millisecond))
	for st.Kills < nKills {
		if next >= n {
			// The whole corpus is in: start over in a fresh datadir so that
			// later kills land mid-chain.
			srv.Kill()
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if srv, err = StartServer(bin, dir, serveArgs(store)...); err != nil {
				t.Fatal(err)
			}
			next, durables, maxFlushed = 0, nil, 0
		}
		acks = acks[:0]
		// The poster takes the corpus in order, a third durable; the
		// re-poster asks durable answers for blocks already answered.
		var inPost, inDurable atomic.Int32
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(2)
		go func(from int, seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 1))
			for i := from; i < n; i++ {
				select {
				case <-stop:
					return
				default:
				}
				durable := rng.IntN(3) == 0
				inPost.Add(1)
				if durable {
					inDurable.Add(1)
				}
				t0 := time.Now()
				err := post(srv, i, durable)
				inPost.Add(-1)
				if durable {
					inDurable.Add(-1)
				}
				if err != nil {
					return
				}
				postDur.Store(int64(time.Since(t0)))
			}
		}(next, rng.Uint64())
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 2))
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Duration(rng.Int64N(int64(2 * time.Millisecond)))):
				}
				mu.Lock()
				if len(acks) == 0 {
					mu.Unlock()
					continue
				}
				i := acks[rng.IntN(len(acks))].pos
				mu.Unlock()
				inPost.Add(1)
				inDurable.Add(1)
				err := post(srv, i, true)
				inPost.Add(-1)
				inDurable.Add(-1)
				if err != nil {
					return
				}
			}
		}(rng.Uint64())
		// Some answers first (up to 8 blocks, fewer near the corpus's end),
		// then a random delay.
		for want, deadline := min(1+rng.IntN(8), n-next), time.Now().Add(30*time.Second); time.Now().Before(deadline); {
			mu.Lock()
			got := len(acks)
			mu.Unlock()
			if got >= want || t.Failed() {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(rng.Int64N(40*postDur.Load() + 1)))
		if t.Failed() {
			t.FailNow()
		}
		p, d := inPost.Load() > 0, inDurable.Load() > 0
		srv.Kill()
		close(stop)
		wg.Wait()
		if t.Failed() {
			t.Fatalf("server log:\n%s", srv.Stderr)
		}
		st.Kills++
		if p {
			st.DuringPost++
		}
		if d {
			st.DuringDurable++
		}

		// Restart: a consistent datadir at or above every flushed tip an
		// answer reported, with every durable block in it.
		if srv, err = StartServer(bin, dir, serveArgs(store)...); err != nil {
			t.Fatal(err)
		}
		tip := checkTip(t, c, srv, client)
		checkFlushedAtTip(t, srv, client, tip)
		tipPos := -1
		if p, ok := c.Pos[tip.hash]; ok {
			tipPos = p
		}
		for _, a := range acks {
			st.Posted++
			if a.asked {
				st.DurableAsked++
			}
			maxFlushed = max(maxFlushed, a.answer.FlushedHeight)
			switch {
			case a.answer.Durable:
				st.Durable++
				durables = append(durables, a)
			case a.answer.Status == "connected" && a.pos > tipPos:
				st.Lost++ // acknowledged, not durable, past the reopened tip
			}
		}
		checkDurables(t, c, srv, client, store, tip, durables)
		st.Checked += len(durables)
		if tip.height < maxFlushed {
			t.Fatalf("%s: reopened at %d, below the flushed height %d an answer reported", store, tip.height, maxFlushed)
		}
		next = tipPos + 1
	}
	// Finish the chain and compare with the uninterrupted run.
	for ; next < n; next++ {
		if err := post(srv, next, next%7 == 0); err != nil {
			t.Fatal(err)
		}
	}
	checkFinal(t, c, srv, client)
	if err := srv.Stop(time.Minute); err != nil {
		t.Fatalf("clean stop: %v\n%s", err, srv.Stderr)
	}
	st.Elapsed = time.Since(start)
	if st.Durable == 0 {
		t.Errorf("no answer was durable")
	}
	return st
}

// checkDurables: every block answered durable is known and valid after the
// restart at tip, and on the active chain while its answer's flushed tip
// is.
func checkDurables(t *testing.T, c *Corpus, srv *Server, client *http.Client, store string, tip tipInfo, durables []ack) {
	t.Helper()
	onChain := map[int]bool{}
	for _, i := range c.Ancestors(tip.hash) {
		onChain[i] = true
	}
	for _, a := range durables {
		r, err := srv.Get(context.Background(), client, "/v1/blocks/"+a.answer.Hash)
		var bi struct {
			Status        string `json:"status"`
			InActiveChain bool   `json:"in_active_chain"`
		}
		if err != nil || r.Status != 200 || json.Unmarshal(r.Body, &bi) != nil || bi.Status != "valid" {
			t.Fatalf("%s: block %d answered durable (flushed %d) is not valid after the restart at %d: %v %d %s",
				store, a.pos, a.answer.FlushedHeight, tip.height, err, r.Status, r.Body)
		}
		if p, ok := c.Pos[a.flushed]; ok && onChain[p] && !bi.InActiveChain {
			t.Fatalf("%s: block %d answered durable at flushed tip %d is off the chain reopened at %d", store, a.pos, a.answer.FlushedHeight, tip.height)
		}
	}
}

// checkFlushedAtTip: a restarted server's flushed tip is the tip it
// reopened at (/v1/tip and /healthz).
func checkFlushedAtTip(t *testing.T, srv *Server, client *http.Client, tip tipInfo) {
	t.Helper()
	for _, path := range []string{"/v1/tip", "/healthz"} {
		r, err := srv.Get(context.Background(), client, path)
		var f struct {
			Height int32  `json:"flushed_height"`
			Hash   string `json:"flushed_hash"`
		}
		if err != nil || r.Status != 200 || json.Unmarshal(r.Body, &f) != nil {
			t.Fatalf("GET %s: %v %d %s", path, err, r.Status, r.Body)
		}
		if f.Height != tip.height || f.Hash != tip.hash.String() {
			t.Fatalf("%s after a restart: flushed %d %s, reopened at %d %s", path, f.Height, f.Hash, tip.height, tip.hash)
		}
	}
}
