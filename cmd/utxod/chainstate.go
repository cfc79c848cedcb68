package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// cmdChainstate prints the gettxoutsetinfo object of a datadir.
func cmdChainstate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chainstate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c commonFlags
	c.register(fs)
	hashType := fs.String("hash-type", "muhash", "digest to include: hash_serialized_3 (scans the coin set; muhash is included too), muhash or none")
	asJSON := fs.Bool("json", false, "print JSON (the object GET /v1/chainstate returns)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: utxod chainstate --network N --datadir D --backend B [--hash-type hash_serialized_3|muhash|none] [--json]\n\nPrints the chainstate statistics and digests, with Bitcoin Core's gettxoutsetinfo field names.\n\nFlags:")
		fs.PrintDefaults()
	}
	if pos, code, done := parseArgs(fs, args, false, stdout, stderr); done {
		return code
	} else if len(pos) != 0 {
		fmt.Fprintf(stderr, "utxod chainstate: unexpected argument %q (see utxod chainstate --help)\n", pos[0])
		return 2
	}
	if c.datadir == "" {
		fmt.Fprintln(stderr, "utxod chainstate: --datadir is required")
		return 2
	}
	if err := c.check(); err != nil {
		fmt.Fprintln(stderr, "utxod chainstate:", err)
		return 2
	}
	if err := checkHashType(*hashType); err != nil {
		fmt.Fprintln(stderr, "utxod chainstate:", err)
		return 2
	}
	log, err := c.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "utxod chainstate:", err)
		return 2
	}
	n, err := c.openNode(context.Background(), log)
	if err != nil {
		fmt.Fprintln(stderr, "utxod chainstate:", err)
		return 1
	}
	defer n.Close()
	info, err := n.Chain().Info(*hashType)
	if err != nil {
		fmt.Fprintln(stderr, "utxod chainstate:", err)
		return 2
	}
	if *asJSON {
		return printJSON(info, "chainstate", stdout, stderr)
	}
	fmt.Fprintf(stdout, "height             %d\nbestblock          %s\ntxouts             %d\ntransactions       %d\nbogosize           %d\ntotal_amount       %s BTC (%d sat)\n",
		info.Height, info.BestBlock, info.TxOuts, info.Transactions, info.BogoSize, info.TotalAmount, info.TotalAmountSat)
	if info.MuHash != nil {
		fmt.Fprintf(stdout, "muhash             %s\n", info.MuHash)
	}
	if info.HashSerialized3 != nil {
		fmt.Fprintf(stdout, "hash_serialized_3  %s\n", info.HashSerialized3)
	}
	return 0
}
