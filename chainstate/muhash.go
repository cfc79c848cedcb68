package chainstate

import (
	"bytes"
	"encoding/binary"
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
	// ins and rem map an outpoint's 64-bit key (outpointKey) to where its
	// serialization is kept (lazyLoc). Keys may collide: the kept bytes
	// begin with the full outpoint, so a cancellation compares them, and
	// an entry whose key is taken goes to extra. Neither map holds a
	// pointer, so the garbage collector never scans them.
	ins, rem map[uint64]lazyLoc
	// extra holds insertions and removals that could not be keyed because
	// the key was already pending (BIP30 overwrites, key collisions).
	extraIns, extraRem [][]byte

	// Serializations are built in scratch and only copied into the
	// current chunk when they are kept (a removal usually cancels an
	// insertion and keeps nothing); chunks are dropped at materialize.
	scratch []byte
	chunks  [][]byte
}

// lazyLoc is a kept serialization: chunk index (bits 32–63), offset in the
// chunk (bits 16–31), length (bits 0–15). Kept serializations are at most
// 57 + MAX_SCRIPT_SIZE bytes (longer scripts are unspendable and never
// enter the set), under the 64 KiB chunk.
type lazyLoc uint64

// lazyChunk is the size of the blocks kept serializations are packed into.
const lazyChunk = 64 << 10

// materializeAt bounds the pending entries (memory) between flushes.
const materializeAt = 1 << 20

func newLazyMuHash() *lazyMuHash {
	return &lazyMuHash{ins: make(map[uint64]lazyLoc), rem: make(map[uint64]lazyLoc)}
}

func (l *lazyMuHash) pending() int {
	return len(l.ins) + len(l.rem) + len(l.extraIns) + len(l.extraRem)
}

// outpointKey is the map key of op: txids are hashes, so their first eight
// bytes spread well (a collision only costs a cancellation).
func outpointKey(op utxo.Outpoint) uint64 {
	return binary.LittleEndian.Uint64(op.Hash[:8]) ^ uint64(op.Index)*0x9e3779b97f4a7c15
}

// keep copies ser into the current chunk and returns its location.
func (l *lazyMuHash) keep(ser []byte) lazyLoc {
	n := len(l.chunks) - 1
	if n < 0 || cap(l.chunks[n])-len(l.chunks[n]) < len(ser) {
		l.chunks = append(l.chunks, make([]byte, 0, max(lazyChunk, len(ser))))
		n++
	}
	c := l.chunks[n]
	off := len(c)
	l.chunks[n] = append(c, ser...)
	return lazyLoc(uint64(n)<<32 | uint64(off)<<16 | uint64(len(ser)))
}

// get returns the serialization kept at loc.
func (l *lazyMuHash) get(loc lazyLoc) []byte {
	c := l.chunks[loc>>32]
	off := int(loc>>16) & 0xffff
	return c[off : off+int(loc&0xffff)]
}

// keepExtra copies ser for an extra list (its own slice: extras are rare).
func keepExtra(ser []byte) []byte { return append([]byte(nil), ser...) }

// insert records that c entered the set at op.
func (l *lazyMuHash) insert(op utxo.Outpoint, c utxo.Coin) {
	l.record(op, c, l.ins, l.rem, &l.extraIns)
}

// remove records that c left the set at op.
func (l *lazyMuHash) remove(op utxo.Outpoint, c utxo.Coin) {
	l.record(op, c, l.rem, l.ins, &l.extraRem)
}

// record adds c's serialization at op to pending (or to extra when op's key
// is already pending there), unless it cancels an identical entry pending
// in opposite.
func (l *lazyMuHash) record(op utxo.Outpoint, c utxo.Coin, pending, opposite map[uint64]lazyLoc, extra *[][]byte) {
	l.scratch = utxo.AppendTxOutSer(l.scratch[:0], op, c)
	ser := l.scratch
	k := outpointKey(op)
	if r, ok := opposite[k]; ok && bytes.Equal(l.get(r), ser) {
		delete(opposite, k)
		return
	}
	if len(ser) > 0xffff {
		*extra = append(*extra, keepExtra(ser))
		return
	}
	if _, dup := pending[k]; dup {
		*extra = append(*extra, keepExtra(ser))
		return
	}
	pending[k] = l.keep(ser)
}

// materialize folds every pending change into m and empties the record.
func (l *lazyMuHash) materialize(m *utxo.MuHash3072) {
	if l.pending() == 0 {
		return
	}
	ins := append(make([][]byte, 0, len(l.ins)+len(l.extraIns)), l.extraIns...)
	for _, loc := range l.ins {
		ins = append(ins, l.get(loc))
	}
	rem := append(make([][]byte, 0, len(l.rem)+len(l.extraRem)), l.extraRem...)
	for _, loc := range l.rem {
		rem = append(rem, l.get(loc))
	}
	workers := min(runtime.NumCPU(), max(1, (len(ins)+len(rem))/256))
	parts := make([]utxo.MuHash3072, workers)
	var wg sync.WaitGroup
	for w := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A contiguous share each, so the batch calls map several
			// elements per keystream kernel call.
			p := &parts[w]
			p.InsertMany(ins[w*len(ins)/workers : (w+1)*len(ins)/workers])
			p.RemoveMany(rem[w*len(rem)/workers : (w+1)*len(rem)/workers])
		}()
	}
	wg.Wait()
	for w := range parts {
		m.Combine(&parts[w])
	}
	clear(l.ins)
	clear(l.rem)
	l.extraIns, l.extraRem = nil, nil
	l.chunks = nil // garbage once the maps are clear
}
