// Command storebench is the storage benchmark driver (bench/storebench;
// bench/results/storage.md, run by bench/storebench/run.sh). Every
// subcommand prints one JSON object on stdout.
//
//	storebench gen     --target-utxos N | --target-outputs N | --blocks N  [--txs-per-block 2500] --seed S --out FILE
//	storebench connect --network regtest --backend B --datadir D [--cache-mb M] [--flush-every N] [--checkpoints 1e4,1e5] [--stop-utxos N] FILE...
//	storebench sample  --backend B --datadir D --n N --out FILE
//	storebench read    --network regtest --backend B --datadir D --sample FILE [--cache-mb M] [--passes 3] [--drop-page-cache]
//	storebench size    --backend B --datadir D [--coins-only NEWDIR]
//
// Build with -tags rocksdb for the RocksDB store. Exit status: 0 on
// success, 1 when the measurement fails, 2 on usage errors.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"utxod/bench/storebench"
	"utxod/internal/cli"
)

const usage = `Usage: storebench gen|connect|sample|read|size [flags]

The storage benchmark driver (bench/results/storage.md); every subcommand
prints one JSON object on stdout. storebench SUBCOMMAND --help lists its flags.
`

func main() { cli.Main(run) }

func run(_ context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		fmt.Fprintln(stderr, "storebench: no subcommand (gen, connect, sample, read or size; see storebench --help)")
		return cli.ExitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return cli.ExitOK
	}
	t := cli.New("storebench "+args[0], usage, stdout, stderr)
	fs := t.Flags
	network := fs.String("network", "regtest", "network")
	backend := fs.String("backend", "pebble", "store")
	datadir := fs.String("datadir", "", "data directory")
	cacheMB := fs.Int("cache-mb", 450, "coins cache budget (MiB); the store's block cache is a quarter of it, as in utxod import")
	var measure func() (any, error)
	switch args[0] {
	case "gen":
		var c storebench.Config
		fs.Int64Var(&c.TargetUTXOs, "target-utxos", 0, "stop when the UTXO set reaches this size")
		fs.Int64Var(&c.TargetOutputs, "target-outputs", 0, "stop when this many outputs were created")
		fs.IntVar(&c.Blocks, "blocks", 0, "stop at this height")
		fs.IntVar(&c.TxsPerBlock, "txs-per-block", 2500, "transactions per block after the first 100")
		fs.Uint64Var(&c.Seed, "seed", 1, "seed")
		file := fs.String("out", "", "output block file")
		measure = func() (any, error) {
			f, err := os.Create(*file)
			if err != nil {
				return nil, err
			}
			out, err := storebench.Generate(c, f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return out, err
		}
	case "connect":
		var c storebench.ConnectConfig
		fs.IntVar(&c.FlushEvery, "flush-every", 0, "explicit flush every N blocks (0: only when the cache exceeds its budget)")
		cps := fs.String("checkpoints", "", "comma-separated UTXO-set sizes to record (e.g. 1e4,1e5,1e6)")
		fs.Int64Var(&c.StopUTXOs, "stop-utxos", 0, "stop once the UTXO set reaches this size")
		measure = func() (any, error) {
			c.Network, c.Backend, c.Datadir, c.CacheMB, c.Files = *network, *backend, *datadir, *cacheMB, fs.Args()
			for _, s := range strings.Split(*cps, ",") {
				if s == "" {
					continue
				}
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, fmt.Errorf("--checkpoints: %w", err)
				}
				c.Checkpoints = append(c.Checkpoints, int64(v))
			}
			return storebench.Connect(c)
		}
	case "sample":
		n := fs.Int("n", 100_000, "outpoints to sample (one per txid)")
		seed := fs.Uint64("seed", 1, "seed")
		file := fs.String("out", "", "sample file")
		measure = func() (any, error) { return storebench.Sample(*backend, *datadir, *n, *seed, *file) }
	case "read":
		sample := fs.String("sample", "", "sample file (storebench sample)")
		passes := fs.Int("passes", 3, "passes over the sample (the first is cold)")
		drop := fs.Bool("drop-page-cache", false, "evict the datadir's files from the OS page cache before opening")
		measure = func() (any, error) {
			return storebench.Read(*network, *backend, *datadir, *sample, *cacheMB, *passes, *drop)
		}
	case "size":
		coinsOnly := fs.String("coins-only", "", "instead: copy the coin records into a fresh store in this directory, compact it and measure it")
		measure = func() (any, error) {
			if *coinsOnly != "" {
				return storebench.SizeCoinsOnly(*backend, *datadir, *coinsOnly)
			}
			return storebench.Size(*backend, *datadir)
		}
	default:
		return t.UsageError(fmt.Errorf("unknown subcommand %q", args[0]))
	}
	if code, done := t.Parse(args[1:]); done {
		return code
	}
	out, err := measure()
	if err != nil {
		return t.Fail(err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return t.Fail(err)
	}
	return cli.ExitOK
}
