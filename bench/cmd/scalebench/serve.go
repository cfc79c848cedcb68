package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"utxod/backends"
	"utxod/internal/cli"
	"utxod/scripthash"
)

type serveConfig struct {
	server                   serverConfig
	snapshot, expect, blocks string
	label, phases            string
	blockEvery               time.Duration
	duration, window         time.Duration
	rounds, conns, sampleN   int
	restarts, coldWindows    int
	walks                    int
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	t := cli.New("scalebench serve", usage, stdout, stderr)
	fs := t.Flags
	var c serveConfig
	fs.StringVar(&c.server.utxod, "utxod", "bin/utxod", "utxod executable")
	fs.StringVar(&c.server.datadir, "datadir", "", "the loaded datadir, with the scripthash index (required)")
	fs.StringVar(&c.server.extra, "server-args", "", "extra flags for utxod serve, space-separated")
	fs.StringVar(&c.snapshot, "snapshot", "", "the snapshot the datadir was loaded from (required)")
	fs.StringVar(&c.expect, "expect", "", "mainnetgen's expect.json (the whales)")
	fs.StringVar(&c.blocks, "blocks", "", "Core blk-framed blocks extending the datadir's tip, POSTed during the lookups")
	fs.DurationVar(&c.blockEvery, "block-every", time.Second, "pause between POSTed blocks")
	fs.StringVar(&c.label, "label", "", "first column of the rows (default: the datadir's store)")
	fs.StringVar(&c.phases, "phases", "lookups,addresses,paging,restart,cold", "what to measure, separated by commas")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "one lookup round")
	fs.IntVar(&c.rounds, "rounds", 3, "lookup rounds per route (interleaved), the median reported")
	fs.IntVar(&c.conns, "conns", 32, "keep-alive connections of the load")
	fs.IntVar(&c.sampleN, "sample", 100000, "outpoints and scripts drawn from the snapshot")
	fs.IntVar(&c.walks, "walks", 10, "walks through the whale's pages, the median reported")
	fs.IntVar(&c.restarts, "restarts", 3, "SIGKILL restarts")
	fs.DurationVar(&c.window, "window", 10*time.Second, "cold page cache: one lookup window")
	fs.IntVar(&c.coldWindows, "cold-windows", 12, "cold page cache: at most this many windows")
	if code, done := t.Parse(args); done {
		return code
	}
	if c.server.datadir == "" || c.snapshot == "" || fs.NArg() != 0 || c.rounds < 1 || c.conns < 1 {
		return t.UsageError(errors.New("--datadir and --snapshot are required, no arguments; --rounds and --conns positive"))
	}
	if c.label == "" {
		c.label = storeOf(c.server.datadir)
	}
	rows, err := measureServe(ctx, c, t)
	if err != nil {
		return t.Fail(err)
	}
	io.WriteString(stdout, rows)
	return cli.ExitOK
}

// run is one measurement: the server, the sample and the rows so far.
type runState struct {
	c      serveConfig
	t      *cli.Tool
	s      *server
	smp    *sample
	blocks *blockFile
	rows   strings.Builder
	warm   []loadResult // outpoint rounds
}

func (r *runState) row(what, figure, goal string) {
	fmt.Fprintf(&r.rows, "| %s | %s | %s | %s |\n", r.c.label, what, figure, goal)
}

func measureServe(ctx context.Context, c serveConfig, t *cli.Tool) (string, error) {
	t0, load0 := time.Now(), loadAvg()
	smp, err := readSample(c.snapshot, c.expect, c.sampleN)
	if err != nil {
		return "", err
	}
	t.Log.Info("sampled the snapshot", "coins", smp.coins, "outpoints", len(smp.outpoints), "addresses", len(smp.addresses),
		"whale_coins", smp.whaleN, "seconds", time.Since(t0).Seconds())
	r := &runState{c: c, t: t, smp: smp}
	r.c.server.network = smp.net.Name
	if r.c.server.addr, err = freePort(); err != nil {
		return "", err
	}
	if c.blocks != "" {
		if r.blocks, err = openBlocks(c.blocks, smp.net.Magic); err != nil {
			return "", err
		}
		defer r.blocks.f.Close()
	}
	h, took, err := r.start()
	if err != nil {
		return "", err
	}
	defer func() {
		if r.s != nil {
			r.s.kill()
		}
	}()
	if r.blocks != nil {
		if err := r.blocks.anchor(h.Tip, h.Height); err != nil {
			return "", err
		}
		r.t.Log.Info("blocks", "in_file", len(r.blocks.offs), "first_to_post", h.Height+1, "last", r.blocks.base+int32(len(r.blocks.offs)))
	}
	r.row("start of `utxod serve` to /healthz ok and a lookup answered (page cache warm)", secs(took), "")
	phases := strings.Split(c.phases, ",")
	for _, p := range phases {
		var err error
		switch p {
		case "lookups", "addresses":
			if p == "lookups" || !slices.Contains(phases, "lookups") {
				err = r.lookups(ctx, slices.Contains(phases, "lookups"), slices.Contains(phases, "addresses"))
			}
		case "paging":
			err = r.paging(ctx)
		case "restart":
			err = r.restart(ctx)
		case "cold":
			err = r.cold(ctx)
		default:
			err = fmt.Errorf("unknown phase %q", p)
		}
		if err != nil {
			return r.rows.String(), fmt.Errorf("%s: %w", p, err)
		}
	}
	err = r.s.stop()
	r.s = nil
	r.row("the host's 1-minute load average at the start and the end (2 CPUs, shared)", load0+" → "+loadAvg(), "")
	return r.rows.String(), err
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// start starts the server and waits until it answers.
func (r *runState) start() (health, time.Duration, error) {
	t0 := time.Now()
	s, err := startServer(r.c.server)
	if err != nil {
		return health{}, 0, err
	}
	h, took, err := s.waitHealthy(t0, r.smp.outpoints[0], 10*time.Minute)
	if err != nil {
		return h, 0, err
	}
	if err := s.readToken(r.c.server.datadir); err != nil {
		s.kill()
		return h, 0, err
	}
	r.s = s
	return h, took, nil
}

// tip is the server's current height.
func (r *runState) tip() (int32, error) {
	var h health
	err := getJSON(quickClient, r.s.base()+"/healthz", &h)
	return h.Height, err
}

// withBlocks runs f while blocks are POSTed (when a block file is given).
func (r *runState) withBlocks(ctx context.Context, f func()) (postStats, error) {
	if r.blocks == nil {
		f()
		return postStats{}, nil
	}
	tip, err := r.tip()
	if err != nil {
		return postStats{}, err
	}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan postStats, 1)
	go func() { done <- r.blocks.post(pctx, r.s, tip, r.c.blockEvery, nil) }()
	f()
	cancel()
	st := <-done
	if st.failed > 0 && !errors.Is(st.lastErr, context.Canceled) {
		return st, st.lastErr
	}
	return st, nil
}

func (r *runState) load(ctx context.Context, paths []string, d time.Duration) (loadResult, postStats, error) {
	var res loadResult
	st, err := r.withBlocks(ctx, func() { res = load(ctx, r.s.addr, paths, r.c.conns, d, r.s.cpu) })
	if err == nil && (res.errs > 0 || res.status[500]+res.status[503] > 0) {
		err = fmt.Errorf("%d errors, statuses %v: %v", res.errs, res.status, res.firstError)
	}
	r.t.Log.Info("round", "req_s", int(res.rps()), "p50", res.pct(.5), "p99", res.pct(.99), "max", res.max(),
		"statuses", res.status, "blocks", len(st.lat))
	return res, st, err
}

// lookups measures outpoint and address lookups in interleaved rounds after
// a warm-up.
func (r *runState) lookups(ctx context.Context, outpoints, addresses bool) error {
	type arm struct {
		paths         []string
		name, goal    string
		res           []loadResult
		posts         []postStats
		p99Goal, rate float64
	}
	var arms []*arm
	if outpoints {
		arms = append(arms, &arm{paths: r.smp.outpoints, name: "`GET /v1/utxos/{txid}/{vout}`", goal: "≥ 20,000 req/s, p99 ≤ 15 ms"})
	}
	if addresses {
		arms = append(arms, &arm{paths: r.smp.addresses, name: "`GET /api/address/{a}/utxo` (index)", goal: "p99 ≤ 20 ms"})
	}
	for _, a := range arms {
		r.t.Log.Info("warm-up, no blocks", "route", a.name)
		if res := load(ctx, r.s.addr, a.paths, r.c.conns, min(5*time.Second, r.c.duration), nil); res.errs > 0 {
			return fmt.Errorf("warm-up: %d errors: %v", res.errs, res.firstError)
		}
	}
	for i := range r.c.rounds {
		for j := range arms {
			a := arms[(i+j)%len(arms)]
			res, st, err := r.load(ctx, a.paths, r.c.duration)
			if err != nil {
				return err
			}
			a.res, a.posts = append(a.res, res), append(a.posts, st)
		}
	}
	for _, a := range arms {
		r.row(a.name+r.blocksNote(), loadFigure(a.res, r.c.conns), a.goal)
		if r.blocks != nil {
			var all postStats
			for _, p := range a.posts {
				all.lat = append(all.lat, p.lat...)
			}
			all.from = a.posts[0].from
			r.row("— blocks POSTed meanwhile", all.summary(), "")
		}
		if a == arms[0] && outpoints {
			r.warm = a.res
		}
	}
	return nil
}

func (r *runState) blocksNote() string {
	if r.blocks == nil {
		return ", no blocks arriving"
	}
	return fmt.Sprintf(", a block POSTed every %v", r.c.blockEvery)
}

// loadFigure is the median round's figures, with the spread of req/s and
// where the CPU went.
func loadFigure(rs []loadResult, conns int) string {
	med := func(f func(loadResult) float64) (float64, float64, float64) {
		v := make([]float64, len(rs))
		for i, x := range rs {
			v[i] = f(x)
		}
		slices.Sort(v)
		return v[len(v)/2], v[0], v[len(v)-1]
	}
	rps, lo, hi := med(loadResult.rps)
	p50, _, _ := med(func(x loadResult) float64 { return float64(x.pct(.5)) })
	p99, p99lo, p99hi := med(func(x loadResult) float64 { return float64(x.pct(.99)) })
	mx, _, _ := med(func(x loadResult) float64 { return float64(x.max()) })
	srv, _, _ := med(func(x loadResult) float64 { return float64(x.serverCPU) / float64(x.n()) })
	cli, _, _ := med(func(x loadResult) float64 { return float64(x.clientCPU) / float64(x.n()) })
	hits, n := 0, 0
	for _, x := range rs {
		hits += x.status[200]
		n += x.n()
	}
	return fmt.Sprintf("%.0f req/s (%.0f–%.0f); p50 %s, p99 %s (%s–%s), max %s; %d conns, %.0f %% 200; CPU per request: server %.0f µs, client %.0f µs",
		rps, lo, hi, ms(time.Duration(p50)), ms(time.Duration(p99)), ms(time.Duration(p99lo)), ms(time.Duration(p99hi)), ms(time.Duration(mx)),
		conns, 100*float64(hits)/float64(max(n, 1)), srv/1e3, cli/1e3)
}

// paging walks the largest whale's coins through /v1/scripthash/{h}/utxos
// cursors, 10,000 a page.
func (r *runState) paging(ctx context.Context) error {
	h := scripthash.Of(r.smp.whale)
	first := r.s.base() + "/v1/scripthash/" + hex.EncodeToString(h[:]) + "/utxos?limit=10000"
	var rates, cpu []float64
	var coins, pages int
	for range max(r.c.walks, 1) {
		coins, pages = 0, 0
		url := first
		c0, t0 := r.s.cpu(), time.Now()
		for {
			var p struct {
				UTXOs      []json.RawMessage `json:"utxos"`
				NextCursor *string           `json:"next_cursor"`
			}
			if err := getJSON(postClient, url, &p); err != nil {
				return err
			}
			coins += len(p.UTXOs)
			pages++
			if p.NextCursor == nil {
				break
			}
			url = first + "&cursor=" + *p.NextCursor
		}
		rates = append(rates, float64(coins)/time.Since(t0).Seconds())
		cpu = append(cpu, float64(coins)/max(r.s.cpu()-c0, 10*time.Millisecond).Seconds())
		r.t.Log.Info("paged the whale", "coins", coins, "pages", pages, "coins_per_s", int(rates[len(rates)-1]))
	}
	if r.smp.whaleN != 0 && r.blocks == nil && uint64(coins) != r.smp.whaleN {
		return fmt.Errorf("paging the whale gave %d coins, expect.json has %d", coins, r.smp.whaleN)
	}
	slices.Sort(rates)
	slices.Sort(cpu)
	r.row(fmt.Sprintf("paging the largest whale (%d coins, %d pages of 10,000) through `/v1/scripthash/{h}/utxos` cursors", coins, pages),
		fmt.Sprintf("%.0f coins/s (%.0f–%.0f, %d walks); about %.0f coins per second of the server's CPU (10 ms ticks)", rates[len(rates)/2], rates[0], rates[len(rates)-1], len(rates), cpu[len(cpu)/2]),
		"≥ 200,000 coins/s")
	return nil
}

// storeOf is the datadir's store, from its marker file.
func storeOf(datadir string) string {
	b, err := os.ReadFile(filepath.Join(datadir, backends.MarkerFile))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
