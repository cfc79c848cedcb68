package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"utxod/backends"
	"utxod/internal/progress"
	"utxod/node"
	"utxod/store/kvstore/shindex"
	"utxod/store/kvstore/spindex"
)

const indexUsage = `Usage: utxod index build|drop|verify --datadir D [--backend B] [flags]

Builds, drops or verifies the scripthash index of an existing datadir (which no other
utxod process may have open). With the index, address and scripthash lookups
(/api/address/.../utxo, /api/scripthash/.../utxo, /v1/address, POST /v1/scan)
read their rows instead of scanning the coin set; the datadir keeps it, and
import and serve update it in the same atomic batch as the coins.

  build   write one row per unspent output, with progress: one scan of
          the coins sorted in bounded runs (spilled to the datadir), then
          one ordered write. The index is marked "building" until the last
          synced batch marks it complete, so an interrupted build is never
          used; the next build starts over.
  drop    remove the index (its meta key first, then every row).
  verify  check that the index is exactly the one the coins call for (a
          row with the right value for every coin at the store's tip, no
          other row), sorting the coins' rows as build does and reading
          the index once in order; exit status 1 when it is not.

--index silentpayments works on the BIP352 tweak index instead: build
computes the tweaks of the blocks whose block and undo data the datadir
keeps (the last 288 unless it was run with --archive), resumable (a
second build continues where an interrupted one stopped); verify
recomputes them; drop removes them.

A new datadir gets an index from the start with 'utxod import --index
NAME' or 'utxod serve --index NAME' (both: --index scripthash,silentpayments).
`

// cmdIndex dispatches utxod index build|drop|verify.
func cmdIndex(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "build", "drop", "verify":
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return indexCommand(ctx, args[0], args[1:], stdout, stderr)
		case "-h", "-help", "--help", "help":
			fmt.Fprint(stdout, indexUsage)
			return 0
		}
		fmt.Fprintf(stderr, "utxod index: unknown subcommand %q (want build, drop or verify; see utxod index --help)\n", args[0])
		return 2
	}
	fmt.Fprintln(stderr, "utxod index: want a subcommand, build, drop or verify (see utxod index --help)")
	return 2
}

// indexFlags are the flags of utxod index build, drop and verify.
type indexFlags struct {
	name      string // "index build", …
	datadir   string
	backend   string
	cacheMB   int
	progress  time.Duration
	logLevel  string
	logFormat string
	which     string // --index: shindex.Name or spindex.Name

	startProfile func() (stop func(), err error) // --cpuprofile, --trace
}

func (f *indexFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.datadir, "datadir", "", "data directory (required)")
	fs.StringVar(&f.backend, "backend", "", "store of the datadir: pebble, rocksdb or bbolt (default: the one the datadir records)")
	fs.IntVar(&f.cacheMB, "cache-mb", defaultCacheMB, "store block cache in MiB (a quarter of it, as import and serve give)")
	fs.DurationVar(&f.progress, "progress", progress.DefaultEvery, "interval of progress log lines (0: off)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&f.which, "index", shindex.Name, "the index: "+shindex.Name+" or "+spindex.Name)
}

// indexCommand runs utxod index build, drop or verify until done or ctx ends.
func indexCommand(ctx context.Context, sub string, args []string, stdout, stderr io.Writer) int {
	f := indexFlags{name: "index " + sub}
	log, code, done := f.parse(args, stdout, stderr)
	if done {
		return code
	}
	stopProfile, err := f.startProfile()
	if err != nil {
		return fail(stderr, f.name, 2, err)
	}
	defer stopProfile()
	if st, err := os.Stat(f.datadir); err != nil || !st.IsDir() {
		return fail(stderr, f.name, 1, fmt.Errorf("no datadir at %s", f.datadir))
	}
	limitMemory(f.cacheMB, f.backend)
	kv, err := node.OpenBackend(f.backend, f.datadir, int64(f.cacheMB)<<20, log)
	if err != nil {
		return fail(stderr, f.name, 1, err)
	}
	defer func() {
		if err := kv.Close(); err != nil {
			log.Error("closing the store", "err", err)
		}
	}()
	if f.which == spindex.Name {
		pr := progress.New(progress.Config{What: f.name, Unit: "blocks", Every: f.progress, Out: stderr, Log: log})
		err = spIndexCommand(ctx, sub, f.datadir, kv, log, pr.Report, stdout)
		pr.Finish()
		if err != nil {
			return fail(stderr, f.name, 1, err)
		}
		return 0
	}
	pr := progress.New(progress.Config{What: f.name, Unit: "rows", Every: f.progress, Out: stderr, Log: log})
	switch sub {
	case "build":
		err = f.build(ctx, kv, pr, log, stdout)
	case "verify":
		err = f.verify(ctx, kv, pr, stdout)
	case "drop":
		err = f.drop(ctx, kv, pr, log, stdout)
	}
	if err != nil {
		return fail(stderr, f.name, 1, err)
	}
	return 0
}

// parse parses and checks the flags and returns the logger; done says the
// command ends with code (--help, a usage error).
func (f *indexFlags) parse(args []string, stdout, stderr io.Writer) (log *slog.Logger, code int, done bool) {
	fs := flag.NewFlagSet(f.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.register(fs)
	f.startProfile = profileFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), indexUsage+"\nFlags:\n")
		fs.PrintDefaults()
	}
	pos, code, done := parseArgs(fs, args, false, stdout, stderr)
	if done {
		return nil, code, true
	}
	usageErr := func(format string, a ...any) (*slog.Logger, int, bool) {
		fmt.Fprintf(stderr, "utxod %s: %s\n", f.name, fmt.Sprintf(format, a...))
		return nil, 2, true
	}
	if len(pos) != 0 {
		return usageErr("unexpected argument %q (see utxod %s --help)", pos[0], f.name)
	}
	if f.datadir == "" {
		return usageErr("--datadir is required")
	}
	if f.cacheMB < 0 {
		return usageErr("--cache-mb: must not be negative, got %d", f.cacheMB)
	}
	if f.which != shindex.Name && f.which != spindex.Name {
		return usageErr("--index: want %s or %s, got %q", shindex.Name, spindex.Name, f.which)
	}
	lf := commonFlags{logLevel: f.logLevel, logFormat: f.logFormat}
	log, err := lf.logger(stderr)
	if err != nil {
		return usageErr("%v", err)
	}
	if f.backend == "" {
		f.backend = node.RecordedBackend(f.datadir)
	}
	if err := backends.Available(f.backend); err != nil {
		return usageErr("--backend %s: %v", f.backend, err)
	}
	return log, 0, false
}

// build writes the index of the datadir's coins.
func (f *indexFlags) build(ctx context.Context, kv backends.KV, pr *progress.Meter, log *slog.Logger, stdout io.Writer) error {
	start := time.Now()
	m, err := shindex.BuildWith(ctx, kv, shindex.BuildOptions{TmpDir: f.datadir}, pr.Report)
	pr.Finish()
	switch {
	case errors.Is(err, shindex.ErrExists):
		return fmt.Errorf("%s already has a scripthash index (at height %d); utxod index drop removes it", f.datadir, m.Tip.Height)
	case errors.Is(err, shindex.ErrNoChainstate):
		return fmt.Errorf("%s has no chainstate to index (utxod import --index %s builds a new datadir with it)", f.datadir, shindex.Name)
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted with %d of %d rows written; run it again to start over", m.Rows, m.Tip.TxOuts)
	case err != nil:
		return err
	}
	log.Info("index build done", "rows", m.Tip.TxOuts, "height", m.Tip.Height, "tip", m.Tip.Hash, "seconds", time.Since(start).Seconds())
	fmt.Fprintf(stdout, "scripthash index built: %d rows at height %d (%s)\n", m.Tip.TxOuts, m.Tip.Height, m.Tip.Hash)
	return nil
}

// verify checks the index against the coins.
func (f *indexFlags) verify(ctx context.Context, kv backends.KV, pr *progress.Meter, stdout io.Writer) error {
	m, err := shindex.VerifyWith(ctx, kv, shindex.BuildOptions{TmpDir: f.datadir}, pr.Report)
	pr.Finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "scripthash index verified: %d rows at height %d (%s)\n", m.Tip.TxOuts, m.Tip.Height, m.Tip.Hash)
	return nil
}

// drop removes the index.
func (f *indexFlags) drop(ctx context.Context, kv backends.KV, pr *progress.Meter, log *slog.Logger, stdout io.Writer) error {
	start := time.Now()
	m, ok, err := shindex.ReadMeta(kv)
	state := "none"
	switch {
	case errors.Is(err, shindex.ErrFormat):
		state = "of another format" // what drop is for
	case err != nil:
		return err
	case ok:
		state = m.State.String()
	}
	n, err := shindex.Drop(ctx, kv, pr.Report)
	pr.Finish()
	if err != nil {
		return fmt.Errorf("%w (run it again to finish)", err)
	}
	log.Info("index drop done", "rows", n, "was", state, "seconds", time.Since(start).Seconds())
	fmt.Fprintf(stdout, "scripthash index dropped: %d rows removed (it was %s)\n", n, state)
	return nil
}
