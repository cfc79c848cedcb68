// Command chaingen writes a deterministic, valid regtest block chain in
// Bitcoin Core's block-file framing (magic fabfb5da, little-endian length,
// block) for tests and benchmarks. See testkit/chaingen.
//
//	chaingen --profile early|modern (--blocks N | --target-inputs N) --seed S --out FILE
//	         [--reorgs K] [--network regtest] [--json] [--workers W]
//	         [--max-block-weight W] [--max-txs N] [--ramp H] [--keys N] [--bury N]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"utxod/internal/cli"
	"utxod/params"
	"utxod/testkit/chaingen"
)

const usage = "Usage: chaingen --profile early|modern (--blocks N | --target-inputs N) --seed S --out FILE [--reorgs K] [--bury N] [--json]\n"

func main() { cli.Main(run) }

func run(_ context.Context, args []string, stdout, stderr io.Writer) int {
	t := cli.New("chaingen", usage, stdout, stderr)
	fs := t.Flags
	profile := fs.String("profile", "early", "early (2009–2012-like P2PK/P2PKH) or modern (segwit, taproot, timelocks, ...)")
	blocks := fs.Int("blocks", 0, "best-chain height to generate")
	target := fs.Int64("target-inputs", 0, "instead of --blocks: stop once the best chain has at least this many non-coinbase inputs")
	seed := fs.Uint64("seed", 1, "seed of keys and every random decision (same flags, same bytes)")
	out := fs.String("out", "", "output file (Core block-file framing)")
	reorgs := fs.Int("reorgs", 0, "number of reorg events (a competing branch first loses, then overtakes)")
	network := fs.String("network", "regtest", "network (only regtest)")
	asJSON := fs.Bool("json", false, "print the summary as JSON on stdout")
	workers := fs.Int("workers", 0, "signing goroutines (default GOMAXPROCS; output does not depend on it)")
	maxWeight := fs.Int("max-block-weight", 0, "block weight bound (default 3992000)")
	maxTxs := fs.Int("max-txs", 0, "bound on non-coinbase transactions per block (0: none)")
	ramp := fs.Int("ramp", 0, "height at which the mean block reaches half the weight bound (default early 2500, modern 400)")
	keys := fs.Int("keys", 0, "size of the deterministic key table (default 4096)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file")
	startTime := fs.Uint("start-time", 0, "earliest block time, Unix seconds (default 1333238400, btcd's BIP16 switch time)")
	bury := fs.Int("bury", 0, "append this many coinbase-only blocks after the chain (2017: the chain's transactions lie more than two weeks of regtest work under the tip, as Core's assume-valid needs to skip their scripts)")
	if code, done := t.Parse(args); done {
		return code
	}
	if *out == "" || fs.NArg() != 0 {
		return t.UsageError(errors.New("--out is required, and no arguments"))
	}
	p, err := params.ByName(*network)
	if err != nil {
		return t.UsageError(err)
	}
	g, err := chaingen.New(chaingen.Config{
		Profile: *profile, Params: p, Seed: *seed, Blocks: *blocks, TargetInputs: *target,
		Reorgs: *reorgs, Workers: *workers, MaxBlockWeight: *maxWeight, MaxTxs: *maxTxs, Ramp: *ramp, Keys: *keys,
		StartTime: uint32(*startTime), Bury: *bury,
	})
	if err != nil {
		return t.UsageError(err)
	}
	if *cpuProfile != "" {
		pf, err := os.Create(*cpuProfile)
		if err != nil {
			return t.Fail(err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return t.Fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	f, err := os.Create(*out)
	if err != nil {
		return t.Fail(err)
	}
	s, err := g.Run(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(*out)
		return t.Fail(err)
	}
	t.Log.Info("chain generated", "profile", s.Profile, "seed", s.Seed, "blocks", s.Blocks, "stale_blocks", s.StaleBlocks,
		"reorgs", s.Reorgs, "height", s.Height, "txs", s.Txs, "inputs", s.Inputs, "outputs", s.Outputs, "utxos", s.UTXOs,
		"bytes", s.Bytes, "tip", s.Tip, "seconds", fmt.Sprintf("%.2f", s.Seconds),
		"blocks/s", fmt.Sprintf("%.0f", float64(s.Blocks)/s.Seconds), "inputs/s", fmt.Sprintf("%.0f", float64(s.Inputs)/s.Seconds))
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return t.Fail(err)
		}
	}
	return cli.ExitOK
}
