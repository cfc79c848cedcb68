package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"utxod/api"
	"utxod/chainstate"
	"utxod/follow"
	"utxod/node"
	"utxod/params"
)

// followFlags configure following a source over Core's REST interface;
// "utxod follow" and "utxod serve --follow" share them.
type followFlags struct {
	url         string
	archive     bool
	concurrency int
	prefetch    int
	poll        time.Duration
	timeout     time.Duration
	flush       time.Duration
}

func (f *followFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "follow", "", "follow the node at this URL over Bitcoin Core's REST interface (bitcoind -rest, or another utxod): http://host:port")
	fs.BoolVar(&f.archive, "archive", false, "keep the data of every block (default: the last 288), so that /rest/block serves the whole chain and replicas can follow this node from genesis")
	fs.IntVar(&f.concurrency, "follow-concurrency", follow.DefaultConcurrency, "blocks downloaded from the source at once")
	fs.IntVar(&f.prefetch, "follow-prefetch", follow.DefaultPrefetch, "blocks downloaded ahead of validation")
	fs.DurationVar(&f.poll, "follow-poll", follow.DefaultPollInterval, "how often the source's tip is polled once in sync")
	fs.DurationVar(&f.timeout, "follow-timeout", follow.DefaultRequestTimeout, "timeout of one request to the source")
	fs.DurationVar(&f.flush, "follow-flush", time.Minute, "serve --follow: flush the chainstate once caught up, at most this often, so that a crash loses little (0: only when the cache is full and at shutdown)")
}

// check validates the follow flags before anything is opened (a usage
// error, exit 2). required: --follow must be given.
func (f *followFlags) check(p *params.Params, required bool) error {
	if f.url == "" {
		if required {
			return errors.New("--follow URL is required")
		}
		return nil
	}
	if _, err := follow.NewClient(follow.ClientConfig{URL: f.url, Params: p}); err != nil {
		return fmt.Errorf("--follow: %w", err)
	}
	if f.concurrency < 1 || f.prefetch < 1 {
		return fmt.Errorf("--follow-concurrency and --follow-prefetch must be at least 1, got %d and %d", f.concurrency, f.prefetch)
	}
	if f.poll <= 0 || f.timeout <= 0 || f.flush < 0 {
		return fmt.Errorf("--follow-poll and --follow-timeout must be positive and --follow-flush not negative, got %v, %v and %v", f.poll, f.timeout, f.flush)
	}
	return nil
}

// tune applies --archive to the node's options.
func (f *followFlags) tune(o *node.Options) {
	if f.archive {
		o.KeepBlocks = math.MaxInt32
	}
}

// follower builds the follower of the flags for chain.
func (f *followFlags) follower(p *params.Params, chain follow.Chain, log *slog.Logger, cfg follow.Config) (*follow.Follower, error) {
	c, err := follow.NewClient(follow.ClientConfig{URL: f.url, Params: p, Timeout: f.timeout})
	if err != nil {
		return nil, err
	}
	cfg.Source, cfg.Chain, cfg.Log = c, chain, log.With("component", "follow")
	cfg.Concurrency, cfg.Prefetch, cfg.PollInterval = f.concurrency, f.prefetch, f.poll
	return follow.New(cfg)
}

// serveFollower wires a follower into "utxod serve": its blocks queue with
// the API's submissions on the chainstate's submission slot, its metrics
// join /metrics, /healthz reports it.
type serveFollower struct {
	flags *followFlags
	f     *follow.Follower
	done  chan struct{}
}

// health is the api.Config.Follow function (nil without --follow).
func (sf *serveFollower) health() func() (api.FollowHealth, bool) {
	if sf == nil {
		return nil
	}
	return func() (api.FollowHealth, bool) {
		if sf.f == nil {
			return api.FollowHealth{Source: sf.flags.url, State: follow.StateStarting}, false
		}
		st := sf.f.Status()
		h := api.FollowHealth{Source: st.Source, State: st.State, SourceHeight: st.SourceHeight, SourceTip: st.SourceTip.String(),
			LastError: st.LastError, Blocks: st.Blocks, Errors: st.Errors, RejectedBlocks: st.RejectedBlocks, Reorgs: st.Reorgs}
		if !st.LastPoll.IsZero() {
			h.LastPoll = st.LastPoll.UTC().Format(time.RFC3339)
		}
		if r := st.Rejected; r != nil {
			h.Rejected = &api.FollowRejection{Hash: r.Hash.String(), Height: r.Height, Reason: r.Reason, Detail: r.Detail}
		}
		return h, st.InSync
	}
}

// newServeFollower returns nil without --follow.
func (f *followFlags) newServeFollower() *serveFollower {
	if f.url == "" {
		return nil
	}
	return &serveFollower{flags: f, done: make(chan struct{})}
}

// start runs the follower until ctx ends.
func (sf *serveFollower) start(ctx context.Context, p *params.Params, cs *chainstate.Chainstate, srv *api.Server, log *slog.Logger) error {
	if sf == nil {
		return nil
	}
	fl, err := sf.flags.follower(p, cs, log,
		follow.Config{Registerer: srv.Registerer(), Flush: srv.Flush, FlushInterval: sf.flags.flush})
	if err != nil {
		return err
	}
	sf.f = fl
	log.Info("following", "source", sf.flags.url, "archive", sf.flags.archive)
	go func() {
		defer close(sf.done)
		if err := fl.Run(ctx); err != nil {
			log.Error("following stopped; still serving reads", "err", err)
		}
	}()
	return nil
}

// wait returns once the follower's last block is done.
func (sf *serveFollower) wait() {
	if sf != nil && sf.f != nil {
		<-sf.done
	}
}

const followUsage = `Usage: utxod follow --follow URL [--datadir D --backend B] [--json] [flags]

Catches up with the node at URL over Bitcoin Core's REST interface
(bitcoind -rest, or another utxod serve) and exits: polls the source's tip,
finds the fork point from headers, downloads blocks ahead of validation,
validates and connects them (reorganising when the source's chain has more
work), retries a source that is down or slow with backoff. A block the
chainstate rejects stops it with exit status 1 and a line naming the block,
its height and Core's reject reason; the datadir stays at the last valid
block. With --datadir a later run resumes where this one stopped.
"utxod serve --follow URL" keeps following while serving.

Flags:
`

// followCmdFlags are the flags of utxod follow.
type followCmdFlags struct {
	commonFlags
	follow      followFlags
	asJSON      bool
	hashType    string
	maxFailures int
}

func (f *followCmdFlags) register(fs *flag.FlagSet) {
	f.commonFlags.register(fs)
	f.follow.register(fs)
	fs.BoolVar(&f.asJSON, "json", false, "print the final chainstate (gettxoutsetinfo fields) as JSON on stdout")
	fs.StringVar(&f.hashType, "hash-type", chainstate.HashTypeHashSerialized3, "digests in the JSON: hash_serialized_3 (also muhash), muhash or none")
	fs.IntVar(&f.maxFailures, "max-failures", 10, "give up after this many consecutive failed attempts to reach the source (0: retry until interrupted)")
}

func cmdFollow(args []string, stdout, stderr io.Writer) (code int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var f followCmdFlags
	log, code, done := f.parse(args, stdout, stderr)
	if done {
		return code
	}
	n, err := f.openNode(ctx, log, f.follow.tune)
	if err != nil {
		return fail(stderr, "follow", 2, err)
	}
	// The final flush: a failure loses the blocks since the last flush.
	defer func() {
		if err := n.Close(); err != nil {
			fmt.Fprintln(stderr, "utxod follow: final flush failed; the datadir stays at its last flushed tip:", err)
			if code == 0 {
				code = 1
			}
		}
	}()
	return f.catchUp(ctx, n.Chain(), n.Params(), log, stdout, stderr)
}

// parse parses and checks the flags and returns the logger; done says the
// command ends with code (--help, a usage error).
func (f *followCmdFlags) parse(args []string, stdout, stderr io.Writer) (log *slog.Logger, code int, done bool) {
	fs := flag.NewFlagSet("follow", flag.ContinueOnError)
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), followUsage)
		fs.PrintDefaults()
	}
	pos, code, done := parseArgs(fs, args, false, stdout, stderr)
	if done {
		return nil, code, true
	}
	if len(pos) != 0 {
		fmt.Fprintf(stderr, "utxod follow: unexpected argument %q (see utxod follow --help)\n", pos[0])
		return nil, 2, true
	}
	if err := f.check(); err != nil {
		return nil, fail(stderr, "follow", 2, err), true
	}
	p, err := params.ByName(f.network)
	if err != nil {
		return nil, fail(stderr, "follow", 2, err), true
	}
	if err := f.follow.check(p, true); err != nil {
		fmt.Fprintf(stderr, "utxod follow: %v (see utxod follow --help)\n", err)
		return nil, 2, true
	}
	if err := checkHashType(f.hashType); err != nil {
		return nil, fail(stderr, "follow", 2, err), true
	}
	if f.maxFailures < 0 {
		fmt.Fprintln(stderr, "utxod follow: --max-failures: must not be negative")
		return nil, 2, true
	}
	if log, err = f.logger(stderr); err != nil {
		return nil, fail(stderr, "follow", 2, err), true
	}
	return log, 0, false
}

// catchUp follows the source until cs has caught up with it.
func (f *followCmdFlags) catchUp(ctx context.Context, cs *chainstate.Chainstate, p *params.Params, log *slog.Logger, stdout, stderr io.Writer) int {
	fl, err := f.follow.follower(p, cs, log, follow.Config{MaxFailures: f.maxFailures})
	if err != nil {
		return fail(stderr, "follow", 2, err)
	}
	start := time.Now()
	from := cs.Tip().Height
	err = fl.CatchUp(ctx)
	tip := cs.Tip()
	var rej *follow.RejectedError
	switch {
	case errors.As(err, &rej):
		fmt.Fprintf(stderr, "utxod follow: block %s height %d rejected: %s (%v)\n", rej.Hash, rej.Height, rej.Reason, rej.Err)
		return 1
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "utxod follow: interrupted at height %d\n", tip.Height)
		return 1
	case err != nil:
		return fail(stderr, "follow", 1, err)
	}
	st := fl.Status()
	log.Info("caught up", "height", tip.Height, "tip", tip.Hash, "blocks", tip.Height-from, "errors", st.Errors, "reorgs", st.Reorgs,
		"seconds", time.Since(start).Seconds())
	if f.asJSON {
		return printInfoJSON(cs, f.hashType, "follow", stdout, stderr)
	}
	return 0
}
