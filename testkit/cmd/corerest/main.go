// Command corerest serves block files as Bitcoin Core's REST interface
// (bitcoind -rest: chaininfo, headers, blockhashbyheight, block; Core's byte
// shapes, see testkit/corerest), for following and replica demos and the
// follow benchmark where no bitcoind is at hand:
//
//	corerest --network main --blocks testdata/mainnet/blk_0_to_14131.dat [--reveal N] [--grow 1s] [--listen ADDR]
//	utxod serve --follow http://127.0.0.1:18443
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"utxod/internal/cli"
	"utxod/params"
	"utxod/testkit/corerest"
)

const usage = `Usage: corerest --blocks FILE[,FILE...] [--network main] [--listen 127.0.0.1:18443] [--reveal N] [--grow D] [--delay D]

Serves the blocks of Core block files (blk*.dat framing, parents before
children) as Bitcoin Core's REST interface: /rest/chaininfo.json,
/rest/headers/..., /rest/blockhashbyheight/..., /rest/block/.... The active
chain is the most-work chain among the blocks shown (first seen on ties), so
files with competing branches reorganise as blocks are revealed. It checks
nothing: it is a stand-in for a node, not a node.
`

func main() { cli.Main(run) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	t := cli.New("corerest", usage, stdout, stderr)
	fs := t.Flags
	network := fs.String("network", "main", "network of the blocks: main, testnet3, testnet4, signet, regtest")
	files := fs.String("blocks", "", "comma-separated block files in Core's framing (required)")
	listen := fs.String("listen", "127.0.0.1:18443", "listen address (port 0: any free port; the address is printed)")
	reveal := fs.Int("reveal", 0, "blocks shown at start, genesis included (0: all)")
	grow := fs.Duration("grow", 0, "show one more block at this interval (a live node), after --reveal")
	delay := fs.Duration("delay", 0, "delay every answer (a slow node)")
	if code, done := t.Parse(args); done {
		return code
	}
	if *files == "" || fs.NArg() != 0 {
		return t.UsageError(errors.New("--blocks is required, and no arguments"))
	}
	p, err := params.ByName(*network)
	if err != nil {
		return t.UsageError(err)
	}
	src := corerest.New(p)
	for _, f := range strings.Split(*files, ",") {
		if _, err := src.LoadFile(f, p.Magic); err != nil {
			return t.Fail(err)
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
		return t.Fail(err)
	}
	if *grow > 0 {
		go func() {
			tick := time.NewTicker(*grow)
			defer tick.Stop()
			for shown < src.Loaded() {
				select {
				case <-tick.C:
					shown++
					src.Reveal(shown)
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	_, h := src.Tip()
	t.Log.Info("serving", "network", p.Name, "blocks", src.Loaded(), "tip_height", h)
	fmt.Fprintf(stderr, "corerest: listening on http://%s (%s, %d blocks loaded, tip height %d)\n", ln.Addr(), p.Name, src.Loaded(), h)
	hs := &http.Server{Handler: src, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return t.Fail(err)
	}
	return cli.ExitOK
}
