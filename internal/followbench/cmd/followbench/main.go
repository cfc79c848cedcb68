// Command followbench measures "utxod follow" against "utxod import" on
// the same block file (internal/followbench; make bench-follow).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"utxod/internal/followbench"
)

func main() {
	var cfg followbench.Config
	flag.StringVar(&cfg.Utxod, "utxod", "bin/utxod", "utxod binary")
	flag.StringVar(&cfg.Corerest, "corerest", "bin/corerest", "corerest binary (internal/corerest/cmd/corerest)")
	flag.StringVar(&cfg.Corpus, "corpus", "", "block file (Core framing)")
	flag.StringVar(&cfg.Network, "network", "regtest", "network of the corpus")
	flag.StringVar(&cfg.Backend, "backend", "pebble", "store")
	flag.IntVar(&cfg.Rounds, "rounds", 5, "paired rounds (ABBA)")
	flag.StringVar(&cfg.Work, "work", os.TempDir(), "scratch directory for the datadirs")
	utxodArgs := flag.String("utxod-args", "", "extra flags for both arms (space separated)")
	followArgs := flag.String("follow-args", "", "extra flags for the follow arm (space separated)")
	out := flag.String("json", "", "write the result as JSON here")
	flag.Parse()
	if cfg.Corpus == "" {
		fmt.Fprintln(os.Stderr, "followbench: --corpus is required")
		os.Exit(2)
	}
	cfg.UtxodArgs, cfg.FollowArgs = strings.Fields(*utxodArgs), strings.Fields(*followArgs)
	cfg.Log = os.Stderr
	res, err := followbench.Measure(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "followbench:", err)
		os.Exit(1)
	}
	fmt.Print(res.Markdown())
	if *out != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "followbench:", err)
			os.Exit(1)
		}
	}
}
