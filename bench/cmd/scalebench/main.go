// Command scalebench measures what a user does with a datadir loaded from a
// mainnet-shaped snapshot (bench/results/scale.md, the serving table): it
// starts `utxod serve` on the datadir as a child process and drives it over
// loopback from this process, which shares the host's CPUs with it.
//
//	scalebench serve --datadir D --snapshot FILE [--expect expect.json] [--blocks FILE] ...
//	scalebench scan --datadir D --snapshot FILE [--expect expect.json]
//	scalebench dropcache DIR [--check]
//
// serve measures outpoint lookups (GET /v1/utxos/{txid}/{vout}) and address
// lookups (Esplora's /api/address/{a}/utxo) under concurrent keep-alive load
// while the blocks of --blocks (Core's blk framing, extending the datadir's
// tip) are POSTed; paging the largest whale of expect.json through
// /v1/scripthash/{h}/utxos cursors; restarts after SIGKILL (under load, and
// during a block POST); and lookups after a restart with the datadir's pages
// dropped from the page cache, per window until they are back to the warm
// rate. scan measures POST /v1/scan on a datadir without the index.
// dropcache drops a directory's pages from the page cache
// (posix_fadvise DONTNEED) and with --check reports the resident fraction
// (mincore) before and after.
package main

import (
	"context"
	"fmt"
	"io"

	"utxod/internal/cli"
)

const usage = `Usage: scalebench serve|scan|dropcache [flags]

serve:     lookups, paging, restarts and a cold page cache on a loaded datadir
           (with its scripthash index), blocks POSTed meanwhile if --blocks
scan:      POST /v1/scan of the largest whale's script on a datadir without
           the scripthash index: coins scanned per second
dropcache: scalebench dropcache DIR [--check] drops DIR's files from the page
           cache; --check reports the resident fraction before and after
`

func main() { cli.Main(run) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return cli.ExitUsage
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr)
	case "scan":
		return runScan(ctx, args[1:], stdout, stderr)
	case "dropcache":
		return runDropCache(args[1:], stdout, stderr)
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return cli.ExitOK
	}
	fmt.Fprintf(stderr, "scalebench: unknown command %q\n%s", args[0], usage)
	return cli.ExitUsage
}
