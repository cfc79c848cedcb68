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
  gate         performance gate: control vs candidate arms, ABBA, per store; custody JSON + report
  serve        serve the HTTP API (submit blocks, chainstate, UTXOs, Core REST)
  help         show this help

Run 'utxod <command> --help' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "import":
		return cmdImport(args[1:], stdout, stderr)
	case "chainstate":
		return cmdChainstate(args[1:], stdout, stderr)
	case "serve":
		return cmdServe(args[1:], stdout, stderr)
	case "gate":
		return cmdGate(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "utxod: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}
