package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"time"

	"utxod/wire"
)

// blockFile is a Core blk-framed file of blocks in chain order, one of
// which extends the datadir's tip (blocks before it, the datadir has): block
// i is at height base+1+i.
type blockFile struct {
	f     *os.File
	offs  []int64 // of each block's bytes
	lens  []int
	prevs []string // each block's parent, display hex
	base  int32
}

func openBlocks(path string, magic [4]byte) (*blockFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	b := &blockFile{f: f}
	r := wire.NewBlockFileReader(bufio.NewReaderSize(f, 1<<20), magic)
	for {
		raw, off, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(raw) < 80 {
			f.Close()
			return nil, fmt.Errorf("%s: a block of %d bytes", path, len(raw))
		}
		b.offs = append(b.offs, off+8) // past magic and length
		b.lens = append(b.lens, len(raw))
		b.prevs = append(b.prevs, wire.Hash(raw[4:36]).String())
	}
	if len(b.offs) == 0 {
		f.Close()
		return nil, fmt.Errorf("%s: no blocks", path)
	}
	return b, nil
}

// anchor finds the block whose parent is the tip (hash, display hex, at
// height) and numbers the blocks from it.
func (b *blockFile) anchor(tip string, height int32) error {
	i := slices.Index(b.prevs, tip)
	if i < 0 {
		return fmt.Errorf("no block of the blocks file extends the datadir's tip %s at height %d", tip, height)
	}
	b.base = height - int32(i)
	return nil
}

func (b *blockFile) block(i int) ([]byte, error) {
	raw := make([]byte, b.lens[i])
	_, err := b.f.ReadAt(raw, b.offs[i])
	return raw, err
}

// postStats are the POSTs of one phase.
type postStats struct {
	lat     []time.Duration
	failed  int
	lastErr error
	from    int32 // the height the phase started posting at
}

func (p postStats) summary() string {
	if len(p.lat) == 0 {
		if p.lastErr != nil {
			return fmt.Sprintf("no block accepted (%v)", p.lastErr)
		}
		return "no block POSTed"
	}
	l := slices.Sorted(slices.Values(p.lat))
	return fmt.Sprintf("%d blocks from height %d, POST p50 %s, max %s", len(l), p.from, ms(l[len(l)/2]), ms(l[len(l)-1]))
}

var postClient = &http.Client{Timeout: 5 * time.Minute}

// post POSTs the blocks after the server's tip height, one every `every`
// (back to back if 0), until ctx ends or the file does. inFlight, if not
// nil, is closed when the first POST is sent.
func (b *blockFile) post(ctx context.Context, s *server, tip int32, every time.Duration, inFlight chan<- struct{}) postStats {
	st := postStats{from: tip + 1}
	for i := int(tip - b.base); i >= 0 && i < len(b.offs) && ctx.Err() == nil; i++ {
		raw, err := b.block(i)
		if err != nil {
			st.lastErr = err
			return st
		}
		req, _ := http.NewRequestWithContext(ctx, "POST", s.base()+"/v1/blocks", bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+s.token)
		req.Header.Set("Content-Type", "application/octet-stream")
		if inFlight != nil {
			close(inFlight)
			inFlight = nil
		}
		t0 := time.Now()
		resp, err := postClient.Do(req)
		if err != nil {
			st.failed++
			st.lastErr = err
			return st
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode != 200 {
			st.failed++
			st.lastErr = fmt.Errorf("POST block at height %d: %d %s", b.base+1+int32(i), resp.StatusCode, body)
			return st
		}
		st.lat = append(st.lat, time.Since(t0))
		if every > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(every):
			}
		}
	}
	return st
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
