// Command storebench is the storage benchmark driver (docs/benchmarks/storage.md). Every subcommand prints
// one JSON object on stdout.
//
//	storebench gen     --target-utxos N | --target-outputs N | --blocks N  [--txs-per-block 2500] --seed S --out FILE
//	storebench connect --network regtest --backend B --datadir D [--cache-mb M] [--flush-every N] [--checkpoints 1e4,1e5] [--stop-utxos N] FILE...
//	storebench sample  --backend B --datadir D --n N --out FILE
//	storebench read    --network regtest --backend B --datadir D --sample FILE [--cache-mb M] [--passes 3] [--drop-page-cache]
//	storebench size    --backend B --datadir D [--coins-only NEWDIR]
//
// Build with -tags rocksdb for the RocksDB store.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"utxod/internal/storebench"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: storebench gen|connect|sample|read|size [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	network := fs.String("network", "regtest", "network")
	backend := fs.String("backend", "pebble", "store")
	datadir := fs.String("datadir", "", "data directory")
	cacheMB := fs.Int("cache-mb", 450, "coins cache budget (MiB); the store's block cache is a quarter of it, as in utxod import")
	var out any
	var err error
	switch os.Args[1] {
	case "gen":
		var c storebench.Config
		fs.Int64Var(&c.TargetUTXOs, "target-utxos", 0, "stop when the UTXO set reaches this size")
		fs.Int64Var(&c.TargetOutputs, "target-outputs", 0, "stop when this many outputs were created")
		fs.IntVar(&c.Blocks, "blocks", 0, "stop at this height")
		fs.IntVar(&c.TxsPerBlock, "txs-per-block", 2500, "transactions per block after the first 100")
		fs.Uint64Var(&c.Seed, "seed", 1, "seed")
		file := fs.String("out", "", "output block file")
		fs.Parse(os.Args[2:])
		f, ferr := os.Create(*file)
		if ferr != nil {
			fail(ferr)
		}
		out, err = storebench.Generate(c, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	case "connect":
		c := storebench.ConnectConfig{}
		fs.IntVar(&c.FlushEvery, "flush-every", 0, "explicit flush every N blocks (0: only when the cache exceeds its budget)")
		cps := fs.String("checkpoints", "", "comma-separated UTXO-set sizes to record (e.g. 1e4,1e5,1e6)")
		fs.Int64Var(&c.StopUTXOs, "stop-utxos", 0, "stop once the UTXO set reaches this size")
		fs.Parse(os.Args[2:])
		c.Network, c.Backend, c.Datadir, c.CacheMB, c.Files = *network, *backend, *datadir, *cacheMB, fs.Args()
		for _, s := range strings.Split(*cps, ",") {
			if s == "" {
				continue
			}
			v, perr := strconv.ParseFloat(s, 64)
			if perr != nil {
				fail(perr)
			}
			c.Checkpoints = append(c.Checkpoints, int64(v))
		}
		out, err = storebench.Connect(c)
	case "sample":
		n := fs.Int("n", 100_000, "outpoints to sample (one per txid)")
		seed := fs.Uint64("seed", 1, "seed")
		file := fs.String("out", "", "sample file")
		fs.Parse(os.Args[2:])
		out, err = storebench.Sample(*backend, *datadir, *n, *seed, *file)
	case "read":
		sample := fs.String("sample", "", "sample file (storebench sample)")
		passes := fs.Int("passes", 3, "passes over the sample (the first is cold)")
		drop := fs.Bool("drop-page-cache", false, "evict the datadir's files from the OS page cache before opening")
		fs.Parse(os.Args[2:])
		out, err = storebench.Read(*network, *backend, *datadir, *sample, *cacheMB, *passes, *drop)
	case "size":
		coinsOnly := fs.String("coins-only", "", "instead: copy the coin records into a fresh store in this directory, compact it and measure it")
		fs.Parse(os.Args[2:])
		if *coinsOnly != "" {
			out, err = storebench.SizeCoinsOnly(*backend, *datadir, *coinsOnly)
		} else {
			out, err = storebench.Size(*backend, *datadir)
		}
	default:
		fail(fmt.Errorf("unknown subcommand %q", os.Args[1]))
	}
	if err != nil {
		fail(err)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.Encode(out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "storebench:", err)
	os.Exit(1)
}
