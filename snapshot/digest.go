package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"utxod/params"
	"utxod/utxo"
	"utxod/wire"
)

// Summary is what a snapshot holds, in gettxoutsetinfo's terms, and how it
// compares with the network's assumeutxo table.
type Summary struct {
	Metadata Metadata
	Network  *params.Params
	// Stats are the coin set's statistics with its MuHash; Height is the
	// base height when known (table, headers or caller), else 0.
	Stats utxo.Stats
	// HashSerialized3 is the set's hash_serialized_3 (Core's content hash).
	HashSerialized3 wire.Hash
	// MaxHeight is the height of the youngest coin.
	MaxHeight uint32
	// HeightKnown reports that Stats.Height is the base block's height.
	HeightKnown bool
	// NonCanonical is the first way the file differs from what
	// dumptxoutset writes ("" if none; see Reader).
	NonCanonical string
	// Table is the assumeutxo entry of the base block, if the network's
	// table has one; Matches reports that HashSerialized3 equals its hash.
	Table   *params.AssumeUTXO
	Matches bool
}

// Info returns the gettxoutsetinfo object of the snapshot's coin set, with
// hash_serialized_3 and muhash (muhash omitted if it was not computed).
func (s *Summary) Info() utxo.ChainstateInfo {
	info := s.Stats.Info()
	h := s.HashSerialized3
	info.HashSerialized3 = &h
	return info
}

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Network is the node's network; nil accepts every network Core knows.
	Network *params.Params
	// Height is the base block's height if the caller knows it (0: take it
	// from the table, else unknown). With a height, coins younger than the
	// base are refused as Core's loader refuses them.
	Height int32
	// NoMuHash skips the MuHash3072 (the slowest digest).
	NoMuHash bool
	// Progress, if set, is called now and then with the coins read and the
	// header's count.
	Progress func(done, total uint64)
}

// Verify reads a whole snapshot strictly and computes its digests,
// building nothing.
func Verify(r io.Reader, opts VerifyOptions) (*Summary, error) {
	rd, err := NewReader(r, opts.Network)
	if err != nil {
		return nil, err
	}
	sum := newSummary(rd, opts.Height)
	if err := ingest(rd, sum, ingestConfig{muhash: !opts.NoMuHash, progress: opts.Progress}); err != nil {
		return nil, err
	}
	return sum, nil
}

// newSummary fills in the metadata, the table entry and the base height,
// and arms the reader's height check when the height is known.
func newSummary(rd *Reader, height int32) *Summary {
	m := rd.Metadata()
	sum := &Summary{Metadata: m, Network: rd.Network()}
	if e, ok := rd.Network().AssumeUTXOForBlockHash(m.BaseHash); ok {
		sum.Table = &e
		if height == 0 {
			height = e.Height
		}
	}
	if height > 0 {
		sum.HeightKnown = true
		rd.SetBaseHeight(height)
	}
	sum.Stats.SetTip(uint32(max(height, 0)), m.BaseHash)
	return sum
}

// ingestConfig configures ingest.
type ingestConfig struct {
	ctx      context.Context // nil: never cancelled
	muhash   bool
	progress func(done, total uint64)
	// sink receives every group (coins sorted by vout, valid during the
	// call).
	sink func(txid wire.Hash, coins []utxo.IndexedCoin) error
}

// muBatch is a run of TxOutSer serializations, for hash_serialized_3 and
// then the MuHash workers.
type muBatch struct {
	buf  []byte
	ends []int
}

const muBatchCoins = 4096

// ingest reads every coin of rd into sum: statistics, and sink in the
// reading goroutine; hash_serialized_3 in a goroutine of its own, which
// takes the reader's serializations in order; MuHash on every core (it is
// a product: order does not matter).
func ingest(rd *Reader, sum *Summary, cfg ingestConfig) error {
	st := &sum.Stats
	st.NoMuHash = true // computed by the workers below
	var hs utxo.HashSerialized3

	workers := max(1, runtime.NumCPU())
	ordered := make(chan *muBatch, 2*workers)
	work := make(chan *muBatch, 2*workers)
	free := make(chan *muBatch, 2*workers+1)
	parts := make([]utxo.MuHash3072, workers)
	werrs := make([]error, workers)
	var wg sync.WaitGroup
	recycle := func(b *muBatch) {
		select {
		case free <- b:
		default:
		}
	}
	if cfg.muhash {
		for w := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for b := range work {
					if err := parts[w].InsertConcat(b.buf, b.ends); err != nil && werrs[w] == nil {
						werrs[w] = err // cannot happen: ends are appended as buf grows
					}
					recycle(b)
				}
			}()
		}
	}
	hdone := make(chan struct{})
	go func() {
		defer close(hdone)
		defer close(work)
		for b := range ordered {
			// The reader orders the groups and their vouts.
			hs.AddSerialized(b.buf, uint64(len(b.ends)))
			if cfg.muhash {
				work <- b
			} else {
				recycle(b)
			}
		}
	}()
	stop := func() {
		close(ordered)
		<-hdone
		wg.Wait()
	}
	batch := &muBatch{}
	send := func() {
		if len(batch.ends) == 0 {
			return
		}
		ordered <- batch
		select {
		case batch = <-free:
			batch.buf, batch.ends = batch.buf[:0], batch.ends[:0]
		default:
			batch = &muBatch{}
		}
	}

	total := rd.Metadata().Coins
	nextReport := uint64(0)
	for {
		txid, coins, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			stop()
			return err
		}
		for i, c := range coins {
			op := utxo.Outpoint{Hash: txid, Index: c.Index}
			if err := st.AddCoin(op, c.Coin, i == 0); err != nil {
				stop()
				return coreErrorf(ErrBadValue, "Bad snapshot data after deserializing %d coins - bad tx out value", rd.Done())
			}
			sum.MaxHeight = max(sum.MaxHeight, c.Coin.Height)
			batch.buf = utxo.AppendTxOutSer(batch.buf, op, c.Coin)
			batch.ends = append(batch.ends, len(batch.buf))
		}
		if len(batch.ends) >= muBatchCoins {
			send()
		}
		if cfg.sink != nil {
			if err := cfg.sink(txid, coins); err != nil {
				stop()
				return err
			}
		}
		if rd.Done() >= nextReport {
			if cfg.ctx != nil && cfg.ctx.Err() != nil {
				stop()
				return fmt.Errorf("snapshot: stopped after %d coins: %w", rd.Done(), context.Cause(cfg.ctx))
			}
			if cfg.progress != nil {
				cfg.progress(rd.Done(), total)
			}
			nextReport = rd.Done() + 1<<16
		}
	}
	send()
	stop()
	if err := errors.Join(werrs...); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if cfg.progress != nil {
		cfg.progress(rd.Done(), total)
	}
	for w := range parts {
		st.MuHash.Combine(&parts[w])
	}
	st.NoMuHash = !cfg.muhash
	sum.HashSerialized3 = hs.Sum()
	sum.NonCanonical = rd.NonCanonical()
	if sum.Table != nil {
		sum.Matches = sum.HashSerialized3 == sum.Table.HashSerialized
	}
	return nil
}
