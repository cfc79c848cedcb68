package mainnetgen

import (
	"crypto/sha256"
	"hash"
	"sync"
)

// Digests are the gettxoutsetinfo statistics of a UTXO set, computed as
// Bitcoin Core's ComputeUTXOStats (src/kernel/coinstats.cpp) defines them.
// Hashes are display-order hex.
type Digests struct {
	TxOuts          uint64 `json:"txouts"`
	Transactions    uint64 `json:"transactions"`
	BogoSize        uint64 `json:"bogosize"`
	TotalAmount     uint64 `json:"total_amount"` // satoshis
	HashSerialized3 string `json:"hash_serialized_3"`
	MuHash          string `json:"muhash"`
}

// muBatch is a run of TxOutSer serializations for a MuHash worker.
type muBatch struct {
	buf  []byte
	ends []int
}

const muBatchCoins = 2048

// digests accumulates Digests over coins given in Core's hashing order
// (txids ascending by raw bytes, vouts ascending within a txid). MuHash, the
// costly part, runs on worker goroutines, each multiplying its own partial
// product; the products are combined at the end (the set's product does
// not depend on the order).
type digests struct {
	tally
	hs3   hash.Hash
	ser   []byte
	batch *muBatch
	work  chan *muBatch
	free  chan *muBatch
	parts []*MuHash
	wg    sync.WaitGroup
}

// newDigests starts workers MuHash goroutines (at least one).
func newDigests(workers int) *digests {
	workers = max(workers, 1)
	d := &digests{hs3: sha256.New(), work: make(chan *muBatch, 2*workers), free: make(chan *muBatch, 3*workers+1)}
	for range cap(d.free) {
		d.free <- &muBatch{buf: make([]byte, 0, muBatchCoins*96), ends: make([]int, 0, muBatchCoins)}
	}
	for range workers {
		m := NewMuHash()
		d.parts = append(d.parts, m)
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			for b := range d.work {
				start := 0
				for _, end := range b.ends {
					m.Insert(b.buf[start:end])
					start = end
				}
				b.buf, b.ends = b.buf[:0], b.ends[:0]
				d.free <- b
			}
		}()
	}
	d.batch = <-d.free
	return d
}

// add accounts one coin of the current txid.
func (d *digests) add(txid *[32]byte, vout, code uint32, value uint64, script []byte) {
	d.ser = appendTxOutSer(d.ser[:0], txid, vout, code, value, script)
	d.hs3.Write(d.ser)
	d.batch.buf = append(d.batch.buf, d.ser...)
	d.batch.ends = append(d.batch.ends, len(d.batch.buf))
	if len(d.batch.ends) == muBatchCoins {
		d.work <- d.batch
		d.batch = <-d.free
	}
	d.count(value, script)
}

// tally counts the set's statistics (all of Digests but the hashes) from
// coins given in txid order.
type tally struct {
	d    Digests
	inTx bool
}

// count accounts one coin of the current txid.
func (t *tally) count(value uint64, script []byte) {
	t.d.TxOuts++
	t.d.BogoSize += bogoSize(script)
	t.d.TotalAmount += value
	t.inTx = true
}

// endTx closes the current txid (Core's nTransactions counts txids with at
// least one coin).
func (t *tally) endTx() {
	if t.inTx {
		t.d.Transactions++
		t.inTx = false
	}
}

// finish stops the workers and returns the digests and the set's MuHash
// (not finalized, for the blocks to update).
func (d *digests) finish() (Digests, *MuHash) {
	d.endTx()
	if len(d.batch.ends) > 0 {
		d.work <- d.batch
	}
	close(d.work)
	d.wg.Wait()
	m := d.parts[0]
	for _, o := range d.parts[1:] {
		m.Combine(o)
	}
	d.d.MuHash = displayHex(m.Finalize())
	first := d.hs3.Sum(nil)
	d.d.HashSerialized3 = displayHex(sha256.Sum256(first))
	return d.d, m
}
