package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"utxod/internal/heapprof"

	"utxod/backends"
	_ "utxod/backends/all"
	"utxod/chainstate"
	"utxod/internal/cli"
	"utxod/internal/debugset"
	"utxod/internal/diskspace"
	"utxod/merkle"
	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/store/kvstore"
	"utxod/store/kvstore/shindex"
	"utxod/validate"
)

// commonFlags are shared by every command that validates blocks.
type commonFlags struct {
	network      string
	datadir      string
	backend      string
	logLevel     string
	logFormat    string
	cacheMB      int
	minFreeMB    int
	assumeValid  string // "" the network's default
	minChainWork string // "" the network's default
	// index is --index (import and serve only; "" none asked for).
	index string
	// sigCacheLookupOnly: the engine never stores into its signature cache
	// (import: see cmdImport).
	sigCacheLookupOnly bool
	// debug are the UTXOD_DEBUG settings (readDebug), read by check.
	debug debugset.Settings
	// scripthashIndex is the datadir's scripthash index once
	// openChainstate opened it (nil without one).
	scripthashIndex *shindex.Index
}

// Defaults of the shared flags. Each has one source: the flag registrations
// below read these, and the library packages' own zero values mean the same
// (diskspace.DefaultMinFreeBytes, kvstore.DefaultCacheBytes).
const (
	defaultNetwork = "main"
	defaultBackend = "pebble"
	defaultCacheMB = kvstore.DefaultCacheBytes >> 20
)

// readDebug parses the UTXOD_DEBUG environment variable: the settings
// benchmarks may change without a flag (internal/debugset; documented in
// bench/settings.md). It is the only place utxod reads it.
func readDebug() (debugset.Settings, error) {
	return debugset.Parse(os.Getenv(debugset.Env))
}

// cacheHelp says exactly what --cache-mb buys and what comes on top of it.
const cacheHelp = "coins cache budget in MiB, flushed to the store in one atomic batch when exceeded. " +
	"On top of it, pebble and RocksDB get a block cache of a quarter of it and memtables of a sixteenth " +
	"each (4 to 256 MiB; up to 4 while a flush is behind); bbolt reads through the OS page cache"

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.network, "network", defaultNetwork, "network: main, testnet3, testnet4, signet or regtest")
	fs.StringVar(&c.datadir, "datadir", "", "data directory (empty: keep the chainstate in memory)")
	fs.StringVar(&c.backend, "backend", defaultBackend, "store: pebble, rocksdb or bbolt")
	fs.IntVar(&c.cacheMB, "cache-mb", defaultCacheMB, cacheHelp)
	fs.IntVar(&c.minFreeMB, "min-free-mb", int(diskspace.DefaultMinFreeBytes>>20), "free space (MiB) every flush must leave on the datadir's filesystem beyond what it writes, as Core's CheckDiskSpace; 0 turns the pre-flush check off")
	fs.StringVar(&c.assumeValid, "assume-valid", "", "assume-valid block hash, Core's -assumevalid: the scripts (only they) of its ancestors buried more than two weeks of work under the best header are not verified; 0 verifies every script; empty: the network's default (Core's defaultAssumeValid; none on regtest)")
	fs.StringVar(&c.minChainWork, "min-chain-work", "", "minimum chain work (hex) of the best header before --assume-valid skips any script, Core's -minimumchainwork; empty: the network's default (Core's nMinimumChainWork; 0 on regtest)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
}

// registerIndex adds --index (import and serve).
func (c *commonFlags) registerIndex(fs *flag.FlagSet) {
	fs.StringVar(&c.index, "index", "", "secondary index to keep: scripthash (address and scripthash lookups without a scan; needs --datadir). "+
		"A datadir remembers it: one with the index keeps it without the flag; an existing datadir without it builds it with 'utxod index build'")
}

// check validates the shared flags' values before anything is opened, so a
// bad value or a store this build lacks is a usage error (exit 2) with one
// line saying what is wrong.
func (c *commonFlags) check() error {
	p, err := params.ByName(c.network)
	if err != nil {
		return fmt.Errorf("--network: %w", err)
	}
	if _, err := c.assumeValidFor(p); err != nil {
		return err
	}
	if err := backends.Available(c.backend); err != nil {
		return fmt.Errorf("--backend %s: %w", c.backend, err)
	}
	if c.debug, err = readDebug(); err != nil {
		return err
	}
	if _, err := merkle.New(c.debug.Get(debugset.MerkleKernel), slog.New(slog.DiscardHandler)); err != nil {
		return fmt.Errorf("%s: %s: %w", debugset.Env, debugset.MerkleKernel, err)
	}
	if c.cacheMB < 0 {
		return fmt.Errorf("--cache-mb: must not be negative, got %d", c.cacheMB)
	}
	if c.minFreeMB < 0 {
		return fmt.Errorf("--min-free-mb: must not be negative, got %d", c.minFreeMB)
	}
	switch c.index {
	case "":
	case shindex.Name:
		if c.datadir == "" {
			return fmt.Errorf("--index %s needs --datadir (without one, address lookups scan the in-memory set)", c.index)
		}
	default:
		return fmt.Errorf("--index: want %s, got %q", shindex.Name, c.index)
	}
	if _, err := c.logger(io.Discard); err != nil {
		return err
	}
	return nil
}

// checkHashType validates a --hash-type value (the names chainstate.Info takes).
func checkHashType(v string) error {
	switch v {
	case chainstate.HashTypeHashSerialized3, chainstate.HashTypeMuHash, chainstate.HashTypeNone:
		return nil
	}
	return fmt.Errorf("--hash-type: want hash_serialized_3, muhash or none, got %q", v)
}

// printInfoJSON prints the chainstate's gettxoutsetinfo object as GET
// /v1/chainstate returns it (hash_serialized_3 comes with muhash too).
func printInfoJSON(cs *chainstate.Chainstate, hashType, cmd string, stdout, stderr io.Writer) int {
	info, err := cs.Info(hashType)
	if err != nil {
		fmt.Fprintf(stderr, "utxod %s: %v\n", cmd, err)
		return 2
	}
	if hashType == chainstate.HashTypeHashSerialized3 && info.MuHash == nil {
		full, _ := cs.Info(chainstate.HashTypeMuHash)
		info.MuHash = full.MuHash
	}
	return printJSON(info, cmd, stdout, stderr)
}

// printJSON writes v as indented JSON on stdout.
func printJSON(v any, cmd string, stdout, stderr io.Writer) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "utxod %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

// envName is the environment variable every flag falls back to:
// UTXOD_<FLAG> with dashes as underscores (UTXOD_CACHE_MB for --cache-mb).
func envName(flagName string) string {
	return "UTXOD_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseArgs applies the UTXOD_* environment variables, then parses args
// (with interleaved, flags may come before, between or after positional
// arguments). done reports that the command must stop with code: 0 after
// --help (usage on stdout), 2 after an unknown flag or a bad value (one line
// on stderr). fs.Usage must write to fs.Output().
func parseArgs(fs *flag.FlagSet, args []string, interleaved bool, stdout, stderr io.Writer) (pos []string, code int, done bool) {
	fs.SetOutput(io.Discard)
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := os.LookupEnv(envName(f.Name)); ok && envErr == nil {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%s=%q: %w", envName(f.Name), v, err)
			}
		}
	})
	if envErr != nil {
		fmt.Fprintf(stderr, "utxod %s: %v\n", fs.Name(), envErr)
		return nil, 2, true
	}
	var err error
	if interleaved {
		pos, err = parseInterleaved(fs, args)
	} else {
		err = fs.Parse(args)
		pos = fs.Args()
	}
	if code, done := cli.ParseResult(fs, "utxod "+fs.Name(), err, stdout, stderr); done {
		return nil, code, true
	}
	fs.SetOutput(stderr)
	return pos, 0, false
}

func (c *commonFlags) logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(c.logFormat) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: want text or json, got %q", c.logFormat)
}

// validator builds the consensus validator for the flags.
func (c *commonFlags) validator(log *slog.Logger) (*params.Params, *validate.Validator, error) {
	p, err := params.ByName(c.network)
	if err != nil {
		return nil, nil, err
	}
	h, err := merkle.New(c.debug.Get(debugset.MerkleKernel), log)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", debugset.Env, debugset.MerkleKernel, err)
	}
	if set := c.debug.NonDefault(); len(set) > 0 {
		log.Info("debug settings", debugset.Env, strings.Join(set, ","))
	}
	engine := script.NewEngine(script.WithSigCacheStore(!c.sigCacheLookupOnly))
	v := validate.New(p, engine, log)
	v.Merkle = h.Root
	return p, v, nil
}

// assumeValidFor is the assume-valid setting the flags give on p: the
// network's default unless --assume-valid / --min-chain-work override it.
func (c *commonFlags) assumeValidFor(p *params.Params) (validate.AssumeValid, error) {
	av := validate.DefaultAssumeValid(p)
	if c.assumeValid != "" {
		h, err := validate.ParseUserHash(c.assumeValid)
		if err != nil {
			return av, fmt.Errorf("--assume-valid: %w (or 0 to verify every script)", err)
		}
		av.Block = h
	}
	if c.minChainWork != "" {
		w, err := validate.ParseUserWork(c.minChainWork)
		if err != nil {
			return av, fmt.Errorf("--min-chain-work: %w", err)
		}
		av.MinimumChainWork = w
	}
	return av, nil
}

// openChainstate opens the chainstate the flags describe: in memory when
// --datadir is empty, otherwise the persistent store in the datadir.
// The returned close function flushes and closes the store.
func (c *commonFlags) openChainstate(log *slog.Logger, tune ...func(*chainstate.Config)) (*chainstate.Chainstate, func() error, error) {
	p, v, err := c.validator(log)
	if err != nil {
		return nil, nil, err
	}
	av, err := c.assumeValidFor(p)
	if err != nil {
		return nil, nil, err
	}
	var st store.Store
	closeKV := func() error { return nil }
	if c.datadir == "" {
		st = store.NewMem()
	} else {
		kv, err := backends.Open(c.backend, c.datadir, backends.Options{
			CacheBytes: int64(c.cacheMB) << 20 / 4,
			Logger:     log.With("store", c.backend),
		})
		if err != nil {
			return nil, nil, err
		}
		kvs := kvstore.New(kv, int64(c.cacheMB)<<20)
		kvs.SetMinFree(uint64(max(c.minFreeMB, 0)) << 20)
		// pebble and RocksDB write the early batches of undo records and
		// blocks unsynced; the next flush's synced batch makes them
		// durable, as Core syncs its block and undo files only when it
		// flushes. bbolt always syncs: its unsynced commits can corrupt
		// the file on power loss.
		if c.backend != "bbolt" {
			kvs.SetEarlySync(backends.NoSync)
		}
		// Raw blocks and undo records go to flat files, as Core's blk and
		// rev files; the KV keeps their locations. A record whose append
		// meets a full disk goes to the KV, and records an older datadir
		// kept in the KV stay readable.
		if err := kvs.UseBlockFiles(filepath.Join(c.datadir, "blocks")); err != nil {
			kv.Close()
			return nil, nil, err
		}
		if err := kvs.UseUndoFiles(filepath.Join(c.datadir, "undo")); err != nil {
			kv.Close()
			return nil, nil, err
		}
		// On a datadir without coins the cache answers misses without
		// reading the store until a flush over --cache-mb empties it.
		on, err := kvs.TrustCacheMisses()
		if err != nil {
			kv.Close()
			return nil, nil, err
		}
		log.Debug("coins cache misses", "trusted", on)
		ix, err := c.openIndex(kv, p)
		if err != nil {
			kv.Close()
			return nil, nil, err
		}
		if ix != nil {
			if err := kvs.AddIndex(ix); err != nil {
				kv.Close()
				return nil, nil, err
			}
			log.Info("scripthash index on", "datadir", c.datadir)
		}
		c.scripthashIndex = ix
		st = kvs
		closeKV = func() error {
			if ix != nil {
				ix.Close()
			}
			return kv.Close()
		}
	}
	cfg := chainstate.Config{Params: p, Validator: v, Store: st, Log: log, AssumeValid: av}
	for _, f := range tune {
		f(&cfg)
	}
	cs, err := chainstate.New(cfg)
	if err != nil {
		st.Close()
		closeKV()
		return nil, nil, err
	}
	return cs, func() error {
		ferr := cs.Flush()
		serr := st.Close()
		kerr := closeKV()
		return errors.Join(ferr, serr, kerr)
	}, nil
}

// openIndex opens the datadir's scripthash index: the one it keeps (with or
// without --index), a new one for a new datadir with --index scripthash, or
// none. --index on an existing datadir without a complete index is refused
// with the command that builds it.
func (c *commonFlags) openIndex(kv backends.KV, p *params.Params) (*shindex.Index, error) {
	m, ok, err := shindex.ReadMeta(kv)
	if err != nil {
		return nil, err
	}
	if ok && m.State == shindex.Complete {
		ix, err := shindex.Open(kv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.datadir, err)
		}
		return ix, nil
	}
	if c.index == "" {
		return nil, nil
	}
	ix, err := shindex.Create(kv, p.GenesisHash)
	if errors.Is(err, shindex.ErrNotNew) {
		return nil, fmt.Errorf("--index %s: the datadir %s has a chainstate but no complete scripthash index; build it with: utxod index build --datadir %s --backend %s",
			c.index, c.datadir, c.datadir, c.backend)
	}
	return ix, err
}

// parseInterleaved parses flags that may appear before, between or after
// positional arguments (`import FILE --json` works like `import --json FILE`)
// and returns the positional arguments. "--" ends flag parsing.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// profileFlags adds --cpuprofile and --trace to fs; the returned start
// begins the profile and the execution trace when their flags are set and
// returns the function that ends them.
func profileFlags(fs *flag.FlagSet) (start func() (stop func(), err error)) {
	path := fs.String("cpuprofile", "", "write a CPU profile to this file")
	tracePath := fs.String("trace", "", "write a runtime execution trace to this file (go tool trace: how busy each core is)")
	memPath := fs.String("memprofile-peak", "", "write a heap profile to this file, taken at the peak of the live heap (sampled every 200 ms)")
	return func() (func(), error) {
		var stops []func()
		stop := func() {
			for i := len(stops) - 1; i >= 0; i-- {
				stops[i]()
			}
		}
		if *path != "" {
			f, err := os.Create(*path)
			if err != nil {
				return nil, err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				return nil, err
			}
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
		if *memPath != "" {
			stopHeap, err := heapprof.Start(*memPath, 0)
			if err != nil {
				stop()
				return nil, err
			}
			stops = append(stops, func() { _ = stopHeap() })
		}
		if *tracePath != "" {
			f, err := os.Create(*tracePath)
			if err != nil {
				stop()
				return nil, err
			}
			if err := trace.Start(f); err != nil {
				f.Close()
				stop()
				return nil, err
			}
			stops = append(stops, func() { trace.Stop(); f.Close() })
		}
		return stop, nil
	}
}
