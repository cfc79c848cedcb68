package torture

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"utxod/wire"
)

// wrkResult is what a wrk run reports.
type wrkResult struct {
	Requests  int64
	RPS       float64
	P50, P99  string
	Non2xx    int64
	SockErrs  int64
	RawOutput string
}

var (
	reRPS   = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	reReqs  = regexp.MustCompile(`(\d+) requests in`)
	reP50   = regexp.MustCompile(`\s50%\s+(\S+)`)
	reP99   = regexp.MustCompile(`\s99%\s+(\S+)`)
	reNon2  = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	reSockE = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

func parseWrk(out string) wrkResult {
	r := wrkResult{RawOutput: out}
	if m := reRPS.FindStringSubmatch(out); m != nil {
		r.RPS, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := reReqs.FindStringSubmatch(out); m != nil {
		r.Requests, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := reP50.FindStringSubmatch(out); m != nil {
		r.P50 = m[1]
	}
	if m := reP99.FindStringSubmatch(out); m != nil {
		r.P99 = m[1]
	}
	if m := reNon2.FindStringSubmatch(out); m != nil {
		r.Non2xx, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := reSockE.FindStringSubmatch(out); m != nil {
		for _, s := range m[1:] {
			n, _ := strconv.ParseInt(s, 10, 64)
			r.SockErrs += n
		}
	}
	return r
}

// TestLoadWhilePosting runs wrk at full speed against GET /v1/utxos/…
// (random outpoints known to exist) and GET /v1/chainstate while the second
// half of the corpus is POSTed, plus a Go reader checking that every
// /v1/chainstate and /v1/tip answer is one consistent state of the chain
// (height and bestblock of one block, every field equal to the clean run at
// it). No wrk errors, every POST 200, and the final hash_serialized_3 equals
// the uninterrupted run (no block lost).
func TestLoadWhilePosting(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Skip("wrk not installed (apt-get install wrk)")
	}
	secs := 5
	if n, err := strconv.Atoi(os.Getenv("UTXOD_TORTURE_LOAD_SECONDS")); err == nil && n > 0 {
		secs = n
	}
	bin, _ := binary(t)
	c := testCorpus(t)
	store := "pebble"
	if s := os.Getenv("UTXOD_TORTURE_LOAD_STORE"); s != "" {
		store = s
	}
	dir := filepath.Join(t.TempDir(), store)
	srv, err := StartServer(bin, dir, serveArgs(store)...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if !srv.Exited() {
			srv.Kill()
		}
	}()
	ctx := context.Background()
	client := newClient()
	half := len(c.Blocks) / 2
	for i := 0; i < half; i++ {
		if r, err := srv.Post(ctx, client, c.Blocks[i]); err != nil || r.Status != 200 {
			t.Fatalf("POST %d: %v %d %s", i, err, r.Status, r.Body)
		}
	}
	ops, err := c.StableOutpoints(half, 2000)
	if err != nil || len(ops) < 10 {
		t.Fatalf("stable outpoints: %d %v", len(ops), err)
	}
	lua := filepath.Join(t.TempDir(), "utxos.lua")
	var sb strings.Builder
	sb.WriteString("local ops = {\n")
	for _, o := range ops {
		fmt.Fprintf(&sb, "  %q,\n", o)
	}
	sb.WriteString("}\nmath.randomseed(os.time())\nrequest = function()\n  return wrk.format(\"GET\", \"/v1/utxos/\" .. ops[math.random(#ops)])\nend\n")
	if err := os.WriteFile(lua, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	height := map[wire.Hash]int32{}
	for _, h := range c.Hashes {
		height[h] = int32(len(c.Ancestors(h)))
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	// Writer: the second half, paced over the run.
	var posted, postErrs atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		pace := time.Duration(secs) * time.Second * 8 / 10 / time.Duration(len(c.Blocks)-half)
		for i := half; i < len(c.Blocks); i++ {
			r, err := srv.Post(ctx, client, c.Blocks[i])
			if err != nil || r.Status != 200 {
				postErrs.Add(1)
				t.Errorf("POST %d under load: %v %d %s", i, err, r.Status, r.Body)
				return
			}
			posted.Add(1)
			time.Sleep(pace)
		}
	}()
	// Consistency reader.
	var reads, tipReads atomic.Int64
	heightsSeen := map[int32]bool{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			r, err := srv.Get(ctx, client, "/v1/chainstate")
			if err != nil || r.Status != 200 {
				t.Errorf("GET /v1/chainstate: %v %d", err, r.Status)
				return
			}
			ti, err := infoOf(c, r.Body, "")
			if err != nil {
				t.Errorf("inconsistent read: %v", err)
				return
			}
			heightsSeen[ti.height] = true
			reads.Add(1)
			r, err = srv.Get(ctx, client, "/v1/tip")
			if err != nil || r.Status != 200 {
				t.Errorf("GET /v1/tip: %v %d", err, r.Status)
				return
			}
			var tip struct {
				Hash   string `json:"hash"`
				Height int32  `json:"height"`
			}
			_ = json.Unmarshal(r.Body, &tip)
			h, _ := wire.ParseHash(tip.Hash)
			if hh, ok := height[h]; !ok || hh != tip.Height {
				t.Errorf("/v1/tip %s at %d: the corpus has it at %d (known %v)", tip.Hash, tip.Height, hh, ok)
				return
			}
			tipReads.Add(1)
		}
	}()
	// wrk: utxos and chainstate at full speed, concurrently.
	type wrkRun struct {
		name string
		args []string
		res  wrkResult
		err  error
	}
	runs := []*wrkRun{
		{name: "GET /v1/utxos/{random outpoint}", args: []string{"-t1", "-c8", "-d" + strconv.Itoa(secs) + "s", "--latency", "-s", lua, srv.Base}},
		{name: "GET /v1/chainstate", args: []string{"-t1", "-c8", "-d" + strconv.Itoa(secs) + "s", "--latency", srv.Base + "/v1/chainstate"}},
	}
	var wwg sync.WaitGroup
	for _, r := range runs {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			out, err := exec.Command(wrk, r.args...).CombinedOutput()
			r.err = err
			r.res = parseWrk(string(out))
		}()
	}
	wwg.Wait()
	close(stop)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, r := range runs {
		if r.err != nil || r.res.Requests == 0 {
			t.Fatalf("wrk %s: %v\n%s", r.name, r.err, r.res.RawOutput)
		}
		if r.res.Non2xx != 0 || r.res.SockErrs != 0 {
			t.Errorf("wrk %s: %d non-2xx, %d socket errors\n%s", r.name, r.res.Non2xx, r.res.SockErrs, r.res.RawOutput)
		}
		t.Logf("%s on %s: %d requests in %ds, %.0f req/s, p50 %s, p99 %s, %d non-2xx, %d socket errors",
			r.name, store, r.res.Requests, secs, r.res.RPS, r.res.P50, r.res.P99, r.res.Non2xx, r.res.SockErrs)
	}
	if int(posted.Load()) != len(c.Blocks)-half {
		t.Fatalf("posted %d of %d blocks", posted.Load(), len(c.Blocks)-half)
	}
	checkFinal(t, c, srv, client)
	t.Logf("meanwhile: %d blocks POSTed (all 200), %d consistent /v1/chainstate reads over %d distinct heights, %d consistent /v1/tip reads; final hash_serialized_3 equals the uninterrupted run",
		posted.Load(), reads.Load(), len(heightsSeen), tipReads.Load())
	if err := srv.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
}
