package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"utxod/backends"
	_ "utxod/backends/all"
	"utxod/chainstate"
	"utxod/internal/diskspace"
	"utxod/merkle"
	"utxod/params"
	"utxod/script"
	"utxod/validate"
)

// commonFlags are shared by every command that validates blocks.
type commonFlags struct {
	network      string
	datadir      string
	backend      string
	merkleKernel string
	logLevel     string
	logFormat    string
	cacheMB      int
	minFreeMB    int
	scriptEngine string
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if v, ok := os.LookupEnv(name); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.network, "network", envOr("UTXOD_NETWORK", "main"), "network: main, testnet3, testnet4, signet or regtest")
	fs.StringVar(&c.datadir, "datadir", envOr("UTXOD_DATADIR", ""), "data directory (empty: keep the chainstate in memory)")
	fs.StringVar(&c.backend, "backend", envOr("UTXOD_BACKEND", "pebble"), "store: pebble, rocksdb or bbolt")
	fs.StringVar(&c.merkleKernel, "merkle-kernel", envOr("UTXOD_MERKLE_KERNEL", "generic"), "SHA-256d merkle kernel: generic (default: the whole-process gate did not promote the SIMD kernels, docs/benchmarks/gate/merkle-generic-vs-auto), auto (fastest the CPU has), avx2, shani or avx512")
	fs.StringVar(&c.scriptEngine, "script-engine", envOr("UTXOD_SCRIPT_ENGINE", "utxod"), "script engine: utxod (own interpreter on libsecp256k1; promoted by the gate in docs/benchmarks/gate/script-engine-txscript-vs-utxod) or txscript (btcd's, the control arm)")
	fs.IntVar(&c.cacheMB, "cache-mb", envInt("UTXOD_CACHE_MB", 450), "coins cache budget in MiB (flushed to the store when exceeded)")
	fs.IntVar(&c.minFreeMB, "min-free-mb", envInt(diskspace.EnvMinFreeMB, diskspace.DefaultMinFreeBytes>>20), "free space (MiB) every flush must leave on the datadir's filesystem beyond what it writes, as Core's CheckDiskSpace; 0 turns the pre-flush check off")
	fs.StringVar(&c.logLevel, "log-level", envOr("UTXOD_LOG_LEVEL", "info"), "log level: debug, info, warn, error")
	fs.StringVar(&c.logFormat, "log-format", envOr("UTXOD_LOG_FORMAT", "text"), "log format: text or json")
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
	h, err := merkle.New(c.merkleKernel, log)
	if err != nil {
		return nil, nil, fmt.Errorf("--merkle-kernel: %w", err)
	}
	var engine script.Engine
	switch c.scriptEngine {
	case "txscript":
		engine = script.NewBtcdEngine(script.WithSigCache(100_000))
	case "utxod", "native":
		engine = script.NewEngine()
	default:
		return nil, nil, fmt.Errorf("--script-engine: want txscript or utxod, got %q", c.scriptEngine)
	}
	v := validate.New(p, engine, log)
	v.Merkle = h.Root
	return p, v, nil
}

// openChainstate opens the chainstate the flags describe: in memory when
// --datadir is empty, otherwise the persistent store in the datadir.
// The returned close function flushes and closes the store.
func (c *commonFlags) openChainstate(log *slog.Logger, tune ...func(*chainstate.Config)) (*chainstate.Chainstate, func() error, error) {
	p, v, err := c.validator(log)
	if err != nil {
		return nil, nil, err
	}
	var store chainstate.Store
	closeKV := func() error { return nil }
	if c.datadir == "" {
		store = chainstate.NewMemStore()
	} else {
		kv, err := backends.Open(c.backend, c.datadir, backends.Options{
			CacheBytes: int64(c.cacheMB) << 20 / 4,
			Logger:     log.With("store", c.backend),
		})
		if err != nil {
			return nil, nil, err
		}
		kvs := chainstate.NewKVStore(kv, int64(c.cacheMB)<<20)
		kvs.SetMinFree(uint64(max(c.minFreeMB, 0)) << 20)
		store = kvs
		closeKV = kv.Close
	}
	cfg := chainstate.Config{Params: p, Validator: v, Store: store, Log: log}
	for _, f := range tune {
		f(&cfg)
	}
	cs, err := chainstate.New(cfg)
	if err != nil {
		store.Close()
		closeKV()
		return nil, nil, err
	}
	return cs, func() error {
		ferr := cs.Flush()
		serr := store.Close()
		kerr := closeKV()
		return errors.Join(ferr, serr, kerr)
	}, nil
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
