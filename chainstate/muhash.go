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

	// q hands blocks' changes to a goroutine that records them (enqueue)
	// while the chainstate goes on with the next block; everything above
	// is the recording goroutine's until wait returns.
	q muQueue
}

// muQueue is the lazy record's queue of changes, recorded in order by one
// goroutine at a time, started when changes arrive and ending when the
// queue is empty (no goroutine outlives the work, so nothing to stop).
type muQueue struct {
	mu      sync.Mutex
	idle    sync.Cond // signalled when running becomes false
	jobs    []muJob
	queued  int // entries in jobs
	running bool
	// since is an upper bound of the entries recorded or queued since the
	// last wait (pending may stay below it: removals cancel).
	since int
}

// muJob is one block's changes: the coins that left the set and those
// that entered it, in that order. The entries (and the scripts they alias)
// must stay unmodified until they are recorded.
type muJob struct{ removed, added [][]utxo.Entry }

// maxQueued bounds the entries waiting in the queue; enqueue blocks beyond
// it (memory: the queued deltas keep their blocks alive).
const maxQueued = 1 << 18

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
	l := &lazyMuHash{ins: make(map[uint64]lazyLoc), rem: make(map[uint64]lazyLoc)}
	l.q.idle.L = &l.q.mu
	return l
}

// pending is the number of entries recorded and not yet materialised; it
// waits for the queue.
func (l *lazyMuHash) pending() int {
	l.wait()
	return len(l.ins) + len(l.rem) + len(l.extraIns) + len(l.extraRem)
}

// mayExceed reports, without waiting, whether pending could be above n.
func (l *lazyMuHash) mayExceed(n int) bool {
	l.q.mu.Lock()
	defer l.q.mu.Unlock()
	return l.q.since > n
}

// enqueue has one block's changes recorded on another goroutine, in the
// order of the calls: removed first, then added.
func (l *lazyMuHash) enqueue(removed, added [][]utxo.Entry) {
	n := 0
	for _, list := range removed {
		n += len(list)
	}
	for _, list := range added {
		n += len(list)
	}
	if n == 0 {
		return
	}
	q := &l.q
	q.mu.Lock()
	for q.queued > maxQueued {
		q.idle.Wait() // the recorder signals each job it takes
	}
	q.jobs = append(q.jobs, muJob{removed, added})
	q.queued += n
	q.since += n
	if !q.running {
		q.running = true
		go l.drain()
	}
	q.mu.Unlock()
}

// recordBlock records one block's changes now, on the caller's goroutine (the
// queue must be idle), and returns how many there were.
func (l *lazyMuHash) recordBlock(removed, added [][]utxo.Entry) int {
	n := 0
	for _, list := range removed {
		for _, e := range list {
			l.remove(e.Outpoint, e.Coin)
		}
		n += len(list)
	}
	for _, list := range added {
		for _, e := range list {
			l.insert(e.Outpoint, e.Coin)
		}
		n += len(list)
	}
	return n
}

// recordNow records one block's changes on the caller's goroutine (the
// default; Config.AsyncMuHash queues them instead), counting them toward
// mayExceed's bound.
func (l *lazyMuHash) recordNow(removed, added [][]utxo.Entry) {
	n := l.recordBlock(removed, added)
	l.q.mu.Lock()
	l.q.since += n
	l.q.mu.Unlock()
}

// drain records queued jobs until none is left.
func (l *lazyMuHash) drain() {
	q := &l.q
	q.mu.Lock()
	for len(q.jobs) > 0 {
		j := q.jobs[0]
		q.jobs[0] = muJob{}
		q.jobs = q.jobs[1:]
		q.mu.Unlock()
		n := l.recordBlock(j.removed, j.added)
		q.mu.Lock()
		q.queued -= n
		q.idle.Broadcast()
	}
	q.jobs = nil
	q.running = false
	q.idle.Broadcast()
	q.mu.Unlock()
}

// wait returns once every enqueued change is recorded; the record is then
// the caller's until the next enqueue.
func (l *lazyMuHash) wait() {
	q := &l.q
	q.mu.Lock()
	for q.running {
		q.idle.Wait()
	}
	q.since = len(l.ins) + len(l.rem) + len(l.extraIns) + len(l.extraRem)
	q.mu.Unlock()
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
	if l.pending() == 0 { // waits for the queue
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
	l.q.mu.Lock()
	l.q.since = 0
	l.q.mu.Unlock()
}
