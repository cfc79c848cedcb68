// Command utxod fully validates Bitcoin blocks and keeps the UTXO set they
// produce. See README.md for the subcommands.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `utxod — a Bitcoin block validator and UTXO-set service

Usage:
  utxod <command> [flags]

Commands:
  import       validate and connect blocks from Core block files (blk*.dat framing)
  chainstate   print a datadir's chainstate (gettxoutsetinfo fields and digests)
  serve        serve the HTTP API (submit blocks, chainstate, UTXOs, Core REST); --follow URL keeps it in step with a node
  follow       catch up with a Bitcoin Core node (or another utxod) over its REST interface, then exit
  snapshot     Bitcoin Core UTXO snapshots (dumptxoutset format): dump, verify, load
  index        build, drop or verify a datadir's scripthash index (utxod index build|drop|verify)
  help         show this help

Run 'utxod <command> --help' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// commands is the dispatch table; tests walk it, so every command gets the
// same --help and bad-flag checks.
var commands = map[string]func(args []string, stdout, stderr io.Writer) int{
	"import":     cmdImport,
	"chainstate": cmdChainstate,
	"serve":      cmdServe,
	"follow":     cmdFollow,
	"snapshot":   cmdSnapshot,
	"index":      cmdIndex,
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if cmd, ok := commands[args[0]]; ok {
		return cmd(args[1:], stdout, stderr)
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "utxod: unknown command %q (see utxod --help)\n", args[0])
	return 2
}
