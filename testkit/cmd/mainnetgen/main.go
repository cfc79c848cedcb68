// Command mainnetgen writes a deterministic UTXO set shaped like mainnet's
// (2024–25) as a Bitcoin Core snapshot (dumptxoutset format 2), with the
// regtest header chain to its base block and the digests the generator
// computed itself. See testkit/mainnetgen.
//
//	mainnetgen --coins N --seed S [--network regtest|main] [--height H] --out DIR [--workers W] [--json]
//
// DIR/utxo.dat is the snapshot, DIR/headers.dat the raw 80-byte headers
// from height 1 to the base (regtest only), DIR/expect.json the height,
// base hash, coin count and gettxoutsetinfo figures (txouts, transactions,
// bogosize, total_amount in satoshis, hash_serialized_3, muhash) with the
// shape drawn. On regtest DIR/blocks.dat holds blocks on top of the base
// (Core's block-file framing, real signatures): --old-blocks spending random
// snapshot coins, then --recent-blocks spending mostly the outputs of the
// blocks before them, --block-txs transactions each (fewer in a small set);
// expect.json's "blocks" lists them with the set's figures after the last.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"utxod/internal/cli"
	"utxod/testkit/mainnetgen"
)

const usage = "Usage: mainnetgen --coins N --seed S [--network regtest|main] [--height H] [--old-blocks B --recent-blocks B --block-txs T] --out DIR [--workers W] [--json]\n"

func main() { cli.Main(run) }

func run(_ context.Context, args []string, stdout, stderr io.Writer) int {
	t := cli.New("mainnetgen", usage, stdout, stderr)
	fs := t.Flags
	coins := fs.Uint64("coins", 0, "coins in the set (mainnet peaked near 185000000)")
	seed := fs.Uint64("seed", 1, "seed of every random decision (same flags, same bytes)")
	network := fs.String("network", "regtest", "regtest (snapshot with a valid header chain) or main (snapshot only: no header chain can meet mainnet's proof of work)")
	height := fs.Int("height", mainnetgen.DefaultHeight, "base block height; coins are at heights 1..H")
	out := fs.String("out", "", "output directory")
	workers := fs.Int("workers", 0, "MuHash goroutines (default GOMAXPROCS; output does not depend on it)")
	progress := fs.Duration("progress", 10*time.Second, "interval of progress log lines (0: none)")
	asJSON := fs.Bool("json", false, "print expect.json on stdout")
	oldBlocks := fs.Int("old-blocks", mainnetgen.DefaultOldBlocks, "blocks on the base spending random old coins of the snapshot (regtest only)")
	recentBlocks := fs.Int("recent-blocks", mainnetgen.DefaultRecentBlocks, "blocks after those spending mostly the outputs of the blocks before them (regtest only)")
	blockTxs := fs.Int("block-txs", mainnetgen.DefaultBlockTxs, "transactions per block, two inputs each (fewer when the set has too few spendable coins)")
	if code, done := t.Parse(args); done {
		return code
	}
	if *out == "" || *coins == 0 || fs.NArg() != 0 {
		return t.UsageError(errors.New("--out and --coins are required, and no arguments"))
	}
	if *height < 1 || *height > 1<<30 {
		return t.UsageError(fmt.Errorf("--height %d: want 1 to 2^30", *height))
	}
	if *oldBlocks < 0 || *recentBlocks < 0 || *blockTxs < 1 {
		return t.UsageError(errors.New("--old-blocks and --recent-blocks want 0 or more, --block-txs 1 or more"))
	}
	cfg := mainnetgen.Config{Coins: *coins, Seed: *seed, Network: *network, Height: int32(*height), Workers: *workers,
		Blocks: mainnetgen.BlockConfig{Old: *oldBlocks, Recent: *recentBlocks, Txs: *blockTxs}}
	if *progress > 0 {
		start, last := time.Now(), time.Now()
		cfg.Progress = func(done, total uint64) {
			if time.Since(last) < *progress {
				return
			}
			last = time.Now()
			rate := float64(done) / time.Since(start).Seconds()
			t.Log.Info("generating", "coins", done, "of", total, "coins_per_s", int(rate),
				"eta", (time.Duration(float64(total-done)/max(rate, 1)) * time.Second).Round(time.Second).String())
		}
	}
	e, err := mainnetgen.Generate(cfg, *out)
	if err != nil {
		return t.Fail(err)
	}
	t.Log.Info("snapshot generated", "dir", *out, "coins", e.Coins, "transactions", e.Transactions, "height", e.Height,
		"base", e.BaseHash, "bytes", e.Snapshot.Bytes, "hash_serialized_3", e.HashSerialized3, "muhash", e.MuHash,
		"seconds", fmt.Sprintf("%.2f", e.Seconds), "coins/s", fmt.Sprintf("%.0f", float64(e.Coins)/e.Seconds),
		"spendable", e.Spendable, "key_pool", e.KeyPool)
	if b := e.Blocks; b != nil {
		t.Log.Info("blocks generated", "file", b.File.Name, "blocks", b.File.Count, "txs_per_block", b.TxsPerBlock,
			"tip", b.TipHash, "tip_height", b.TipHeight, "hash_serialized_3", b.After.HashSerialized3,
			"muhash", b.After.MuHash, "seconds", fmt.Sprintf("%.2f", b.Seconds))
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(e); err != nil {
			return t.Fail(err)
		}
	}
	return cli.ExitOK
}
