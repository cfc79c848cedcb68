package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"utxod/params"
	"utxod/utxo"
	"utxod/wire"
)

// TestDumpParallelEveryStore: the parallel dump of every store, on any
// number of workers, writes the bytes of the memory store's ordered walk
// (which has no records, so it is the independent arm: coins re-encoded
// one by one from decoded entries).
func TestDumpParallelEveryStore(t *testing.T) {
	p := params.RegTest()
	blocks, _ := variedChain(t)
	mem := openChain(t, p, "", "")
	connectAll(t, mem.cs, blocks)
	want := dump(t, mem.cs, p)
	for _, name := range storeNames {
		t.Run(name, func(t *testing.T) {
			skipUnavailable(t, name)
			c := openChain(t, p, name, t.TempDir())
			connectAll(t, c.cs, blocks)
			snap, err := c.cs.SnapshotCoins()
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			if _, ok := snap.Scanner.(RangeRecordSource); !ok {
				t.Fatalf("%s's scanner is not a RangeRecordSource", name)
			}
			m := Metadata{MessageStart: p.Magic, BaseHash: snap.Stats.BestBlock, Coins: snap.Stats.TxOuts}
			for _, workers := range []int{1, 2, 3, 8} {
				var buf bytes.Buffer
				n, err := dumpWorkers(&buf, m, snap.Scanner, workers)
				if err != nil {
					t.Fatalf("%d workers: %v", workers, err)
				}
				if n != m.Coins || !bytes.Equal(buf.Bytes(), want) {
					t.Fatalf("%d workers: %d coins, %d bytes; want %d coins, %d bytes, equal", workers, n, buf.Len(), m.Coins, len(want))
				}
			}
		})
	}
}

// rangeRecords is a RangeRecordSource over records sorted by txid, with an
// error to return from the range holding failAt (if set).
type rangeRecords struct {
	txids  []wire.Hash
	recs   [][]byte
	failAt *wire.Hash
}

var errRange = errors.New("range failed")

func (s *rangeRecords) Scan(func(utxo.Entry) error) error {
	return errors.New("rangeRecords: Scan not used")
}

func (s *rangeRecords) ScanRecords(fn func(wire.Hash, []byte) error) error {
	return s.ScanRecordsRange(0, 1<<16, fn)
}

func (s *rangeRecords) ScanRecordsRange(lo, hi int, fn func(wire.Hash, []byte) error) error {
	for i, txid := range s.txids {
		if k := int(txid[0])<<8 | int(txid[1]); k < lo || k >= hi {
			continue
		}
		if s.failAt != nil && *s.failAt == txid {
			return errRange
		}
		if err := fn(txid, s.recs[i]); err != nil {
			return err
		}
	}
	return nil
}

// TestDumpParallelErrors: a range's error, a bad record and a header count
// the records do not have stop the parallel dump with that error.
func TestDumpParallelErrors(t *testing.T) {
	src := &rangeRecords{}
	for i := range 300 {
		var txid wire.Hash
		// Ascending txids spread over the whole first-two-byte space (the
		// source walks its slice in order).
		txid[0], txid[1] = byte(i*255/300), byte(i)
		rec, err := utxo.EncodeRecord(nil, []utxo.IndexedCoin{{Index: uint32(i % 3), Coin: utxo.Coin{Height: 5, Value: int64(i + 1), Script: []byte{0x51}}}})
		if err != nil {
			t.Fatal(err)
		}
		src.txids, src.recs = append(src.txids, txid), append(src.recs, rec.Bytes())
	}
	for i := 1; i < len(src.txids); i++ {
		if bytes.Compare(src.txids[i-1][:], src.txids[i][:]) >= 0 {
			t.Fatalf("test txids not ascending at %d", i)
		}
	}
	m := Metadata{MessageStart: params.RegTest().Magic, Coins: 300}
	var one bytes.Buffer
	if _, err := dumpWorkers(&one, m, src, 1); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{2, 5} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			var buf bytes.Buffer
			if _, err := dumpWorkers(&buf, m, src, workers); err != nil || !bytes.Equal(buf.Bytes(), one.Bytes()) {
				t.Fatalf("err %v, equal %v", err, bytes.Equal(buf.Bytes(), one.Bytes()))
			}
			fail := *src
			fail.failAt = &src.txids[150]
			if _, err := dumpWorkers(&bytes.Buffer{}, m, &fail, workers); !errors.Is(err, errRange) {
				t.Fatalf("failing range: %v", err)
			}
			bad := *src
			bad.recs = append([][]byte(nil), src.recs...)
			bad.recs[200] = []byte{0xff}
			if _, err := dumpWorkers(&bytes.Buffer{}, m, &bad, workers); err == nil {
				t.Fatal("a bad record was dumped")
			}
			short := m
			short.Coins = 301
			if _, err := dumpWorkers(&bytes.Buffer{}, short, src, workers); !errors.Is(err, ErrCountMismatch) {
				t.Fatalf("count: %v", err)
			}
		})
	}
}
