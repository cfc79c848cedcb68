package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"utxod/backends"
	"utxod/store/kvstore/shindex"
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
          other row); exit status 1 when it is not.

A new datadir gets the index from the start with 'utxod import --index
scripthash' or 'utxod serve --index scripthash'.
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

// indexCommand runs utxod index build, drop or verify until done or ctx ends.
func indexCommand(ctx context.Context, sub string, args []string, stdout, stderr io.Writer) int {
	name := "index " + sub
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	datadir := fs.String("datadir", "", "data directory (required)")
	backend := fs.String("backend", "", "store of the datadir: pebble, rocksdb or bbolt (default: the one the datadir records)")
	cacheMB := fs.Int("cache-mb", defaultCacheMB, "store block cache in MiB (a quarter of it, as import and serve give)")
	progress := fs.Duration("progress", 10*time.Second, "interval of progress log lines (0: off)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	startProfile := profileFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), indexUsage+"\nFlags:\n")
		fs.PrintDefaults()
	}
	pos, code, done := parseArgs(fs, args, false, stdout, stderr)
	if done {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "utxod %s: %s\n", name, fmt.Sprintf(format, a...))
		return 2
	}
	if len(pos) != 0 {
		return usageErr("unexpected argument %q (see utxod %s --help)", pos[0], name)
	}
	if *datadir == "" {
		return usageErr("--datadir is required")
	}
	if *cacheMB < 0 {
		return usageErr("--cache-mb: must not be negative, got %d", *cacheMB)
	}
	lf := commonFlags{logLevel: *logLevel, logFormat: *logFormat}
	log, err := lf.logger(stderr)
	if err != nil {
		return usageErr("%v", err)
	}
	if *backend == "" {
		*backend = defaultBackend
		if b, err := os.ReadFile(filepath.Join(*datadir, backends.MarkerFile)); err == nil {
			*backend = string(bytes.TrimSpace(b))
		}
	}
	if err := backends.Available(*backend); err != nil {
		return usageErr("--backend %s: %v", *backend, err)
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "utxod %s: %v\n", name, err)
		return 1
	}
	stopProfile, err := startProfile()
	if err != nil {
		return usageErr("%v", err)
	}
	defer stopProfile()
	if st, err := os.Stat(*datadir); err != nil || !st.IsDir() {
		return fail(fmt.Errorf("no datadir at %s", *datadir))
	}
	kv, err := backends.Open(*backend, *datadir, backends.Options{CacheBytes: int64(*cacheMB) << 20 / 4, Logger: log.With("store", *backend)})
	if err != nil {
		return fail(err)
	}
	defer func() {
		if err := kv.Close(); err != nil {
			log.Error("closing the store", "err", err)
		}
	}()
	start, last := time.Now(), time.Now()
	report := func(done, total uint64) {
		if *progress <= 0 || time.Since(last) < *progress {
			return
		}
		last = time.Now()
		if total > 0 {
			log.Info(name+" progress", "rows", done, "of", total, "percent", fmt.Sprintf("%.1f", 100*float64(done)/float64(total)),
				"rows_per_s", int(float64(done)/time.Since(start).Seconds()))
		} else {
			log.Info(name+" progress", "rows", done)
		}
	}
	switch sub {
	case "build":
		m, err := shindex.BuildWith(ctx, kv, shindex.BuildOptions{TmpDir: *datadir}, report)
		switch {
		case errors.Is(err, shindex.ErrExists):
			return fail(fmt.Errorf("%s already has a scripthash index (at height %d); utxod index drop removes it", *datadir, m.Tip.Height))
		case errors.Is(err, shindex.ErrNoChainstate):
			return fail(fmt.Errorf("%s has no chainstate to index (utxod import --index %s builds a new datadir with it)", *datadir, shindex.Name))
		case ctx.Err() != nil:
			return fail(fmt.Errorf("interrupted with %d of %d rows written; run it again to start over", m.Rows, m.Tip.TxOuts))
		case err != nil:
			return fail(err)
		}
		log.Info("index build done", "rows", m.Tip.TxOuts, "height", m.Tip.Height, "tip", m.Tip.Hash, "seconds", time.Since(start).Seconds())
		fmt.Fprintf(stdout, "scripthash index built: %d rows at height %d (%s)\n", m.Tip.TxOuts, m.Tip.Height, m.Tip.Hash)
	case "verify":
		m, err := shindex.Verify(ctx, kv, report)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "scripthash index verified: %d rows at height %d (%s)\n", m.Tip.TxOuts, m.Tip.Height, m.Tip.Hash)
	case "drop":
		m, ok, err := shindex.ReadMeta(kv)
		if err != nil {
			return fail(err)
		}
		n, err := shindex.Drop(ctx, kv, report)
		if err != nil {
			return fail(fmt.Errorf("%w (run it again to finish)", err))
		}
		state := "none"
		if ok {
			state = m.State.String()
		}
		log.Info("index drop done", "rows", n, "was", state, "seconds", time.Since(start).Seconds())
		fmt.Fprintf(stdout, "scripthash index dropped: %d rows removed (it was %s)\n", n, state)
	}
	return 0
}
