// Command eventsbench measures GET /v1/events at scale with the clients in a
// process of their own (bench/results/events.md): it starts `utxod serve`
// on regtest (in memory), creates --streams subscriptions of --scripts
// scripthashes each (POST /v1/subscriptions, every one with blocks), opens
// an SSE stream for each, then POSTs --blocks blocks --every apart, each
// paying one watched script of every tenth stream, so every stream gets a
// block_connected per block and a tenth also an output_created.
//
// It reports the receipt latency of each (stream, block) pair's
// block_connected from the moment the block's POST returned (the block is
// connected by then; from the POST's start it is at most the POST's time
// more), the server's own delivery delay (utxod_events_delivery_seconds:
// from the chainstate's announcement to the end of the stream's write), the
// server's and the clients' CPU per block, and the server's memory per
// watched script.
//
//	eventsbench [--utxod bin/utxod] [--streams 10000] [--scripts 100]
//	            [--blocks 30] [--every 200ms] [--cpuprofile FILE] [--websocket]
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	btcwire "github.com/btcsuite/btcd/wire/v2"
	"github.com/coder/websocket"

	"utxod/internal/cli"
	"utxod/params"
	"utxod/testkit/blockgen"
)

const usage = `Usage: eventsbench [flags]

Starts utxod serve (regtest, in memory), opens --streams SSE streams of
--scripts watched scripts each from this process, POSTs --blocks blocks
--every apart and reports the streams' receipt latency, the server's
delivery delay, CPU per block and memory per watched script.
`

func main() { cli.Main(run) }

type config struct {
	utxod, cpuprofile, serverArgs string
	streams, scripts, blocks      int
	serverNice                    int
	every                         time.Duration
	websocket                     bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	t := cli.New("eventsbench", usage, stdout, stderr)
	fs := t.Flags
	var c config
	fs.StringVar(&c.utxod, "utxod", "bin/utxod", "utxod executable")
	fs.IntVar(&c.streams, "streams", 10000, "SSE streams")
	fs.IntVar(&c.scripts, "scripts", 100, "watched scripts per stream")
	fs.IntVar(&c.blocks, "blocks", 30, "blocks POSTed while the streams are open")
	fs.DurationVar(&c.every, "every", 200*time.Millisecond, "pause between blocks")
	fs.StringVar(&c.cpuprofile, "cpuprofile", "", "the server's CPU profile of the whole run (utxod serve --cpuprofile)")
	fs.BoolVar(&c.websocket, "websocket", false, "open the streams as WebSocket instead of SSE")
	fs.StringVar(&c.serverArgs, "server-args", "", "extra flags for utxod serve, space-separated")
	fs.IntVar(&c.serverNice, "server-nice", 0, "start the server under nice(1) with this adjustment: run eventsbench under 'nice -n 19' with --server-nice -19 (root) to give the server the CPUs first, as remote clients would")
	if code, done := t.Parse(args); done {
		return code
	}
	if fs.NArg() != 0 || c.streams <= 0 || c.scripts <= 0 || c.blocks <= 0 {
		return t.UsageError(errors.New("no arguments; --streams, --scripts and --blocks are positive"))
	}
	r, err := measure(ctx, c, t)
	if err != nil {
		return t.Fail(err)
	}
	io.WriteString(stdout, r)
	return cli.ExitOK
}

// server is the utxod serve child.
type server struct {
	cmd    *exec.Cmd
	base   string
	token  string
	exited chan error
	log    bytes.Buffer
	mu     sync.Mutex
}

func startServer(c config, dir string) (*server, error) {
	cookie := filepath.Join(dir, "cookie")
	args := []string{"serve", "--network", "regtest", "--listen", "127.0.0.1:0", "--cookie-file", cookie, "--log-level", "warn"}
	if c.cpuprofile != "" {
		args = append(args, "--cpuprofile", c.cpuprofile)
	}
	args = append(args, strings.Fields(c.serverArgs)...)
	cmd := exec.Command(c.utxod, args...)
	if c.serverNice != 0 { // nice execs utxod: the pid is the server's
		cmd = exec.Command("nice", append([]string{"-n", strconv.Itoa(c.serverNice), c.utxod}, args...)...)
	}
	s := &server{cmd: cmd, exited: make(chan error, 1)}
	pr, pw := io.Pipe()
	s.cmd.Stderr = pw
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.exited <- s.cmd.Wait(); pw.Close() }()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if _, rest, ok := strings.Cut(sc.Text(), "listening on http://"); ok {
				a, _, _ := strings.Cut(rest, " ")
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		s.base = "http://" + a
	case err := <-s.exited:
		return nil, fmt.Errorf("utxod serve exited: %v\n%s", err, s.logs())
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		return nil, fmt.Errorf("utxod serve did not start\n%s", s.logs())
	}
	tok, err := os.ReadFile(cookie)
	if err != nil {
		s.cmd.Process.Kill()
		return nil, err
	}
	s.token = strings.TrimSpace(string(tok))
	return s, nil
}

func (s *server) logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// stop ends the server with SIGTERM (its profile is written then).
func (s *server) stop() error {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		return err
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		return errors.New("utxod serve did not stop after SIGTERM")
	}
}

// cpu is the server's user+system CPU time so far (/proc/PID/stat).
func (s *server) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond // USER_HZ 100
}

// rss is the server's resident memory (/proc/PID/status VmRSS).
func (s *server) rss() int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n << 10
}

// metrics reads the server's /metrics: a sample by its full name (labels
// included), and the delivery histogram's buckets.
func (s *server) metrics() (map[string]float64, error) {
	resp, err := http.Get(s.base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// script is the P2WSH script stream i watches as its j-th.
func script(i, j int) []byte {
	var b [8]byte
	binary.LittleEndian.PutUint32(b[:], uint32(i))
	binary.LittleEndian.PutUint32(b[4:], uint32(j))
	h := sha256.Sum256(b[:])
	return append([]byte{0x00, 0x20}, h[:]...)
}

func measure(ctx context.Context, c config, t *cli.Tool) (string, error) {
	dir, err := os.MkdirTemp("", "eventsbench")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	srv, err := startServer(c, dir)
	if err != nil {
		return "", err
	}
	defer srv.cmd.Process.Kill()
	tr := &http.Transport{MaxIdleConnsPerHost: c.streams + 16, DisableCompression: true,
		DialContext: (&net.Dialer{Timeout: 30 * time.Second}).DialContext}
	client := &http.Client{Transport: tr}

	// Subscriptions, 8 at a time.
	t.Log.Info("subscribing", "streams", c.streams, "scripts", c.scripts)
	ids := make([]string, c.streams)
	var next atomic.Int64
	var wg sync.WaitGroup
	var subErr atomic.Value
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < c.streams; i = int(next.Add(1) - 1) {
				shs := make([]string, c.scripts)
				for j := range shs {
					h := sha256.Sum256(script(i, j))
					shs[j] = hex.EncodeToString(h[:])
				}
				body, _ := json.Marshal(map[string]any{"scripthashes": shs, "blocks": true})
				resp, err := client.Post(srv.base+"/v1/subscriptions", "application/json", bytes.NewReader(body))
				if err != nil {
					subErr.Store(err)
					return
				}
				var sub struct{ ID string }
				json.NewDecoder(resp.Body).Decode(&sub)
				resp.Body.Close()
				if resp.StatusCode != 201 {
					subErr.Store(fmt.Errorf("POST /v1/subscriptions: %d", resp.StatusCode))
					return
				}
				ids[i] = sub.ID
			}
		}()
	}
	wg.Wait()
	if err, _ := subErr.Load().(error); err != nil {
		return "", err
	}
	m0, err := srv.metrics()
	if err != nil {
		return "", err
	}
	rss0 := srv.rss()

	// The streams: each records when it read each block's block_connected.
	t.Log.Info("opening streams")
	recv := make([][]int64, c.streams) // [stream][block] unix ns
	for i := range recv {
		recv[i] = make([]int64, c.blocks)
	}
	got := make([]int, c.streams)
	var opened, finished sync.WaitGroup
	var openErr atomic.Value
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := range c.streams {
		opened.Add(1)
		finished.Add(1)
		go func() {
			defer finished.Done()
			record := func(height int) bool { // false: the stream is done
				if height >= 1 && height <= c.blocks && recv[i][height-1] == 0 {
					recv[i][height-1] = time.Now().UnixNano()
					got[i]++
				}
				return got[i] < c.blocks
			}
			path := "/v1/events?subscription=" + ids[i]
			var err error
			if c.websocket {
				err = readWS(sctx, client, "ws"+strings.TrimPrefix(srv.base, "http")+path, &opened, record)
			} else {
				err = readSSE(sctx, client, srv.base+path, &opened, record)
			}
			if err != nil {
				openErr.Store(err)
			}
		}()
	}
	opened.Wait()
	if err, _ := openErr.Load().(error); err != nil {
		return "", err
	}
	time.Sleep(time.Second) // let the opening settle
	m1, _ := srv.metrics()
	rss1 := srv.rss()

	// The blocks.
	t.Log.Info("mining", "blocks", c.blocks, "every", c.every)
	g, err := blockgen.NewChain(params.RegTest())
	if err != nil {
		return "", err
	}
	sent, answered := make([]int64, c.blocks), make([]int64, c.blocks)
	post := make([]time.Duration, c.blocks)
	tip := g.Genesis
	cpu0, start := srv.cpu(), time.Now()
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	for b := range c.blocks {
		tpl := g.Template(tip, nil)
		cb := tpl.Coinbase()
		cb.TxOut = nil
		for i := b % 10; i < c.streams; i += 10 {
			cb.AddTxOut(&btcwire.TxOut{Value: 1000, PkScript: script(i, b%c.scripts)})
		}
		tip = tpl.Finish()
		req, _ := http.NewRequest("POST", srv.base+"/v1/blocks", bytes.NewReader(tip.Raw))
		req.Header.Set("Authorization", "Bearer "+srv.token)
		req.Header.Set("Content-Type", "application/octet-stream")
		t0 := time.Now()
		resp, err := client.Do(req)
		t1 := time.Now()
		if err != nil {
			return "", err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return "", fmt.Errorf("POST block %d: %d %s", b+1, resp.StatusCode, body)
		}
		sent[b], answered[b], post[b] = t0.UnixNano(), t1.UnixNano(), t1.Sub(t0)
		time.Sleep(c.every)
	}
	done := make(chan struct{})
	go func() { finished.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cancel()
		<-done
	}
	wall := time.Since(start)
	cpu1 := srv.cpu()
	var ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	m2, err := srv.metrics()
	if err != nil {
		return "", err
	}
	if err := srv.stop(); err != nil && c.cpuprofile != "" {
		return "", fmt.Errorf("utxod serve: %w (the profile may be incomplete)", err)
	}

	// Latencies.
	var fromAnswer, fromSend []time.Duration
	missing := 0
	for i := range recv {
		for b, at := range recv[i] {
			if at == 0 {
				missing++
				continue
			}
			fromAnswer = append(fromAnswer, time.Duration(at-answered[b]))
			fromSend = append(fromSend, time.Duration(at-sent[b]))
		}
	}
	if len(fromAnswer) == 0 {
		return "", errors.New("no stream received a block")
	}
	slices.Sort(fromAnswer)
	slices.Sort(fromSend)
	slices.Sort(post)
	pct := func(d []time.Duration, p float64) time.Duration { return d[int(p*float64(len(d)-1))] }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	clientCPU := tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)

	var out strings.Builder
	kind := "SSE"
	if c.websocket {
		kind = "WebSocket"
	}
	fmt.Fprintf(&out, "utxod serve in its own process, %d %s clients in this one; %d scripts each (%d watched); %d blocks %v apart, each paying %d watched scripts\n",
		c.streams, kind, c.scripts, c.streams*c.scripts, c.blocks, c.every, (c.streams+9)/10)
	fmt.Fprintf(&out, "| measurement | figure |\n|---|---|\n")
	fmt.Fprintf(&out, "| client receipt of block_connected after the POST returned, p50 / p99 / max | %s / %s / %s |\n", ms(pct(fromAnswer, .5)), ms(pct(fromAnswer, .99)), ms(fromAnswer[len(fromAnswer)-1]))
	fmt.Fprintf(&out, "| — after the POST started, p50 / p99 | %s / %s |\n", ms(pct(fromSend, .5)), ms(pct(fromSend, .99)))
	if q := histQuantiles(m1, m2, "utxod_events_delivery_seconds", .5, .99); q != nil {
		fmt.Fprintf(&out, "| server: announcement → the stream's write returned, p50 / p99 (histogram, interpolated) | %s / %s |\n", ms(q[0]), ms(q[1]))
		fmt.Fprintf(&out, "| — share of deliveries written within 100 ms | %.2f%% |\n", 100*histFractionLE(m1, m2, "utxod_events_delivery_seconds", 0.1))
	}
	fmt.Fprintf(&out, "| POST /v1/blocks round trip, p50 / max | %s / %s |\n", ms(post[len(post)/2]), ms(post[len(post)-1]))
	fmt.Fprintf(&out, "| server CPU per block (%d blocks, %v wall) | %s |\n", c.blocks, wall.Round(time.Millisecond), ms((cpu1-cpu0)/time.Duration(c.blocks)))
	fmt.Fprintf(&out, "| clients' CPU per block | %s |\n", ms(clientCPU/time.Duration(c.blocks)))
	watched := float64(c.streams * c.scripts)
	heap := m1["go_memstats_heap_inuse_bytes"] - m0["go_memstats_heap_inuse_bytes"]
	fmt.Fprintf(&out, "| server memory with the streams open: heap in use / RSS per watched script | %.0f B / %.0f B |\n", heap/watched, float64(rss1-rss0)/watched)
	fmt.Fprintf(&out, "| deliveries missing | %d of %d |\n", missing, c.streams*c.blocks)
	if v, ok := m2["utxod_events_cut_off_total"]; ok {
		fmt.Fprintf(&out, "| streams cut off | %.0f |\n", v)
	}
	return out.String(), nil
}

// readSSE reads an SSE stream, calling record with each block_connected's
// height until it returns false; opened is done once the stream answered.
// The error is the opening's.
func readSSE(ctx context.Context, client *http.Client, url string, opened *sync.WaitGroup, record func(int) bool) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := client.Do(req)
	if err == nil && resp.StatusCode != 200 {
		resp.Body.Close()
		err = fmt.Errorf("GET /v1/events: %d", resp.StatusCode)
	}
	opened.Done()
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 4096)
	block := false
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return nil
		}
		switch {
		case bytes.Equal(line, []byte("event: block_connected\n")):
			block = true
		case block && bytes.HasPrefix(line, []byte("id: ")):
			h, _, _ := bytes.Cut(line[4:], []byte(":"))
			height, _ := strconv.Atoi(string(h))
			if !record(height) {
				return nil
			}
			block = false
		}
	}
}

// readWS is readSSE over WebSocket (one EventMessage per message).
func readWS(ctx context.Context, client *http.Client, url string, opened *sync.WaitGroup, record func(int) bool) error {
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: client})
	opened.Done()
	if err != nil {
		return err
	}
	defer conn.CloseNow()
	prefix := []byte(`{"event":"block_connected","id":"`)
	for {
		_, b, err := conn.Read(ctx)
		if err != nil {
			return nil
		}
		if !bytes.HasPrefix(b, prefix) {
			continue
		}
		h, _, _ := bytes.Cut(b[len(prefix):], []byte(":"))
		height, _ := strconv.Atoi(string(h))
		if !record(height) {
			return nil
		}
	}
}

// histQuantiles interpolates quantiles of a Prometheus histogram over the
// samples between two scrapes (nil when the server does not export it).
func histQuantiles(a, b map[string]float64, name string, qs ...float64) []time.Duration {
	les, counts := histBuckets(a, b, name)
	if les == nil || counts[len(counts)-1] == 0 {
		return nil
	}
	total := counts[len(counts)-1]
	var out []time.Duration
	for _, q := range qs {
		want := q * total
		prevLE, prevN := 0.0, 0.0
		for i, le := range les {
			if counts[i] >= want {
				v := le
				if !math.IsInf(le, 1) && counts[i] > prevN {
					v = prevLE + (le-prevLE)*(want-prevN)/(counts[i]-prevN)
				} else if math.IsInf(le, 1) {
					v = prevLE
				}
				out = append(out, time.Duration(v*1e9))
				break
			}
			prevLE, prevN = le, counts[i]
		}
	}
	return out
}

func histFractionLE(a, b map[string]float64, name string, x float64) float64 {
	les, counts := histBuckets(a, b, name)
	if les == nil || counts[len(counts)-1] == 0 {
		return math.NaN()
	}
	for i, le := range les {
		if le >= x {
			return counts[i] / counts[len(counts)-1]
		}
	}
	return 1
}

// histBuckets are the cumulative bucket counts of b minus a, by bound.
func histBuckets(a, b map[string]float64, name string) ([]float64, []float64) {
	re := regexp.MustCompile(`^` + name + `_bucket\{le="([^"]+)"\}$`)
	var les []float64
	for k := range b {
		if m := re.FindStringSubmatch(k); m != nil {
			le, err := strconv.ParseFloat(m[1], 64)
			if err == nil {
				les = append(les, le)
			}
		}
	}
	if les == nil {
		return nil, nil
	}
	slices.Sort(les)
	counts := make([]float64, len(les))
	for i, le := range les {
		k := fmt.Sprintf(`%s_bucket{le="%s"}`, name, formatLE(le))
		counts[i] = b[k] - a[k]
	}
	return les, counts
}

func formatLE(le float64) string {
	if math.IsInf(le, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(le, 'g', -1, 64)
}
