package main

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"utxod/chainstate"
	"utxod/params"
	"utxod/validate"
	"utxod/wire"
)

func cmdImport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c commonFlags
	c.register(fs)
	asJSON := fs.Bool("json", false, "print the final chainstate (gettxoutsetinfo fields) as JSON on stdout")
	hashType := fs.String("hash-type", "hash_serialized_3", "digests in the JSON: hash_serialized_3 (also muhash), muhash or none")
	stopHeight := fs.Int("stop-height", -1, "stop once the active chain reaches this height")
	xorKey := fs.String("xor-key", "", "hex XOR key of Core 28+ obfuscated block files (blocks/xor.dat)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: utxod import --network N [--datadir D --backend B] [--json] FILE...\n\nReads Core's block-file framing (magic, LE length, block), fully validates and connects the blocks.\n\nFlags:")
		fs.PrintDefaults()
	}
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(files) == 0 {
		fs.Usage()
		return 2
	}
	log, err := c.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "utxod import:", err)
		return 2
	}
	key, err := hex.DecodeString(*xorKey)
	if err != nil {
		fmt.Fprintln(stderr, "utxod import: --xor-key:", err)
		return 2
	}
	p, err := params.ByName(c.network)
	if err != nil {
		fmt.Fprintln(stderr, "utxod import:", err)
		return 2
	}
	cs, closeStore, err := c.openChainstate(log)
	if err != nil {
		fmt.Fprintln(stderr, "utxod import:", err)
		return 2
	}
	defer func() {
		if err := closeStore(); err != nil {
			log.Error("closing the store", "err", err)
		}
	}()
	start := time.Now()
	blocks := 0
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(stderr, "utxod import:", err)
			return 1
		}
		r := wire.NewBlockFileReader(wire.NewXORReader(f, key), p.Magic)
		for {
			if *stopHeight >= 0 && int(cs.Tip().Height) >= *stopHeight {
				break
			}
			raw, off, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				f.Close()
				fmt.Fprintf(stderr, "utxod import: %s: %v\n", name, err)
				return 1
			}
			res, err := cs.ProcessBlock(raw)
			if err != nil {
				f.Close()
				hash := "unknown"
				if len(raw) >= wire.HeaderSize {
					hash = wire.DoubleSHA256(raw[:wire.HeaderSize]).String()
				}
				reason := validate.Reason(err)
				if reason == "" {
					reason = "invalid"
				}
				fmt.Fprintf(stderr, "utxod import: block %s height %d rejected: %s (%v) [%s offset %d]\n", hash, res.Height, reason, err, name, off)
				return 1
			}
			blocks++
		}
		f.Close()
	}
	tip := cs.Tip()
	elapsed := time.Since(start)
	log.Info("import done", "blocks", blocks, "height", tip.Height, "tip", tip.Hash, "seconds", elapsed.Seconds())
	if *stopHeight >= 0 && int(tip.Height) > *stopHeight {
		log.Warn("tip is beyond --stop-height", "height", tip.Height)
	}
	if *asJSON {
		ht := *hashType
		info, err := cs.Info(ht)
		if err != nil {
			fmt.Fprintln(stderr, "utxod import:", err)
			return 2
		}
		if ht == chainstate.HashTypeHashSerialized3 {
			// Both digests: muhash is maintained anyway.
			full, _ := cs.Info(chainstate.HashTypeMuHash)
			info.MuHash = full.MuHash
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(info); err != nil {
			fmt.Fprintln(stderr, "utxod import:", err)
			return 1
		}
	}
	return 0
}
