// Command corerest serves block files as Bitcoin Core's REST interface
// (bitcoind -rest), for following and replica demos where no bitcoind is
// at hand: utxod serve --follow http://127.0.0.1:18443.
//
//	corerest --network main --blocks testdata/mainnet/blk_0_to_14131.dat [--reveal N] [--grow 1s] [--listen ADDR]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"utxod/internal/corerest"
	"utxod/params"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("corerest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	network := fs.String("network", "main", "network of the blocks: main, testnet3, testnet4, signet, regtest")
	files := fs.String("blocks", "", "comma-separated block files in Core's framing (blk*.dat), parents before children")
	listen := fs.String("listen", "127.0.0.1:18443", "listen address")
	reveal := fs.Int("reveal", 0, "blocks shown at start, genesis included (0: all)")
	grow := fs.Duration("grow", 0, "show one more block at this interval (a live node), starting from --reveal")
	delay := fs.Duration("delay", 0, "delay every answer (a slow node)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	p, err := params.ByName(*network)
	if err != nil || *files == "" {
		fmt.Fprintln(stderr, "corerest: --network and --blocks are required:", err)
		return 2
	}
	src := corerest.New(p)
	for _, f := range strings.Split(*files, ",") {
		if _, err := src.LoadFile(f, p.Magic); err != nil {
			fmt.Fprintln(stderr, "corerest:", err)
			return 1
		}
	}
	shown := *reveal
	if shown <= 0 {
		shown = src.Loaded()
	}
	src.Reveal(shown)
	src.SetDelay(*delay)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(stderr, "corerest:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *grow > 0 {
		go func() {
			t := time.NewTicker(*grow)
			defer t.Stop()
			for shown < src.Loaded() {
				select {
				case <-t.C:
					shown++
					src.Reveal(shown)
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	_, h := src.Tip()
	fmt.Fprintf(stderr, "corerest: listening on http://%s (%s, %d blocks loaded, tip height %d)\n", ln.Addr(), p.Name, src.Loaded(), h)
	hs := &http.Server{Handler: src, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "corerest:", err)
		return 1
	}
	return 0
}
