package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"utxod/chainstate"
	"utxod/wire"
)

// learnHeaders is the import's headers-first pass, as Core syncs headers
// before blocks: it reads the 80-byte header of every record of files
// (seeking past the blocks) and adds them to the block index, so the best
// header and its chain work are known before the first block connects
// (assume-valid's condition rests on both). A header that fails its checks
// is left out; its block is refused with the same reason in the block
// pass, which also reports unreadable records.
func learnHeaders(cs *chainstate.Chainstate, files []string, key []byte, magic [4]byte, log *slog.Logger) error {
	start := time.Now()
	var carry []wire.Header // headers whose parent was in no file so far
	var read, added, known, invalid int
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		hr, err := wire.NewHeaderReader(wire.NewXORReader(f, key), magic)
		if err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		hs := carry
		for {
			h, _, err := hr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				log.Warn("headers-first: stopped reading the file; the block pass reports it", "file", name, "err", err)
				break
			}
			hs = append(hs, h)
			read++
		}
		f.Close()
		res := cs.AcceptHeaders(hs)
		added, known, invalid = added+res.Added, known+res.Known, invalid+res.Invalid
		if res.FirstErr != nil {
			log.Warn("headers-first: header refused", "file", name, "refused", res.Invalid, "first", res.FirstErr)
		}
		carry = res.Unlinked
	}
	best := cs.BestHeader()
	log.Info("headers learned", "read", read, "added", added, "known", known, "invalid", invalid, "unlinked", len(carry),
		"best_header_height", best.Height, "best_header", best.Hash, "best_header_chainwork", fmt.Sprintf("%x", best.ChainWork.Big()),
		"seconds", time.Since(start).Seconds())
	return nil
}
