// Command utxod validates Bitcoin blocks and keeps the UTXO set they produce.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "utxod: not yet wired")
	os.Exit(2)
}
