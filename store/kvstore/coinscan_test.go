package kvstore

import (
	"bytes"
	"errors"
	"testing"

	"utxod/chainstate"
	"utxod/store"
	"utxod/utxo"
	"utxod/wire"
)

// ScanCoins walks the whole coin set of the tip, in hash_serialized_3
// order, on the memory store and every KV store.
func TestScanCoins(t *testing.T) {
	blocks := mainnetBlocks(t)
	const height = 300
	// Mainnet block 1's coinbase (its only transaction), 50 BTC at height 1.
	block1, _ := wire.ParseHash("0e3e2357e806b6cdb1f70b54c3a3a17b6714ee1f0e68bebb44a74b1efd512098")
	stores := map[string]func(t *testing.T) *chainstate.Chainstate{
		"memory": func(t *testing.T) *chainstate.Chainstate { return newMainnet(t, store.NewMem()) },
	}
	for _, name := range storeNames {
		stores[name] = func(t *testing.T) *chainstate.Chainstate { return newMainnetKV(t, openKV(t, name, t.TempDir()), 1<<20) }
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			cs := open(t)
			for h := 1; h <= height; h++ {
				if _, err := cs.ProcessBlock(blocks[h]); err != nil {
					t.Fatalf("block %d: %v", h, err)
				}
			}
			var n uint64
			var sum int64
			var prev utxo.Outpoint
			found := false
			st, err := cs.ScanCoins(func(e utxo.Entry) error {
				if n > 0 {
					if c := bytes.Compare(prev.Hash[:], e.Hash[:]); c > 0 || c == 0 && prev.Index >= e.Index {
						return errors.New("out of order")
					}
				}
				prev = e.Outpoint
				n++
				sum += e.Value
				if e.Hash == block1 && e.Index == 0 {
					found = e.Value == 50e8 && e.Height == 1 && e.Coinbase
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if st.Height != height || st.BestBlock != cs.Tip().Hash || n != st.TxOuts || sum != st.TotalAmount {
				t.Errorf("stats height %d txouts %d total %d; scanned %d coins, %d sat", st.Height, st.TxOuts, st.TotalAmount, n, sum)
			}
			if !found {
				t.Error("block 1's coinbase output missing or wrong")
			}
			stop := errors.New("stop")
			st, err = cs.ScanCoins(func(utxo.Entry) error { return stop })
			if !errors.Is(err, stop) || st.Height != height {
				t.Errorf("stopped scan: %v, height %d", err, st.Height)
			}
		})
	}
}
