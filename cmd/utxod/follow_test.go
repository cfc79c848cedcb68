package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"utxod/params"
	"utxod/testkit/chaingen"
	"utxod/testkit/corerest"
	"utxod/wire"
)

var (
	sampleOnce   sync.Once
	sampleBlocks [][]byte
)

// mainnetSample returns the bundled sample's blocks 0..14131.
func mainnetSample(t testing.TB) [][]byte {
	t.Helper()
	sampleOnce.Do(func() {
		f, err := os.Open(sample)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if sampleBlocks, err = wire.ReadAllBlocks(f, params.MainNet().Magic); err != nil {
			t.Fatal(err)
		}
	})
	return sampleBlocks
}

// fakeCore serves mainnet blocks 0..top (of which the first `reveal`
// are visible) as Bitcoin Core's REST interface.
func fakeCore(t testing.TB, top, reveal int) (*corerest.Server, string) {
	t.Helper()
	src := corerest.New(params.MainNet())
	if err := src.Add(mainnetSample(t)[1 : top+1]...); err != nil {
		t.Fatal(err)
	}
	src.Reveal(reveal + 1)
	ts := httptest.NewServer(src)
	t.Cleanup(ts.Close)
	return src, ts.URL
}

// checkDigests compares a gettxoutsetinfo object with the reference.
func checkDigests(t testing.TB, what string, got map[string]any, ref map[string]any) {
	t.Helper()
	for _, k := range []string{"height", "bestblock", "txouts", "bogosize", "transactions", "total_amount_sat", "muhash", "hash_serialized_3"} {
		if fmt.Sprint(got[k]) != fmt.Sprint(ref[k]) {
			t.Errorf("%s: %s = %v, want %v", what, k, got[k], ref[k])
		}
	}
}

func TestFollowCommand(t *testing.T) {
	src, url := fakeCore(t, 2016, 1000)
	dir := filepath.Join(t.TempDir(), "data")
	follow := func(extra ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		args := append([]string{"follow", "--follow", url, "--datadir", dir, "--log-level", "warn", "--json"}, extra...)
		code := run(args, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, out, errs := follow()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	checkDigests(t, "first run", got, referenceAt(t, 1000))
	// The source moves on; a second run resumes from the datadir.
	src.RevealAll()
	if code, out, errs = follow(); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got = nil
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	checkDigests(t, "resumed", got, referenceAt(t, 2016))
	if n := src.Requests("block"); n != 2016 {
		t.Errorf("%d block requests for 2016 blocks", n)
	}
}

func TestFollowCommandRejects(t *testing.T) {
	src, url := fakeCore(t, 300, 300)
	bad := wire.DoubleSHA256(mainnetSample(t)[200][:wire.HeaderSize])
	src.BlockFault(bad, corerest.Corrupt, 0)
	var stdout, stderr bytes.Buffer
	code := run([]string{"follow", "--follow", url, "--datadir", filepath.Join(t.TempDir(), "d"), "--log-level", "error"}, &stdout, &stderr)
	want := fmt.Sprintf("block %s height 200 rejected: bad-txnmrklroot", bad)
	if code != 1 || !strings.Contains(stderr.String(), want) {
		t.Fatalf("exit %d, stderr %s; want %q", code, stderr.String(), want)
	}
}

func TestFollowCommandFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"follow", "--help"}, 0, "-follow-concurrency"},
		{[]string{"follow"}, 2, "--follow URL is required"},
		{[]string{"follow", "--follow", "ftp://x"}, 2, "want http://host:port"},
		{[]string{"follow", "--follow", "http://127.0.0.1:1", "--follow-concurrency", "0"}, 2, "--follow-concurrency"},
		{[]string{"follow", "--follow", "http://127.0.0.1:1", "--follow-poll", "-1s"}, 2, "--follow-poll"},
		{[]string{"follow", "--follow", "http://127.0.0.1:1", "extra"}, 2, "unexpected argument"},
		{[]string{"serve", "--follow", "ftp://x", "--listen", "127.0.0.1:0"}, 2, "--follow"},
		{[]string{"follow", "--follow", "http://127.0.0.1:1", "--max-failures", "2", "--follow-timeout", "1s"}, 1, "giving up after 2 failed attempts"},
		{[]string{"serve", "--help"}, 0, "-follow"},
		{[]string{"help"}, 0, "follow "},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.out) {
			t.Errorf("%v: code %d\n%s%s", tc.args, code, stdout.String(), stderr.String())
		}
	}
}

// inProcess is a running serve() in this process.
type inProcess struct {
	base   string
	cancel context.CancelFunc
	done   chan int
	stderr *bytes.Buffer
}

func startInProcess(t *testing.T, args ...string) *inProcess {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &inProcess{cancel: cancel, done: make(chan int, 1), stderr: &bytes.Buffer{}}
	ready := make(chan string, 1)
	var mu sync.Mutex
	w := writerFunc(func(b []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return p.stderr.Write(b) })
	go func() {
		p.done <- serve(ctx, append([]string{"--listen", "127.0.0.1:0", "--log-level", "warn"}, args...), io.Discard, w,
			func(addr, _ string) { ready <- addr })
	}()
	select {
	case a := <-ready:
		p.base = "http://" + a
	case code := <-p.done:
		t.Fatalf("serve exited %d: %s", code, p.stderr)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	t.Cleanup(func() { p.stop(t) })
	return p
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func (p *inProcess) stop(t *testing.T) {
	t.Helper()
	if p.cancel == nil {
		return
	}
	p.cancel()
	p.cancel = nil
	select {
	case code := <-p.done:
		if code != 0 {
			t.Errorf("serve exit %d: %s", code, p.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Error("serve did not stop")
	}
}

func getJSON(t testing.TB, url string) map[string]any {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return m
}

// waitInSync waits until base's /healthz says in_sync at height.
func waitInSync(t testing.TB, base string, height int) map[string]any {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		h := getJSON(t, base+"/healthz")
		if h["in_sync"] == true && h["height"] == float64(height) {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not in sync at %d: %v", base, height, h)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeFollowChain: a utxod follows a fake Core source, a second utxod
// follows the first; both end with the reference digests, /metrics and
// /healthz report the following, and /rest/block serves the primary's
// blocks byte for byte.
func TestServeFollowChain(t *testing.T) {
	src, url := fakeCore(t, 2016, 1000)
	dir := t.TempDir()
	poll := []string{"--follow-poll", "20ms"}
	primary := startInProcess(t, append([]string{"--follow", url, "--archive", "--datadir", filepath.Join(dir, "p")}, poll...)...)
	replica := startInProcess(t, append([]string{"--follow", primary.base, "--datadir", filepath.Join(dir, "r")}, poll...)...)
	for _, stage := range []struct{ reveal, height int }{{1000, 1000}, {2016, 2016}} {
		src.Reveal(stage.reveal + 1)
		for _, n := range []*inProcess{primary, replica} {
			h := waitInSync(t, n.base, stage.height)
			if f := h["follow"].(map[string]any); f["state"] != "in-sync" || f["source_height"] != float64(stage.height) {
				t.Fatalf("follow %v", f)
			}
			got := getJSON(t, n.base+"/v1/chainstate?hash_type=hash_serialized_3")
			got["muhash"] = getJSON(t, n.base+"/v1/chainstate")["muhash"]
			checkDigests(t, fmt.Sprintf("%s at %d", n.base, stage.height), got, referenceAt(t, stage.height))
		}
	}
	resp, err := http.Get(replica.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"utxod_follow_height 2016", "utxod_follow_source_height 2016", "utxod_follow_in_sync 1",
		`utxod_follow_blocks_total{status="connected"} 2016`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// The primary keeps every block (--archive): block 1 byte for byte.
	resp, err = http.Get(primary.base + "/rest/block/" + wire.DoubleSHA256(mainnetSample(t)[1][:80]).String() + ".bin")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(raw, mainnetSample(t)[1]) {
		t.Fatalf("primary's block 1: %d %d bytes", resp.StatusCode, len(raw))
	}
	replica.stop(t)
	primary.stop(t)
	// Graceful shutdown flushed: the datadirs reopen at 2016.
	for _, d := range []string{"p", "r"} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"chainstate", "--datadir", filepath.Join(dir, d), "--json", "--hash-type", "none"}, &stdout, &stderr); code != 0 {
			t.Fatalf("chainstate %s: %d %s", d, code, stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &m); err != nil || m["height"] != 2016.0 {
			t.Fatalf("%s reopened at %v (%v)", d, m["height"], err)
		}
	}
}

// TestServeFollowReorgs: the utxod-to-utxod path through reorgs. The fake
// source shows a chaingen chain with reorg events a few blocks at a time;
// a primary follows it and a replica follows the primary; both end on the
// generator's tip with its UTXO count and total.
func TestServeFollowReorgs(t *testing.T) {
	data, sum, err := chaingen.Generate(chaingen.Config{Profile: chaingen.ProfileModern, Seed: 7, Blocks: 70, MaxTxs: 6, Reorgs: 3})
	if err != nil {
		t.Fatal(err)
	}
	p := params.RegTest()
	blocks, err := wire.ReadAllBlocks(bytes.NewReader(data), p.Magic)
	if err != nil {
		t.Fatal(err)
	}
	src := corerest.New(p)
	if err := src.Add(blocks...); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(src)
	defer ts.Close()
	poll := []string{"--network", "regtest", "--follow-poll", "10ms"}
	primary := startInProcess(t, append([]string{"--follow", ts.URL}, poll...)...)
	replica := startInProcess(t, append([]string{"--follow", primary.base}, poll...)...)
	reorgs := 0.0
	for n := 1; n <= src.Loaded(); n += 3 {
		src.Reveal(n)
		tip, height := src.Tip()
		for _, node := range []*inProcess{primary, replica} {
			h := waitInSync(t, node.base, int(height))
			if h["tip"] != tip.String() {
				t.Fatalf("%s: tip %v, source %s", node.base, h["tip"], tip)
			}
			if node == replica {
				reorgs = h["follow"].(map[string]any)["reorgs"].(float64)
			}
		}
	}
	src.RevealAll()
	waitInSync(t, primary.base, int(sum.Height))
	waitInSync(t, replica.base, int(sum.Height))
	for _, node := range []*inProcess{primary, replica} {
		cs := getJSON(t, node.base+"/v1/chainstate")
		if cs["bestblock"] != sum.Tip.String() || cs["txouts"] != float64(sum.UTXOs) || cs["total_amount_sat"] != float64(sum.TotalAmount) {
			t.Fatalf("%s: %v; generator %s %d %d", node.base, cs, sum.Tip, sum.UTXOs, sum.TotalAmount)
		}
	}
	if reorgs < 1 {
		t.Errorf("the replica saw no reorg (generator made %d)", sum.Reorgs)
	}
}

// TestFollowAssumeValid: assume-valid applies to following as to import:
// the follower learns the source's headers first, so the bad signature at
// avBad, buried two weeks of work under the best header, is skipped with
// --assume-valid at the tip and refused with --assume-valid 0.
func TestFollowAssumeValid(t *testing.T) {
	path, tip := writeAVChain(t)
	p := params.RegTest()
	src := corerest.New(p)
	if _, err := src.LoadFile(path, p.Magic); err != nil {
		t.Fatal(err)
	}
	src.RevealAll()
	ts := httptest.NewServer(src)
	defer ts.Close()
	for _, c := range []struct {
		av      string
		code    int
		assumed any
	}{
		{tip.String(), 0, float64(avBad)},
		{"0", 1, nil},
	} {
		var out, errb bytes.Buffer
		code := run([]string{"follow", "--network", "regtest", "--follow", ts.URL, "--assume-valid", c.av, "--json", "--log-level", "warn"}, &out, &errb)
		if code != c.code {
			t.Fatalf("--assume-valid %s: exit %d: %s", c.av, code, errb.String())
		}
		if code != 0 {
			if want := fmt.Sprintf("height %d rejected: block-script-verify-flag-failed", avBad); !strings.Contains(errb.String(), want) {
				t.Fatalf("stderr %s, want %q", errb.String(), want)
			}
			continue
		}
		var got map[string]any
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if got["height"] != float64(avTip) || got["bestblock"] != tip.String() || got["assumed_valid_height"] != c.assumed {
			t.Fatalf("height %v bestblock %v assumed_valid_height %v", got["height"], got["bestblock"], got["assumed_valid_height"])
		}
	}
}
