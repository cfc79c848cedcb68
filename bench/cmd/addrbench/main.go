// Command addrbench prepares and drives the address-lookup load test of
// bench/results/addressindex.md: "lua" writes a wrk script asking
// GET /api/scripthash/{h}/utxo for the output scripts of the first N blocks
// of a block file (some spent since: a mix of hits and empty answers);
// "post" POSTs the blocks after the first N to utxod serve, one every
// interval, and prints each POST's status and latency.
//
//	addrbench lua --blocks FILE --first N --out OUT.lua
//	addrbench post --blocks FILE --first N --url URL --cookie COOKIE [--every 100ms]
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"utxod/internal/cli"
	"utxod/params"
	"utxod/wire"
)

const usage = `Usage: addrbench lua|post --blocks FILE --first N [--network regtest] [--out OUT.lua] [--url URL --cookie FILE --every D]

lua:  writes a wrk script (--out) rotating over the scripthashes of the
      outputs of the first N blocks (GET /api/scripthash/{h}/utxo).
post: POSTs the blocks after the first N to URL/v1/blocks with the token
      in --cookie, one every --every, printing status, latency and answer.
`

func main() { cli.Main(run) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help"):
		fmt.Fprint(stdout, usage)
		return 0
	case len(args) == 0 || (args[0] != "lua" && args[0] != "post"):
		fmt.Fprint(stderr, "addrbench: want lua or post (see addrbench --help)\n")
		return 2
	}
	mode := args[0]
	t := cli.New("addrbench "+mode, usage, stdout, stderr)
	fs := t.Flags
	network := fs.String("network", "regtest", "network of the block file")
	file := fs.String("blocks", "", "block file in Core's framing (required)")
	first := fs.Int("first", 0, "the blocks the server already has (required, > 0)")
	out := fs.String("out", "", "lua: the wrk script to write")
	url := fs.String("url", "", "post: the server's base URL")
	cookie := fs.String("cookie", "", "post: the server's .cookie file (write token)")
	every := fs.Duration("every", 100*time.Millisecond, "post: pause between blocks")
	if code, done := t.Parse(args[1:]); done {
		return code
	}
	if *file == "" || *first <= 0 || fs.NArg() != 0 {
		return t.UsageError(errors.New("--blocks and --first (> 0) are required, and no arguments"))
	}
	p, err := params.ByName(*network)
	if err != nil {
		return t.UsageError(err)
	}
	bs, err := readBlocks(*file, p.Magic)
	if err != nil {
		return t.Fail(err)
	}
	if *first > len(bs) {
		return t.Fail(fmt.Errorf("--first %d: the file has %d blocks", *first, len(bs)))
	}
	switch mode {
	case "lua":
		if *out == "" {
			return t.UsageError(errors.New("lua needs --out"))
		}
		n, err := writeLua(bs[:*first], *out)
		if err != nil {
			return t.Fail(err)
		}
		fmt.Fprintln(stdout, n, "scripthashes")
	default:
		if *url == "" || *cookie == "" {
			return t.UsageError(errors.New("post needs --url and --cookie"))
		}
		token, err := os.ReadFile(*cookie)
		if err != nil {
			return t.Fail(err)
		}
		if err := post(ctx, bs[*first:], *url, strings.TrimSpace(string(token)), *every, stdout); err != nil {
			return t.Fail(err)
		}
	}
	return 0
}

func readBlocks(path string, magic [4]byte) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	bs, err := wire.ReadAllBlocks(f, magic)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return bs, nil
}

// writeLua writes the wrk script over the distinct output scripts of bs.
func writeLua(bs [][]byte, path string) (int, error) {
	seen := map[[32]byte]bool{}
	var hs []string
	for _, raw := range bs {
		b, err := wire.ParseBlock(raw)
		if err != nil {
			return 0, err
		}
		for _, tx := range b.Txs {
			for _, o := range tx.Outputs {
				h := sha256.Sum256(o.Script)
				if !seen[h] {
					seen[h] = true
					hs = append(hs, `"`+hex.EncodeToString(h[:])+`"`)
				}
			}
		}
	}
	lua := "local hs = {" + strings.Join(hs, ",") + "}\nlocal i = 0\nrequest = function()\n  i = i % #hs + 1\n  return wrk.format(\"GET\", \"/api/scripthash/\" .. hs[i] .. \"/utxo\")\nend\n"
	return len(hs), os.WriteFile(path, []byte(lua), 0o644)
}

// post POSTs bs one at a time, printing each answer, until done or ctx ends.
func post(ctx context.Context, bs [][]byte, url, token string, every time.Duration, w io.Writer) error {
	for _, raw := range bs {
		t0 := time.Now()
		req, err := http.NewRequestWithContext(ctx, "POST", url+"/v1/blocks", bytes.NewReader(raw))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/octet-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Fprintf(w, "%d %.1fms %s\n", resp.StatusCode, float64(time.Since(t0).Microseconds())/1000, bytes.TrimSpace(body))
		select {
		case <-time.After(every):
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}
