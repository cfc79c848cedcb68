// Command btcdreplay replays Core-framed block files through btcd's
// blockchain package with full validation (ProcessBlock with BFNone, no
// checkpoints unless --checkpoint HEIGHT:HASH; btcd's default signature and
// hash caches) — the reference arm of the side-by-side validation
// benchmark. See bench/btcdreplay for exactly what is configured.
//
//	btcdreplay [--network regtest] [--datadir D] [--checkpoint HEIGHT:HASH] [--json] FILE...
//
// Exit status: 0 when every block was accepted, 1 when btcd rejected one
// (the block hash and btcd's error are printed) or the replay failed, 2 on
// usage errors.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"utxod/bench/btcdreplay"
	"utxod/internal/cli"
)

const usage = `Usage: btcdreplay [--network regtest] [--datadir D] [--checkpoint HEIGHT:HASH] [--json] FILE...

Fully validates every block of the files (Core block-file framing) with btcd's
blockchain.ProcessBlock(block, BFNone). A rejected block stops the replay with
exit status 1 and a line naming its hash and btcd's error. --checkpoint gives
btcd one checkpoint, its assume-valid equivalent: no script at or below it is
verified.
`

func main() { cli.Main(run) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	t := cli.New("btcdreplay", usage, stdout, stderr)
	fs := t.Flags
	network := fs.String("network", "regtest", "network of the block files: main, testnet3, testnet4, signet or regtest")
	datadir := fs.String("datadir", "", "btcd database directory (default: a temporary directory removed at exit)")
	asJSON := fs.Bool("json", false, "print the summary (blocks, txs, inputs, height, tip, wall_seconds, configuration) as JSON on stdout")
	sigCache := fs.Uint("sigcache", btcdreplay.DefaultSigCacheEntries, "btcd signature-cache and hash-cache entries (btcd's default --sigcachemaxsize)")
	utxoCache := fs.Uint("utxocache-mib", btcdreplay.DefaultUtxoCacheMiB, "btcd UTXO cache in MiB (btcd's default --utxocachemaxsize)")
	progress := fs.Duration("progress", 10*time.Second, "interval of progress log lines on stderr (0: off)")
	checkpoint := fs.String("checkpoint", "", "HEIGHT:HASH: btcd's only checkpoint (as btcd --addcheckpoint; btcd's assume-valid equivalent): the scripts of every block at or below HEIGHT are not verified, the block at HEIGHT must be HASH (default: no checkpoints, every script verified)")
	if code, done := t.Parse(args); done {
		return code
	}
	files := fs.Args()
	if len(files) == 0 {
		return t.UsageError(errors.New("no block files"))
	}
	if _, _, err := btcdreplay.ChainParams(*network); err != nil {
		return t.UsageError(err)
	}
	var cp *btcdreplay.Checkpoint
	if *checkpoint != "" {
		var err error
		if cp, err = btcdreplay.ParseCheckpoint(*checkpoint); err != nil {
			return t.UsageError(fmt.Errorf("--checkpoint: %w", err))
		}
	}
	log := t.Log
	s, err := btcdreplay.Run(ctx, btcdreplay.Config{
		Network: *network, DataDir: *datadir,
		SigCacheEntries: *sigCache, HashCacheEntries: *sigCache, UtxoCacheMiB: *utxoCache,
		Log: log, Progress: *progress, Checkpoint: cp,
	}, files)
	if err != nil {
		var re *btcdreplay.RejectError
		if errors.As(err, &re) {
			err = fmt.Errorf("block %s height %d rejected by btcd: %v [%s offset %d]", re.Hash, re.Height, re.Err, re.File, re.Offset)
		}
		return t.Fail(err)
	}
	log.Info("btcd replay done", "btcd", s.BtcdVersion, "blocks", s.Blocks, "txs", s.Txs, "inputs", s.Inputs,
		"height", s.Height, "tip", s.Tip, "seconds", s.WallSeconds)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return t.Fail(err)
		}
	}
	return cli.ExitOK
}
