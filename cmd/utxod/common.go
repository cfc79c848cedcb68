package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
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
	"utxod/node"
	"utxod/params"
	"utxod/store/kvstore"
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
	// debug are the UTXOD_DEBUG settings (readDebug), read by check.
	debug debugset.Settings
}

// Defaults of the shared flags. Each has one source: the flag registrations
// below read these, and the library packages' own zero values mean the same
// (diskspace.DefaultMinFreeBytes, kvstore.DefaultCacheBytes,
// node.DefaultBackend).
const (
	defaultNetwork = "main"
	defaultBackend = node.DefaultBackend
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
	"each (4 to 256 MiB; up to 4 while a flush is behind); bbolt reads through the OS page cache. " +
	"The Go heap is held to half of it (on bbolt, all of it) plus 1280 MiB (GOMEMLIMIT, when set, instead); bbolt also flushes before its batch outgrows that heap, as its commit copies every page it changes"

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
	fs.StringVar(&c.index, "index", "", "secondary indexes to keep, separated by commas (needs --datadir): scripthash (address and scripthash lookups without a scan), silentpayments (BIP352 tweaks of every block connected). "+
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
	if _, err := node.AssumeValidFor(p, c.assumeValid, c.minChainWork); err != nil {
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
	if err := node.CheckIndex(c.index, c.datadir); err != nil {
		return err
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

// nodeOptions are the node.Options the flags describe, logging to log.
func (c *commonFlags) nodeOptions(log *slog.Logger) (node.Options, error) {
	p, err := params.ByName(c.network)
	if err != nil {
		return node.Options{}, err
	}
	av, err := node.AssumeValidFor(p, c.assumeValid, c.minChainWork)
	if err != nil {
		return node.Options{}, err
	}
	minFree := int64(c.minFreeMB) << 20
	if minFree == 0 {
		minFree = -1 // --min-free-mb 0 turns the pre-flush check off
	}
	return node.Options{Params: p, Datadir: c.datadir, Backend: c.backend, CacheBytes: int64(c.cacheMB) << 20,
		MinFreeBytes: minFree, Index: c.index, AssumeValid: av, MerkleKernel: c.debug.Get(debugset.MerkleKernel), Log: log}, nil
}

// openNode opens the node the flags describe (in memory when --datadir is
// empty), with tune's changes to its options; Close flushes and closes it.
func (c *commonFlags) openNode(ctx context.Context, log *slog.Logger, tune ...func(*node.Options)) (*node.Node, error) {
	opts, err := c.nodeOptions(log)
	if err != nil {
		return nil, err
	}
	for _, f := range tune {
		f(&opts)
	}
	if set := c.debug.NonDefault(); len(set) > 0 {
		log.Info("debug settings", debugset.Env, strings.Join(set, ","))
	}
	limitMemory(c.cacheMB, opts.Backend)
	return node.Open(ctx, opts)
}

// limitMemory sets the Go runtime's soft memory limit to the store's
// (node.HeapLimit), unless GOMEMLIMIT is set: the runtime read it.
func limitMemory(cacheMB int, backend string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(node.HeapLimit(backend, int64(cacheMB)<<20))
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

// fail prints "utxod CMD: ERR" on stderr and returns code.
func fail(stderr io.Writer, cmd string, code int, err error) int {
	fmt.Fprintf(stderr, "utxod %s: %v\n", cmd, err)
	return code
}
