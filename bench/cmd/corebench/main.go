// Command corebench measures utxod beside a real Bitcoin Core on one regtest
// corpus (opt-in; bench/results/core.md; `make bench-core BITCOIND=...`):
//
//   - dump: Core's dumptxoutset (an RPC on the running node: wall of the
//     call, CPU from /proc/PID/stat before and after) against `utxod
//     snapshot dump` (whole process: wall, CPU, peak RSS), files compared
//     byte for byte;
//   - follow: `utxod follow` of that bitcoind over REST against `utxod
//     import` of the same corpus (whole processes, fresh datadirs; Core's
//     CPU while serving is reported apart);
//   - scan: Core's scantxoutset against utxod's POST /v1/scan without and
//     with the scripthash index (wall of the call);
//   - REST load: wrk on Core's /rest/getutxos, utxod's /rest/getutxos and
//     utxod's POST /v1/utxos/batch (same coins; requests/s, server CPU per
//     request);
//   - load: `utxod snapshot load` of Core's dump; Core's loadtxoutset of the
//     same file is tried and its answer recorded (regtest's assumeutxo table
//     only knows heights 110, 200 and 299 of Core's functional-test chain).
//
// Arms alternate ABBA (rotate with three) over --rounds rounds; medians
// and min–max are printed as Markdown and written with every run as JSON.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"utxod/bench"
	"utxod/testkit/bitcoind"
)

// Sample is one measured operation.
type Sample struct {
	Phase, Arm string
	Round      int
	WallS      float64 `json:"wall_s"`
	CPUS       float64 `json:"cpu_s"`
	RSSMiB     float64 `json:"rss_mib,omitempty"`
	ReqPerS    float64 `json:"req_per_s,omitempty"`
	LatencyMs  float64 `json:"latency_ms,omitempty"`
	CPUPerReq  float64 `json:"cpu_us_per_req,omitempty"`
	SourceCPUS float64 `json:"source_cpu_s,omitempty"`
	Note       string  `json:"note,omitempty"`
}

type result struct {
	Host      bench.HostIdentity   `json:"host"`
	Git       bench.GitIdentity    `json:"git"`
	Corpus    bench.CorpusIdentity `json:"corpus"`
	Core      string               `json:"core_version"`
	LoadStart [3]float64           `json:"load_start"`
	LoadEnd   [3]float64           `json:"load_end"`
	Samples   []Sample             `json:"samples"`
	Notes     []string             `json:"notes"`
}

var (
	bitcoindBin = flag.String("bitcoind", "", "bitcoind (bench/scripts/build-core.sh)")
	utxodBin    = flag.String("utxod", "bin/utxod", "utxod")
	corpus      = flag.String("corpus", "", "regtest block file (Core framing)")
	rounds      = flag.Int("rounds", 3, "rounds per phase")
	backend     = flag.String("backend", "pebble", "utxod store")
	cacheMB     = flag.Int("cache-mb", 450, "utxod --cache-mb and Core -dbcache")
	workdir     = flag.String("workdir", "", "scratch directory (default: a temporary one)")
	wrkSeconds  = flag.Int("wrk-seconds", 10, "duration of one wrk run")
	wrkConns    = flag.Int("wrk-conns", 16, "wrk connections")
	auBitcoind  = flag.String("bitcoind-assumeutxo", "", "a bitcoind whose regtest assumeutxo table has the corpus tip (bench/scripts/build-core.sh --assumeutxo): times loadtxoutset against utxod snapshot load")
	phases      = flag.String("phases", "dump,follow,scan,rest,load", "phases to run")
	out         = flag.String("out", "", "directory for core.json and core-bench.md")
)

var res result

func main() {
	flag.Parse()
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "corebench:", err)
		os.Exit(1)
	}
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s corebench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// proc runs a command to completion and measures it (wall, rusage).
func proc(argv ...string) (Sample, []byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	s := Sample{WallS: time.Since(start).Seconds()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.CPUS = float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
		s.RSSMiB = float64(ru.Maxrss) / 1024
	}
	if err != nil {
		return s, stdout.Bytes(), fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, tail(stderr.String()))
	}
	return s, stdout.Bytes(), nil
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

// timed measures f's wall and pid's CPU over it.
func timed(pid int, f func() error) (Sample, error) {
	c0 := bitcoind.ProcCPU(pid)
	t0 := time.Now()
	err := f()
	return Sample{WallS: time.Since(t0).Seconds(), CPUS: bitcoind.ProcCPU(pid) - c0}, err
}

func add(s Sample, phase, arm string, round int) {
	s.Phase, s.Arm, s.Round = phase, arm, round
	res.Samples = append(res.Samples, s)
	logf("%s %s round %d: wall %.3fs cpu %.2fs rss %.0fMiB req/s %.0f %s", phase, arm, round, s.WallS, s.CPUS, s.RSSMiB, s.ReqPerS, s.Note)
}

// order is ABBA for two arms, rotation for more.
func order(arms []string, round int) []string { return bench.Order(arms, round+1)[round] }

type coin struct {
	txid   string
	vout   int
	script string
}

func run(ctx context.Context) error {
	if *bitcoindBin == "" || *corpus == "" {
		return errors.New("--bitcoind and --corpus are required")
	}
	var err error
	for _, p := range []*string{bitcoindBin, utxodBin, corpus} {
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
	}
	if *workdir == "" {
		if *workdir, err = os.MkdirTemp("", "corebench-"); err != nil {
			return err
		}
		defer os.RemoveAll(*workdir)
	}
	res.Host, res.Git, res.LoadStart = bench.HostInfo(), bench.GitInfo(ctx, "."), bench.LoadAvg()
	if res.Corpus, err = bench.ScanCorpus(*corpus, "regtest"); err != nil {
		return err
	}
	if v, err := exec.Command(*bitcoindBin, "-version").Output(); err == nil {
		for _, f := range strings.Fields(strings.SplitN(string(v), "\n", 2)[0]) {
			if len(f) > 1 && f[0] == 'v' && f[1] >= '0' && f[1] <= '9' {
				res.Core = f
			}
		}
	}
	want := strings.Split(*phases, ",")

	logf("setup: bitcoind -loadblock (height %d)", res.Corpus.Height)
	node, err := bitcoind.Start(ctx, *bitcoindBin, filepath.Join(*workdir, "core"), "-loadblock="+*corpus, "-assumevalid=0",
		"-dbcache="+strconv.Itoa(*cacheMB), "-rpcthreads=16", "-rpcworkqueue=1024")
	if err != nil {
		return err
	}
	defer node.Stop(context.Background())
	if err := node.WaitHeight(ctx, res.Corpus.Height, 20*time.Minute); err != nil {
		return err
	}
	info, err := node.TxOutSetInfo(ctx, "muhash")
	if err != nil {
		return err
	}
	logf("setup: utxod import (plain and --index scripthash)")
	plain, indexed := filepath.Join(*workdir, "u-plain"), filepath.Join(*workdir, "u-index")
	for _, d := range []struct{ dir, index string }{{plain, ""}, {indexed, "scripthash"}} {
		argv := []string{*utxodBin, "import", "--network", "regtest", "--datadir", d.dir, "--backend", *backend,
			"--cache-mb", strconv.Itoa(*cacheMB), "--json", "--hash-type", "muhash", "--log-level", "warn"}
		if d.index != "" {
			argv = append(argv, "--index", d.index)
		}
		_, o, err := proc(append(argv, *corpus)...)
		if err != nil {
			return err
		}
		dg, err := bench.ParseDigests(o)
		if err != nil {
			return err
		}
		if dg.MuHash != info.MuHash || dg.BestBlock != info.BestBlock {
			return fmt.Errorf("utxod import %s muhash %s at %s, Core %s at %s", d.dir, dg.MuHash, dg.BestBlock, info.MuHash, info.BestBlock)
		}
	}
	res.Notes = append(res.Notes, fmt.Sprintf("Core and utxod agree at height %d %s: muhash %s, %d txouts", info.Height, info.BestBlock, info.MuHash, info.TxOuts))
	coins, err := pickCoins(ctx, node, 15)
	if err != nil {
		return err
	}

	if slices.Contains(want, "dump") {
		if err := phaseDump(ctx, node, plain); err != nil {
			return err
		}
	}
	if slices.Contains(want, "load") {
		if err := phaseLoad(ctx, node); err != nil {
			return err
		}
	}
	if slices.Contains(want, "follow") {
		if err := phaseFollow(ctx, node); err != nil {
			return err
		}
	}
	if slices.Contains(want, "scan") || slices.Contains(want, "rest") {
		sp, err := serve(plain)
		if err != nil {
			return err
		}
		defer sp.stop()
		si, err := serve(indexed)
		if err != nil {
			return err
		}
		defer si.stop()
		if slices.Contains(want, "scan") {
			if err := phaseScan(ctx, node, sp, si, coins); err != nil {
				return err
			}
		}
		if slices.Contains(want, "rest") {
			if err := phaseREST(node, sp, si, coins); err != nil {
				return err
			}
		}
	}
	res.LoadEnd = bench.LoadAvg()
	md := render()
	fmt.Print(md)
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
		b, _ := json.MarshalIndent(&res, "", "  ")
		if err := os.WriteFile(filepath.Join(*out, "core.json"), b, 0o644); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(*out, "core-bench.md"), []byte(md), 0o644)
	}
	return nil
}

// pickCoins takes up to n unspent outputs (not OP_RETURN) from the last
// blocks, distinct scripts.
func pickCoins(ctx context.Context, node *bitcoind.Node, n int) ([]coin, error) {
	var height int
	if err := node.CallInto(ctx, &height, "getblockcount"); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var coins []coin
	for h := height; h > 0 && len(coins) < n; h-- {
		var hash string
		if err := node.CallInto(ctx, &hash, "getblockhash", h); err != nil {
			return nil, err
		}
		var blk struct {
			Tx []struct {
				Txid string `json:"txid"`
				Vout []struct {
					N            int `json:"n"`
					ScriptPubKey struct {
						Hex  string `json:"hex"`
						Type string `json:"type"`
					} `json:"scriptPubKey"`
				} `json:"vout"`
			} `json:"tx"`
		}
		if err := node.CallInto(ctx, &blk, "getblock", hash, 2); err != nil {
			return nil, err
		}
		for _, tx := range blk.Tx {
			for _, o := range tx.Vout {
				if len(coins) >= n || o.ScriptPubKey.Type == "nulldata" || seen[o.ScriptPubKey.Hex] {
					continue
				}
				r, err := node.Call(ctx, "gettxout", tx.Txid, o.N)
				if err != nil || string(r) == "null" {
					continue
				}
				seen[o.ScriptPubKey.Hex] = true
				coins = append(coins, coin{tx.Txid, o.N, o.ScriptPubKey.Hex})
			}
		}
	}
	if len(coins) == 0 {
		return nil, errors.New("no unspent outputs found")
	}
	return coins, nil
}

func phaseDump(ctx context.Context, node *bitcoind.Node, plain string) error {
	for r := range *rounds {
		for _, arm := range order([]string{"core", "utxod"}, r) {
			f := filepath.Join(*workdir, fmt.Sprintf("dump-%s-%d.utxo", arm, r))
			var s Sample
			var err error
			if arm == "core" {
				s, err = timed(node.Pid(), func() error { _, err := node.Call(ctx, "dumptxoutset", f, "latest"); return err })
			} else {
				s, _, err = proc(*utxodBin, "snapshot", "dump", "--network", "regtest", "--datadir", plain, "--backend", *backend, "-o", f)
			}
			if err != nil {
				return err
			}
			if st, err := os.Stat(f); err == nil {
				s.Note = fmt.Sprintf("%d bytes", st.Size())
			}
			add(s, "dump", arm, r+1)
		}
		a, _ := os.ReadFile(filepath.Join(*workdir, fmt.Sprintf("dump-core-%d.utxo", r)))
		b, _ := os.ReadFile(filepath.Join(*workdir, fmt.Sprintf("dump-utxod-%d.utxo", r)))
		if !bytes.Equal(a, b) {
			return fmt.Errorf("round %d: dumptxoutset (%d bytes) and utxod snapshot dump (%d bytes) differ", r+1, len(a), len(b))
		}
		if r == 0 {
			h := sha256.Sum256(a)
			res.Notes = append(res.Notes, fmt.Sprintf("dumptxoutset and utxod snapshot dump identical: %d bytes, sha256 %x", len(a), h))
			os.Rename(filepath.Join(*workdir, "dump-core-0.utxo"), filepath.Join(*workdir, "snapshot.utxo"))
		}
		for _, arm := range []string{"core", "utxod"} {
			os.Remove(filepath.Join(*workdir, fmt.Sprintf("dump-%s-%d.utxo", arm, r)))
		}
	}
	return nil
}

func phaseLoad(ctx context.Context, node *bitcoind.Node) error {
	snap := filepath.Join(*workdir, "snapshot.utxo")
	if _, err := os.Stat(snap); err != nil {
		return errors.New("load needs the dump phase's snapshot")
	}
	// The headers up to the base, which loadtxoutset needs in the index.
	var headers []string
	for h := 1; h <= res.Corpus.Height; h++ {
		var hash, hdr string
		if err := node.CallInto(ctx, &hash, "getblockhash", h); err != nil {
			return err
		}
		if err := node.CallInto(ctx, &hdr, "getblockheader", hash, false); err != nil {
			return err
		}
		headers = append(headers, hdr)
	}
	coreLoad := func(bin string, round int) (Sample, error) {
		d := filepath.Join(*workdir, fmt.Sprintf("core-load-%d", round))
		defer os.RemoveAll(d)
		n2, err := bitcoind.Start(ctx, bin, d, "-dbcache="+strconv.Itoa(*cacheMB))
		if err != nil {
			return Sample{}, err
		}
		defer n2.Stop(ctx)
		for _, h := range headers {
			if _, err := n2.Call(ctx, "submitheader", h); err != nil {
				return Sample{}, err
			}
		}
		var out map[string]any
		s, err := timed(n2.Pid(), func() error { return n2.CallInto(ctx, &out, "loadtxoutset", snap) })
		if err == nil {
			s.Note = fmt.Sprintf("%v coins", out["coins_loaded"])
		}
		return s, err
	}
	if _, err := coreLoad(*bitcoindBin, 0); err != nil {
		res.Notes = append(res.Notes, "stock Core's loadtxoutset of that snapshot: "+err.Error())
	}
	hs3 := ""
	out, _ := exec.Command(*utxodBin, "snapshot", "verify", snap, "--json", "--network", "regtest").Output()
	var v map[string]any
	_ = json.Unmarshal(out, &v)
	if h, ok := v["hash_serialized_3"].(string); ok {
		hs3 = h
	}
	arms := []string{"utxod"}
	if *auBitcoind != "" {
		arms = []string{"core-assumeutxo", "utxod"}
	}
	for r := range *rounds {
		for _, arm := range order(arms, r) {
			var s Sample
			var err error
			if arm == "utxod" {
				d := filepath.Join(*workdir, fmt.Sprintf("load-%d", r))
				s, _, err = proc(*utxodBin, "snapshot", "load", snap, "--network", "regtest", "--datadir", d, "--backend", *backend,
					"--cache-mb", strconv.Itoa(*cacheMB), "--expect-hash", hs3, "--height", strconv.Itoa(res.Corpus.Height), "--log-level", "warn")
				os.RemoveAll(d)
			} else {
				s, err = coreLoad(*auBitcoind, r+1)
			}
			if err != nil {
				return err
			}
			add(s, "load", arm, r+1)
		}
	}
	return nil
}

func phaseFollow(ctx context.Context, node *bitcoind.Node) error {
	for r := range *rounds {
		for _, arm := range order([]string{"import", "follow"}, r) {
			d := filepath.Join(*workdir, "fol-"+arm)
			argv := []string{*utxodBin, arm, "--network", "regtest", "--datadir", d, "--backend", *backend, "--cache-mb", strconv.Itoa(*cacheMB),
				"--json", "--hash-type", "muhash", "--log-level", "warn"}
			if arm == "follow" {
				argv = append(argv, "--follow", node.URL())
			} else {
				argv = append(argv, *corpus)
			}
			c0 := node.ProcCPU()
			s, o, err := proc(argv...)
			if err != nil {
				return err
			}
			if arm == "follow" {
				s.SourceCPUS = node.ProcCPU() - c0
			}
			dg, err := bench.ParseDigests(o)
			if err != nil {
				return err
			}
			if dg.Height != res.Corpus.Height {
				return fmt.Errorf("%s ended at height %d", arm, dg.Height)
			}
			s.Note = "muhash " + dg.MuHash[:16]
			add(s, "follow", arm, r+1)
			os.RemoveAll(d)
		}
	}
	return nil
}

type server struct {
	url string
	cmd *exec.Cmd
}

func serve(datadir string) (*server, error) {
	port, err := bitcoind.FreePort()
	if err != nil {
		return nil, err
	}
	s := &server{url: fmt.Sprintf("http://127.0.0.1:%d", port)}
	s.cmd = exec.Command(*utxodBin, "serve", "--network", "regtest", "--datadir", datadir, "--backend", *backend,
		"--cache-mb", strconv.Itoa(*cacheMB), "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--log-level", "warn")
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	for range 600 {
		if resp, err := http.Get(s.url + "/healthz"); err == nil {
			resp.Body.Close()
			return s, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.stop()
	return nil, errors.New("utxod serve did not come up")
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
}

func post(url, body string) ([]byte, error) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("POST %s: %d %s", url, resp.StatusCode, b)
	}
	return b, err
}

func phaseScan(ctx context.Context, node *bitcoind.Node, sp, si *server, coins []coin) error {
	var descs []string
	for _, c := range coins {
		descs = append(descs, "raw("+c.script+")")
	}
	body, _ := json.Marshal(map[string]any{"action": "start", "scanobjects": descs})
	type scanOut struct {
		Success     bool    `json:"success"`
		TotalAmount float64 `json:"total_amount"`
		Unspents    []any   `json:"unspents"`
	}
	var ref *scanOut
	for r := range *rounds {
		for _, arm := range order([]string{"core", "utxod-noindex", "utxod-index"}, r) {
			var o scanOut
			var s Sample
			var err error
			switch arm {
			case "core":
				s, err = timed(node.Pid(), func() error { return node.CallInto(ctx, &o, "scantxoutset", "start", descs) })
			default:
				srv := map[string]*server{"utxod-noindex": sp, "utxod-index": si}[arm]
				pid := srv.cmd.Process.Pid
				s, err = timed(pid, func() error {
					b, err := post(srv.url+"/v1/scan", string(body))
					if err == nil {
						err = json.Unmarshal(b, &o)
					}
					return err
				})
			}
			if err != nil {
				return fmt.Errorf("scan %s: %w", arm, err)
			}
			if ref == nil {
				ref = &o
			} else if len(o.Unspents) != len(ref.Unspents) || math.Abs(o.TotalAmount-ref.TotalAmount) > 1e-9 {
				return fmt.Errorf("scan %s: %d unspents %.8f, first scan %d %.8f", arm, len(o.Unspents), o.TotalAmount, len(ref.Unspents), ref.TotalAmount)
			}
			s.Note = fmt.Sprintf("%d unspents, %.8f BTC, %d scripts", len(o.Unspents), o.TotalAmount, len(descs))
			add(s, "scan", arm, r+1)
		}
	}
	return nil
}

var reqRE = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
var latRE = regexp.MustCompile(`Latency\s+([0-9.]+)(us|ms|s)`)

func wrk(url, script string, pid int) (Sample, error) {
	args := []string{"-t2", "-c" + strconv.Itoa(*wrkConns), "-d" + strconv.Itoa(*wrkSeconds) + "s"}
	if script != "" {
		args = append(args, "-s", script)
	}
	c0 := bitcoind.ProcCPU(pid)
	o, err := exec.Command("wrk", append(args, url)...).CombinedOutput()
	cpu := bitcoind.ProcCPU(pid) - c0
	if err != nil {
		return Sample{}, fmt.Errorf("wrk: %v: %s", err, o)
	}
	m := reqRE.FindSubmatch(o)
	if m == nil {
		return Sample{}, fmt.Errorf("wrk output: %s", o)
	}
	rps, _ := strconv.ParseFloat(string(m[1]), 64)
	s := Sample{WallS: float64(*wrkSeconds), CPUS: cpu, ReqPerS: rps}
	if l := latRE.FindSubmatch(o); l != nil {
		v, _ := strconv.ParseFloat(string(l[1]), 64)
		s.LatencyMs = v * map[string]float64{"us": 1e-3, "ms": 1, "s": 1e3}[string(l[2])]
	}
	if rps > 0 {
		s.CPUPerReq = cpu / (rps * float64(*wrkSeconds)) * 1e6
	}
	if strings.Contains(string(o), "Non-2xx") {
		s.Note = "non-2xx answers"
	}
	return s, nil
}

func phaseREST(node *bitcoind.Node, sp, si *server, coins []coin) error {
	var ops, shs []string
	for _, c := range coins {
		ops = append(ops, fmt.Sprintf("%s-%d", c.txid, c.vout))
		b, _ := hex.DecodeString(c.script)
		h := sha256.Sum256(b)
		slices.Reverse(h[:])
		shs = append(shs, hex.EncodeToString(h[:]))
	}
	path := "/rest/getutxos/" + strings.Join(ops, "/") + ".bin"
	a, _ := http.Get(node.URL() + path)
	ab, _ := io.ReadAll(a.Body)
	a.Body.Close()
	u, _ := http.Get(sp.url + path)
	ub, _ := io.ReadAll(u.Body)
	u.Body.Close()
	if !bytes.Equal(ab, ub) {
		return fmt.Errorf("getutxos answers differ: Core %x, utxod %x", ab, ub)
	}
	lua := filepath.Join(*workdir, "batch.lua")
	body, _ := json.Marshal(map[string]any{"scripthashes": shs})
	os.WriteFile(lua, []byte(fmt.Sprintf("wrk.method = \"POST\"\nwrk.body = %q\nwrk.headers[\"Content-Type\"] = \"application/json\"\n", body)), 0o644)
	if _, err := post(si.url+"/v1/utxos/batch", string(body)); err != nil {
		return err
	}
	res.Notes = append(res.Notes, fmt.Sprintf("REST load: %d outpoints per getutxos request (byte-identical answers), %d scripthashes per /v1/utxos/batch request (index); wrk -t2 -c%d -d%ds on the same 2 cores as the server", len(ops), len(shs), *wrkConns, *wrkSeconds))
	for r := range *rounds {
		for _, arm := range order([]string{"core-getutxos", "utxod-getutxos", "utxod-batch"}, r) {
			var s Sample
			var err error
			switch arm {
			case "core-getutxos":
				s, err = wrk(node.URL()+path, "", node.Pid())
			case "utxod-getutxos":
				s, err = wrk(sp.url+path, "", sp.cmd.Process.Pid)
			case "utxod-batch":
				s, err = wrk(si.url+"/v1/utxos/batch", lua, si.cmd.Process.Pid)
			}
			if err != nil {
				return err
			}
			add(s, "rest", arm, r+1)
			time.Sleep(time.Second)
		}
	}
	return nil
}

func render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Corpus %s (%d blocks, height %d), Core %s, utxod store %s, --cache-mb/-dbcache %d; host %s, %d cores, load %.2f/%.2f/%.2f at the start, %.2f/%.2f/%.2f at the end; commit %s.\n\n",
		filepath.Base(res.Corpus.Path), res.Corpus.Blocks, res.Corpus.Height, res.Core, *backend, *cacheMB, res.Host.CPUModel, res.Host.Cores,
		res.LoadStart[0], res.LoadStart[1], res.LoadStart[2], res.LoadEnd[0], res.LoadEnd[1], res.LoadEnd[2], shortHash(res.Git.Head))
	b.WriteString("| phase | arm | runs | wall s median (min–max) | CPU s median (min–max) | peak RSS MiB | req/s median (min–max) | CPU µs/req | note |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n")
	type key struct{ p, a string }
	var keys []key
	groups := map[key][]Sample{}
	for _, s := range res.Samples {
		k := key{s.Phase, s.Arm}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], s)
	}
	f := func(ss []Sample, g func(Sample) float64) (float64, float64, float64) {
		var xs []float64
		for _, s := range ss {
			xs = append(xs, g(s))
		}
		return bench.Median(xs), slices.Min(xs), slices.Max(xs)
	}
	for _, k := range keys {
		ss := groups[k]
		wm, wl, wh := f(ss, func(s Sample) float64 { return s.WallS })
		cm, cl, ch := f(ss, func(s Sample) float64 { return s.CPUS })
		rm, _, _ := f(ss, func(s Sample) float64 { return s.RSSMiB })
		qm, ql, qh := f(ss, func(s Sample) float64 { return s.ReqPerS })
		um, _, _ := f(ss, func(s Sample) float64 { return s.CPUPerReq })
		note := ss[0].Note
		if sm, _, _ := f(ss, func(s Sample) float64 { return s.SourceCPUS }); sm > 0 {
			note = fmt.Sprintf("source (bitcoind) CPU %.2f s", sm)
		}
		rps, cpr, rss := "", "", ""
		if qm > 0 {
			rps, cpr = fmt.Sprintf("%.0f (%.0f–%.0f)", qm, ql, qh), fmt.Sprintf("%.0f", um)
		}
		if rm > 0 {
			rss = fmt.Sprintf("%.0f", rm)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.3f (%.3f–%.3f) | %.2f (%.2f–%.2f) | %s | %s | %s | %s |\n", k.p, k.a, len(ss), wm, wl, wh, cm, cl, ch, rss, rps, cpr, note)
	}
	b.WriteString("\n")
	for _, n := range res.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	return b.String()
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
