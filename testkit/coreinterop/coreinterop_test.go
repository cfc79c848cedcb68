// Package coreinterop checks utxod against a real Bitcoin Core (opt-in:
// UTXOD_BITCOIND=/path/to/bitcoind, built by bench/scripts/build-core.sh;
// `make test-core BITCOIND=...`). Skipped otherwise; `make test` never
// needs a bitcoind.
package coreinterop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"utxod/testkit/bitcoind"
	"utxod/testkit/chaingen"
)

func buildUtxod(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "utxod")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/utxod")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(out)))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/utxod: %v\n%s", err, out)
	}
	return bin
}

// firstDiff shows where a and b first differ.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-80)
	return fmt.Sprintf("%d and %d bytes, first difference at byte %d: Core …%q…, utxod …%q…", len(a), len(b), i,
		a[lo:min(len(a), i+120)], b[lo:min(len(b), i+120)])
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

type chainstateJSON struct {
	Height          int    `json:"height"`
	BestBlock       string `json:"bestblock"`
	TxOuts          uint64 `json:"txouts"`
	Transactions    uint64 `json:"transactions"`
	BogoSize        uint64 `json:"bogosize"`
	TotalAmountSat  int64  `json:"total_amount_sat"`
	MuHash          string `json:"muhash"`
	HashSerialized3 string `json:"hash_serialized_3"`
}

// server is a running `utxod serve --follow`.
type server struct {
	cmd  *exec.Cmd
	url  string
	done chan error
	log  *bytes.Buffer
}

func startServe(t *testing.T, bin, datadir, source string) *server {
	t.Helper()
	port, err := bitcoind.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{url: fmt.Sprintf("http://127.0.0.1:%d", port), done: make(chan error, 1), log: &bytes.Buffer{}}
	s.cmd = exec.Command(bin, "serve", "--network", "regtest", "--datadir", datadir, "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--follow", source, "--follow-poll", "100ms", "--archive", "--log-level", "warn")
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	return s
}

func (s *server) stop(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("utxod serve exited: %v\n%s", err, s.log)
		}
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		t.Errorf("utxod serve did not stop within a minute")
	}
}

// waitTip waits until utxod's tip is hash.
func (s *server) waitTip(t *testing.T, hash string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	var last chainstateJSON
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			t.Fatalf("utxod serve exited: %v\n%s", err, s.log)
		default:
		}
		if resp, err := http.Get(s.url + "/v1/chainstate?hash_type=none"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if json.Unmarshal(b, &last) == nil && last.BestBlock == hash {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("utxod at %s height %d, want tip %s\n%s", last.BestBlock, last.Height, hash, s.log)
}

// checkDigests compares utxod's chainstate with Core's gettxoutsetinfo,
// hash_serialized_3 and muhash.
func checkDigests(t *testing.T, ctx context.Context, node *bitcoind.Node, s *server) {
	t.Helper()
	_, b := get(t, s.url+"/v1/chainstate?hash_type=hash_serialized_3")
	var u chainstateJSON
	if err := json.Unmarshal(b, &u); err != nil {
		t.Fatalf("/v1/chainstate: %v: %s", err, b)
	}
	for _, ht := range []string{"hash_serialized_3", "muhash"} {
		c, err := node.TxOutSetInfo(ctx, ht)
		if err != nil {
			t.Fatal(err)
		}
		got := u.HashSerialized3
		want := c.HashSerialized3
		if ht == "muhash" {
			got, want = u.MuHash, c.MuHash
		}
		if got != want || u.BestBlock != c.BestBlock || u.Height != c.Height || u.TxOuts != c.TxOuts ||
			u.Transactions != c.Transactions || u.BogoSize != c.BogoSize || u.TotalAmountSat != int64(c.TotalAmount*1e8+0.5) {
			t.Errorf("%s: utxod %+v, Core %+v", ht, u, *c)
		} else {
			t.Logf("height %d %s: %s %s (Core and utxod)", c.Height, c.BestBlock, ht, want)
		}
	}
}

type block struct {
	Hash   string   `json:"hash"`
	Height int      `json:"height"`
	Tx     []string `json:"tx"`
}

// checkREST compares utxod's REST answers with Core's, byte for byte, for
// the blocks at heights.
func checkREST(t *testing.T, ctx context.Context, node *bitcoind.Node, s *server, heights []int) {
	t.Helper()
	var paths []string
	var outpoints []string
	for _, h := range heights {
		var hash string
		if err := node.CallInto(ctx, &hash, "getblockhash", h); err != nil {
			t.Fatal(err)
		}
		var blk block
		if err := node.CallInto(ctx, &blk, "getblock", hash, 1); err != nil {
			t.Fatal(err)
		}
		for i, txid := range blk.Tx {
			if i < 2 && len(outpoints) < 15 {
				outpoints = append(outpoints, txid+"-0")
			}
		}
		paths = append(paths,
			"/rest/block/"+hash+".bin", "/rest/block/"+hash+".hex",
			"/rest/block/notxdetails/"+hash+".bin", "/rest/block/notxdetails/"+hash+".json",
			"/rest/headers/5/"+hash+".bin", "/rest/headers/5/"+hash+".hex", "/rest/headers/5/"+hash+".json",
			"/rest/headers/"+hash+".hex?count=3", "/rest/headers/"+hash+".json?count=2000",
			fmt.Sprintf("/rest/blockhashbyheight/%d.bin", h), fmt.Sprintf("/rest/blockhashbyheight/%d.hex", h),
			fmt.Sprintf("/rest/blockhashbyheight/%d.json", h))
	}
	ops := strings.Join(outpoints, "/")
	paths = append(paths, "/rest/getutxos/"+ops+".bin", "/rest/getutxos/"+ops+".hex", "/rest/getutxos/"+ops+".json",
		"/rest/getutxos/checkmempool/"+outpoints[0]+".json", "/rest/blockhashbyheight/999999.json")
	same := 0
	for _, p := range paths {
		cs, cb := get(t, node.URL()+p)
		us, ub := get(t, s.url+p)
		if cs != us || !bytes.Equal(cb, ub) {
			if cs != 200 && us == cs { // error bodies: Core answers text/plain, utxod problem+json
				same++
				continue
			}
			t.Errorf("GET %s: Core %d, utxod %d: %s", p, cs, us, firstDiff(cb, ub))
			continue
		}
		same++
	}
	t.Logf("%d of %d REST answers byte-identical to Core's", same, len(paths))

	// /rest/spenttxouts (Core v30) of the last block.
	var hash string
	_ = node.CallInto(ctx, &hash, "getblockhash", heights[len(heights)-1])
	for _, ext := range []string{".bin", ".hex", ".json"} {
		p := "/rest/spenttxouts/" + hash + ext
		cs, cb := get(t, node.URL()+p)
		us, ub := get(t, s.url+p)
		if cs != 200 || cs != us || !bytes.Equal(cb, ub) {
			t.Errorf("GET %s: Core %d, utxod %d: %s", p, cs, us, firstDiff(cb, ub))
		}
	}

	// /rest/chaininfo.json: the fields both can know.
	var cc, uc map[string]any
	_, cb := get(t, node.URL()+"/rest/chaininfo.json")
	_, ub := get(t, s.url+"/rest/chaininfo.json")
	if err := json.Unmarshal(cb, &cc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ub, &uc); err != nil {
		t.Fatalf("utxod chaininfo: %v: %s", err, ub)
	}
	for _, k := range []string{"chain", "blocks", "headers", "bestblockhash", "bits", "target", "difficulty", "time", "mediantime", "chainwork", "pruned"} {
		if _, ok := cc[k]; !ok {
			continue
		}
		if fmt.Sprint(cc[k]) != fmt.Sprint(uc[k]) {
			t.Errorf("/rest/chaininfo.json %s: Core %v, utxod %v", k, cc[k], uc[k])
		}
	}
}

func TestCoreInterop(t *testing.T) {
	bin := os.Getenv("UTXOD_BITCOIND")
	if bin == "" {
		t.Skip("set UTXOD_BITCOIND=/path/to/bitcoind (bench/scripts/build-core.sh) to run the Core interop test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	dir := t.TempDir()
	utxod := buildUtxod(t, dir)

	// A chaingen chain of the modern profile (segwit and taproot spends) loaded into Core.
	data, sum, err := chaingen.Generate(chaingen.Config{Profile: chaingen.ProfileModern, Seed: 7, TargetInputs: 30000})
	if err != nil {
		t.Fatal(err)
	}
	genHeight := int(sum.Height)
	corpus := filepath.Join(dir, "chain.dat")
	if err := os.WriteFile(corpus, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("chaingen: %d blocks, %d inputs, %d utxos", sum.Blocks, sum.Inputs, sum.UTXOs)
	node, err := bitcoind.Start(ctx, bin, filepath.Join(dir, "core"), "-loadblock="+corpus, "-assumevalid=0", "-acceptnonstdtxn=1")
	if err != nil {
		t.Fatal(err)
	}
	defer node.Stop(context.Background())
	if err := node.WaitHeight(ctx, genHeight, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	mine := func(n int, script string) string {
		var hashes []string
		if err := node.CallInto(ctx, &hashes, "generatetodescriptor", n, "raw("+script+")"); err != nil {
			t.Fatal(err)
		}
		return hashes[len(hashes)-1]
	}
	tip := mine(5, "51")

	datadir := filepath.Join(dir, "utxod-data")
	srv := startServe(t, utxod, datadir, node.URL())
	srv.waitTip(t, tip)
	checkDigests(t, ctx, node, srv)
	checkREST(t, ctx, node, srv, []int{1, 101, genHeight - 2, genHeight, genHeight + 5})

	// A reorg: Core invalidates the last 8 blocks (3 of chaingen's, with
	// their transactions, and the 5 mined) and mines a longer branch
	// paying another script (the transactions it disconnected return to
	// its mempool and may confirm again there).
	var forkHash string
	if err := node.CallInto(ctx, &forkHash, "getblockhash", genHeight-2); err != nil {
		t.Fatal(err)
	}
	if _, err := node.Call(ctx, "invalidateblock", forkHash); err != nil {
		t.Fatal(err)
	}
	tip = mine(12, "52")
	srv.waitTip(t, tip)
	var info map[string]any
	_ = node.CallInto(ctx, &info, "getblockchaininfo")
	t.Logf("after the reorg: Core at height %v %v", info["blocks"], info["bestblockhash"])
	checkDigests(t, ctx, node, srv)
	checkREST(t, ctx, node, srv, []int{genHeight - 3, genHeight - 2, genHeight + 2, genHeight + 9})
	srv.stop(t)

	// dumptxoutset against utxod snapshot dump, byte for byte.
	coreDump := filepath.Join(dir, "core.utxo")
	var dumped map[string]any
	if err := node.CallInto(ctx, &dumped, "dumptxoutset", coreDump, "latest"); err != nil {
		t.Fatal(err)
	}
	ourDump := filepath.Join(dir, "utxod.utxo")
	if out, err := exec.Command(utxod, "snapshot", "dump", "--network", "regtest", "--datadir", datadir, "-o", ourDump).CombinedOutput(); err != nil {
		t.Fatalf("utxod snapshot dump: %v\n%s", err, out)
	}
	a, _ := os.ReadFile(coreDump)
	b, _ := os.ReadFile(ourDump)
	if !bytes.Equal(a, b) {
		t.Errorf("dumptxoutset (%d bytes) and utxod snapshot dump (%d bytes) differ", len(a), len(b))
	} else {
		t.Logf("dumptxoutset and utxod snapshot dump: %d bytes, identical (%v coins)", len(a), dumped["coins_written"])
	}
}
