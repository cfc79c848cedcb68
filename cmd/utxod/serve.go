package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"utxod/api"
	"utxod/events"
	"utxod/node"
	"utxod/params"
)

// Server timeouts. ReadTimeout covers an 8 MB hex upload on a slow link;
// WriteTimeout covers a block waiting behind others in the queue.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 2 * time.Minute
	writeTimeout      = 5 * time.Minute
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
)

// serveFlags are the flags of "utxod serve" on top of commonFlags.
type serveFlags struct {
	commonFlags
	listen          string
	cookieFile      string
	allowRemote     bool
	shutdownTimeout time.Duration
	utxosLimit      int
	follow          followFlags  // --follow, --archive (follow.go)
	webhooks        webhookFlags // --webhook, --webhooks, --webhook-secret-file (webhooks.go)
	startProfile    func() (stop func(), err error)
}

const serveUsage = `Usage: utxod serve [flags]

Serves the HTTP API (see /docs and /openapi.json): POST /v1/blocks submits a
block (raw or hex body, "Authorization: Bearer <token>" required), GET
/v1/chainstate, /v1/utxos/{txid}/{vout}, /v1/blocks/{hash}, /v1/tip,
/v1/blocks/height/{h}, Bitcoin Core's REST endpoints under /rest/, /healthz
and /metrics; Esplora's routes under /api/ (tip, block-height, block status,
address and scripthash UTXOs), /v1/address/{a}/utxos with a cursor,
/v1/utxos/batch and POST /v1/scan (Core's scantxoutset). With the datadir's
scripthash index (--index scripthash, or 'utxod index build') the address
routes read it; without it they scan the coin set.

At start a random token is written to DATADIR/.cookie (mode 0600; with no
datadir, to --cookie-file or a fresh temporary directory, printed at start)
and removed at shutdown. Writes need it; reads are open. A --listen address
that is not loopback is refused unless --allow-remote is given (the token
still guards writes; put TLS in front of it).

--follow URL keeps the chainstate in step with a Bitcoin Core node
(bitcoind -rest) or another utxod over Core's REST interface; /healthz then
reports in_sync and /metrics utxod_follow_*. --archive keeps every block's
data so that other nodes can follow this one from genesis.

--webhook URL (repeatable) and --webhooks FILE POST the events of GET
/v1/events to URLs, a block's batch per request, signed with HMAC-SHA256
under the secret of --webhook-secret-file, at least once and in order per
hook, retried with backoff; each hook resumes from its cursor in
DATADIR/webhooks (docs/webhooks.md).

SIGINT/SIGTERM: stop accepting, finish the requests and the block in flight,
flush, close the store.

Every flag falls back to an environment variable: UTXOD_<FLAG> with dashes
as underscores (UTXOD_LISTEN, UTXOD_DATADIR, UTXOD_CACHE_MB...).

Flags:
`

func (f *serveFlags) register(fs *flag.FlagSet) {
	f.commonFlags.register(fs)
	f.commonFlags.registerIndex(fs)
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8335", "HTTP listen address (host:port)")
	fs.StringVar(&f.cookieFile, "cookie-file", "", "where to write the bearer token (default DATADIR/.cookie, or a temporary directory without --datadir)")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow a non-loopback --listen address")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long to wait for in-flight requests at shutdown")
	fs.IntVar(&f.utxosLimit, "utxos-limit", api.DefaultUTXOLimit, "GET /api/address/{address}/utxo answers 400 past this many outputs, as electrs' --utxos-limit (0: no limit)")
	f.follow.register(fs)
	f.webhooks.register(fs)
	f.startProfile = profileFlags(fs) // written at shutdown
}

func cmdServe(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args, stdout, stderr, nil)
}

// serve runs the server until ctx is done. ready, if not nil, is called with
// the bound address and the cookie path once the server accepts requests.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr, cookie string)) int {
	var f serveFlags
	log, p, code, done := f.parse(args, stdout, stderr)
	if done {
		return code
	}
	stopProfile, err := f.startProfile()
	if err != nil {
		return fail(stderr, "serve", 2, err)
	}
	defer stopProfile()
	n, err := f.openNode(ctx, log, f.follow.tune)
	if err != nil {
		return fail(stderr, "serve", 1, err)
	}
	closeNode := sync.OnceFunc(func() {
		if err := n.Close(); err != nil {
			log.Error("closing the store", "err", err)
		}
	})
	defer closeNode()
	token, cookie, removeCookie, err := writeCookie(f.datadir, f.cookieFile)
	if err != nil {
		return fail(stderr, "serve", 1, fmt.Errorf("cookie: %w", err))
	}
	defer removeCookie()
	fw := f.follow.newServeFollower()
	srv, hs, ln, err := f.listenAPI(n, token, fw, log)
	if err != nil {
		return fail(stderr, "serve", 1, err)
	}
	tip := n.Chain().Tip()
	log.Info("serving", "addr", ln.Addr().String(), "network", p.Name, "cookie", cookie, "height", tip.Height, "tip", tip.Hash)
	fmt.Fprintf(stderr, "utxod serve: listening on http://%s (network %s); write token in %s\n", ln.Addr(), p.Name, cookie)
	if ready != nil {
		ready(ln.Addr().String(), cookie)
	}
	if err := fw.start(ctx, p, n.Chain(), srv, log); err != nil {
		fmt.Fprintln(stderr, "utxod serve: --follow:", err)
		return 2
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	code = 0
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-errc:
		log.Error("server stopped", "err", err)
		code = 1
	}
	return f.shutdown(hs, srv, fw, closeNode, log, code)
}

// parse parses and checks the flags and returns the logger and the
// network; done says the command ends with code (--help, a usage error).
func (f *serveFlags) parse(args []string, stdout, stderr io.Writer) (log *slog.Logger, p *params.Params, code int, done bool) {
	fset := flag.NewFlagSet("serve", flag.ContinueOnError)
	fset.SetOutput(stderr)
	f.register(fset)
	fset.Usage = func() {
		fmt.Fprint(fset.Output(), serveUsage)
		fset.PrintDefaults()
	}
	pos, code, done := parseArgs(fset, args, false, stdout, stderr)
	if done {
		return nil, nil, code, true
	}
	if len(pos) != 0 {
		fmt.Fprintf(stderr, "utxod serve: unexpected argument %q (see utxod serve --help)\n", pos[0])
		return nil, nil, 2, true
	}
	if err := f.check(); err != nil {
		return nil, nil, fail(stderr, "serve", 2, err), true
	}
	if f.utxosLimit < 0 {
		fmt.Fprintln(stderr, "utxod serve: --utxos-limit: must not be negative, got", f.utxosLimit)
		return nil, nil, 2, true
	}
	raiseProcs()
	log, err := f.logger(stderr)
	if err == nil {
		err = checkListen(f.listen, f.allowRemote)
	}
	if err == nil {
		p, err = params.ByName(f.network)
	}
	if err == nil {
		err = f.follow.check(p, false)
	}
	if err == nil {
		err = f.webhooks.check(context.Background(), p, f.datadir)
	}
	if err != nil {
		return nil, nil, fail(stderr, "serve", 2, err), true
	}
	return log, p, 0, false
}

// listenAPI builds the API server over n and binds --listen.
func (f *serveFlags) listenAPI(n *node.Node, token string, fw *serveFollower, log *slog.Logger) (*api.Server, *http.Server, net.Listener, error) {
	var sizeOnDisk func() int64
	if f.datadir != "" {
		dir := f.datadir
		sizeOnDisk = func() int64 { return dirSize(dir) }
	}
	cfg := api.Config{Chain: n.Chain(), Params: n.Params(), Token: token, Log: log, SizeOnDisk: sizeOnDisk, UTXOLimit: f.utxosLimit, Follow: fw.health()}
	if ix := n.Index(); ix != nil {
		cfg.Index = ix // else the address routes scan the coin set
	}
	if sp := n.SilentPayments(); sp != nil {
		cfg.SilentPayments = sp // else the tweak routes answer 501
	}
	hub := events.New(events.Config{Chain: n.Chain(), Log: log}) // GET /v1/events
	n.Chain().SetObserver(hub)
	cfg.Events = hub
	srv, err := api.New(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := f.webhooks.start(hub, f.datadir, log); err != nil { // --webhook, --webhooks
		ln.Close()
		return nil, nil, nil, err
	}
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(hub.Close) // ends the event streams: Shutdown need not wait for them
	return srv, hs, ln, nil
}

// shutdown stops the server in order: no new requests, the running ones
// finished (or cut after --shutdown-timeout), the follower's last block,
// the block in flight, the flush, the store closed. It returns code, or 1
// when the flush fails.
func (f *serveFlags) shutdown(hs *http.Server, srv *api.Server, fw *serveFollower, closeNode func(), log *slog.Logger, code int) int {
	sctx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		log.Warn("shutdown: requests still running", "err", err)
		_ = hs.Close()
	}
	fw.wait() // the follower's last block is done (ctx is over)
	// The webhooks stop before the store closes; a request in flight goes
	// again after a restart.
	f.webhooks.stop()
	// The chainstate refuses later blocks, waits for the one in flight and
	// flushes (its flush tail).
	if err := srv.Close(); err != nil {
		log.Error("flush", "err", err)
		code = 1
	}
	closeNode()
	log.Info("stopped")
	return code
}

// raiseProcs gives the server as many Go processors again as there are
// cores (GOMAXPROCS twice the cores), unless the environment sets
// GOMAXPROCS: block validation sizes its script workers to the cores and
// can hold every processor, and with the spare ones requests need not wait
// for it; the kernel interleaves both at its finer time slices instead of
// Go's 10 ms preemption.
func raiseProcs() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(2 * runtime.NumCPU())
	}
}

// checkListen refuses non-loopback addresses unless allowRemote.
func checkListen(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", addr, err)
	}
	if allowRemote || isLoopbackHost(host) {
		return nil
	}
	return fmt.Errorf("--listen %q is not a loopback address; pass --allow-remote (UTXOD_ALLOW_REMOTE=1) to serve other hosts (reads are unauthenticated, writes need the cookie token; put TLS in front)", addr)
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// writeCookie creates a random 32-byte token, hex encoded, in the cookie
// file (mode 0600) and returns it with the file's path and a function that
// removes the file (and the temporary directory it made, if any).
func writeCookie(datadir, cookieFile string) (token, path string, remove func(), err error) {
	var buf [32]byte
	if _, err := rand.Read(buf[:]); err != nil {
		return "", "", nil, err
	}
	token = hex.EncodeToString(buf[:])
	tmpDir := ""
	switch {
	case cookieFile != "":
		path = cookieFile
	case datadir != "":
		if err := os.MkdirAll(datadir, 0o700); err != nil {
			return "", "", nil, err
		}
		path = filepath.Join(datadir, ".cookie")
	default:
		tmpDir, err = os.MkdirTemp("", "utxod-")
		if err != nil {
			return "", "", nil, err
		}
		path = filepath.Join(tmpDir, ".cookie")
	}
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	fh, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", "", nil, err
	}
	if _, err := fh.WriteString(token); err != nil {
		fh.Close()
		os.Remove(tmp)
		return "", "", nil, err
	}
	if err := fh.Close(); err != nil {
		os.Remove(tmp)
		return "", "", nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", "", nil, err
	}
	return token, path, func() {
		os.Remove(path)
		if tmpDir != "" {
			os.Remove(tmpDir)
		}
	}, nil
}

// dirSize is the total size of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
