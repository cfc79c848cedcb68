package chainstate

import (
	"bytes"
	"runtime"
	"sync"

	"utxod/utxo"
)

// lazyMuHash defers MuHash3072 work. Every coin added to or removed from the
// set is recorded by outpoint with its serialization (utxo.AppendTxOutSer);
// a coin added and later removed (or removed and re-added by a reorg) before
// the next materialisation cancels without being hashed. materialize folds
// the survivors into the running MuHash, hashing and multiplying on all cores.
// The chainstate materialises before every read of the digest and before
// every flush, so Info and the persisted state are always exact.
//
// On an early-chain import most coins are created and spent between two
// flushes, so most MuHash work disappears (docs/benchmarks/digests.md).
type lazyMuHash struct {
	ins, rem map[utxo.Outpoint][]byte
	// extra holds insertions and removals that could not be keyed because
	// the outpoint was already pending with other bytes (BIP30 overwrites).
	extraIns, extraRem [][]byte

	// Serializations are built in scratch and only copied into the
	// current chunk when they are kept (a removal usually cancels an
	// insertion and keeps nothing); chunks are dropped at materialize.
	scratch []byte
	chunk   []byte
}

// lazyChunk is the size of the blocks kept serializations are packed into.
const lazyChunk = 64 << 10

// materializeAt bounds the pending entries (memory) between flushes.
const materializeAt = 1 << 20

func newLazyMuHash() *lazyMuHash {
	return &lazyMuHash{ins: make(map[utxo.Outpoint][]byte), rem: make(map[utxo.Outpoint][]byte)}
}

func (l *lazyMuHash) pending() int {
	return len(l.ins) + len(l.rem) + len(l.extraIns) + len(l.extraRem)
}

// keep copies ser into the current chunk and returns the copy.
func (l *lazyMuHash) keep(ser []byte) []byte {
	if cap(l.chunk)-len(l.chunk) < len(ser) {
		l.chunk = make([]byte, 0, max(lazyChunk, len(ser)))
	}
	n := len(l.chunk)
	l.chunk = append(l.chunk, ser...)
	return l.chunk[n:len(l.chunk):len(l.chunk)]
}

// insert records that c entered the set at op.
func (l *lazyMuHash) insert(op utxo.Outpoint, c utxo.Coin) {
	l.record(op, c, l.ins, l.rem, &l.extraIns)
}

// remove records that c left the set at op.
func (l *lazyMuHash) remove(op utxo.Outpoint, c utxo.Coin) {
	l.record(op, c, l.rem, l.ins, &l.extraRem)
}

// record adds c's serialization at op to pending (or to extra when op is
// already pending there), unless it cancels an identical entry pending in
// opposite.
func (l *lazyMuHash) record(op utxo.Outpoint, c utxo.Coin, pending, opposite map[utxo.Outpoint][]byte, extra *[][]byte) {
	l.scratch = utxo.AppendTxOutSer(l.scratch[:0], op, c)
	ser := l.scratch
	if r, ok := opposite[op]; ok && bytes.Equal(r, ser) {
		delete(opposite, op)
		return
	}
	if _, dup := pending[op]; dup {
		*extra = append(*extra, l.keep(ser))
		return
	}
	pending[op] = l.keep(ser)
}

// materialize folds every pending change into m and empties the record.
func (l *lazyMuHash) materialize(m *utxo.MuHash3072) {
	if l.pending() == 0 {
		return
	}
	ins := append(make([][]byte, 0, len(l.ins)+len(l.extraIns)), l.extraIns...)
	for _, s := range l.ins {
		ins = append(ins, s)
	}
	rem := append(make([][]byte, 0, len(l.rem)+len(l.extraRem)), l.extraRem...)
	for _, s := range l.rem {
		rem = append(rem, s)
	}
	workers := min(runtime.NumCPU(), max(1, (len(ins)+len(rem))/256))
	parts := make([]utxo.MuHash3072, workers)
	var wg sync.WaitGroup
	for w := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &parts[w]
			for i := w; i < len(ins); i += workers {
				p.Insert(ins[i])
			}
			for i := w; i < len(rem); i += workers {
				p.Remove(rem[i])
			}
		}()
	}
	wg.Wait()
	for w := range parts {
		m.Combine(&parts[w])
	}
	clear(l.ins)
	clear(l.rem)
	l.extraIns, l.extraRem = nil, nil
	l.chunk = nil // earlier chunks are garbage once the maps are clear
}
