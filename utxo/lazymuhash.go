package utxo

import (
	"bytes"
	"fmt"
	"iter"
	"runtime"
	"sync"

	"utxod/wire"
)

// LazyMuHash defers MuHash3072 work. Coins that enter the set and leave it
// again before the next materialisation cancel without being hashed or even
// serialised; materialize reads the survivors back from the coin set and
// hashes them, with the serializations (AppendTxOutSer) of the coins
// removed that were there before, folding both into the running MuHash on
// all cores. The chainstate materialises before every read of the digest
// and before every flush, so Info and the persisted state are always exact.
//
// Changes are recorded after the coin set has applied them and in the set's
// order (a removal removes the coin the set held at its outpoint), in
// windows that a materialisation closes:
//
//   - A window of connects only is kept by height. Every coin the set held
//     when it opened was created at or below the tip then (Window.height),
//     and every coin created since is above it, so a coin's height says
//     whether it was added in the window: removing one records nothing at
//     all, and additions are kept as the txids that made them. A txid's
//     outputs are created together (one transaction; a txid made again is
//     the same transaction, and BIP30 lets it in only once every earlier
//     output is spent or, at its two exceptions, overwritten), so every
//     unspent output of a listed txid was added in the window, and
//     materialize reads them back one transaction at a time.
//   - A window with a disconnect is kept in maps, since a disconnect adds
//     back coins of any height: an addition is an outpoint in ins, and a
//     removal of a pending addition deletes it (no comparison: the set held
//     exactly that coin).
//
// Disconnects therefore start a window of their own (the chainstate
// materialises before and after them).
//
// The set is read through View, and through TxCoinsView,
// ConcurrentTxCoinsView and Warmer where it has them, so the record needs
// no store.
//
// On an early-chain import most coins are created and spent within one
// window, so most MuHash work disappears (bench/results/digests.md).
type LazyMuHash struct {
	// added lists the transactions whose outputs were added in a window
	// kept by height (a txid may repeat: materialize reads each once), in
	// chunks of addedChunk: a list grown by doubling copied itself over
	// and over on the connecting goroutine. nAdded counts them.
	added  [][]addedTx
	nAdded int
	// ins holds the outpoints added in a window kept in maps and still in
	// the set; rem maps removed outpoints that were in the set when the
	// window opened to their serializations, kept in kept's chunks. ins and
	// the chunks of added hold no pointer, so the garbage collector never
	// scans them (rem holds only the window's removals of older coins).
	ins map[Outpoint]struct{}
	rem map[Outpoint][]byte
	// extraRem holds removals whose outpoint was already pending in rem
	// (removed, added back with other bytes and removed again).
	extraRem [][]byte
	kept     serChunks
	// scratch holds the serialization an insertion compares with a
	// pending removal's.
	scratch []byte

	// win is the open window as the caller (the chainstate, under its
	// lock) sees it; each job carries a copy.
	win Window

	// workers, when set, is the number of goroutines materialize uses
	// (tests); otherwise one per CPU, given enough to hash.
	workers int
}

// addedTx is a transaction that added coins: n is one more than the
// highest output index it added (where a View without TxCoinsView
// is asked).
type addedTx struct {
	txid wire.Hash
	n    uint32
}

// addedChunk is the number of entries per chunk of LazyMuHash.added.
const addedChunk = 4096

// addTx appends a to the added list.
func (l *LazyMuHash) addTx(a addedTx) {
	n := len(l.added) - 1
	if n < 0 || len(l.added[n]) == cap(l.added[n]) {
		l.added = append(l.added, make([]addedTx, 0, addedChunk))
		n++
	}
	l.added[n] = append(l.added[n], a)
	l.nAdded++
}

// addedParts yields the added list in order, in slices of at most n
// entries.
func (l *LazyMuHash) addedParts(n int) iter.Seq[[]addedTx] {
	return func(yield func([]addedTx) bool) {
		for _, chunk := range l.added {
			for len(chunk) > 0 {
				part := chunk[:min(n, len(chunk))]
				chunk = chunk[len(part):]
				if !yield(part) {
					return
				}
			}
		}
	}
}

// warmBatch is the number of added transactions materialize has the set
// warm at a time (Warmer): their slots and records stay cached until
// they are read.
const warmBatch = 1024

// Window says how the changes since the last materialisation are kept:
// open once a change is recorded; byHeight, coins created above height were
// added in it (see LazyMuHash).
type Window struct {
	open, byHeight bool
	height         uint32
}

// ConnectWindow is the window a block connected on a tip at height parent
// is recorded in: a closed window opens by height there.
func (l *LazyMuHash) ConnectWindow(parent uint32) Window {
	if !l.win.open {
		l.win = Window{open: true, byHeight: true, height: parent}
	}
	return l.win
}

// DisconnectWindow is the window a disconnect is recorded in: a closed
// window opens kept in maps. A window open by height must be materialised
// first (ErrStats otherwise: its added coins could not be told apart).
func (l *LazyMuHash) DisconnectWindow() (Window, error) {
	switch {
	case !l.win.open:
		l.win = Window{open: true}
	case l.win.byHeight:
		return Window{}, fmt.Errorf("utxo: lazy muhash: %w: disconnect recorded in a Window kept by height", ErrStats)
	}
	return l.win, nil
}

// materializeAt bounds the pending entries (memory) between flushes.
const materializeAt = 1 << 20

// Due reports whether the record holds so many entries that the caller
// should materialise now rather than at the next read or flush (memory).
func (l *LazyMuHash) Due() bool { return l.pending() > materializeAt }

// NewLazyMuHash returns an empty record.
func NewLazyMuHash() *LazyMuHash {
	return &LazyMuHash{ins: make(map[Outpoint]struct{}), rem: make(map[Outpoint][]byte)}
}

// pending is the number of entries recorded and not yet materialised.
func (l *LazyMuHash) pending() int { return l.nAdded + len(l.ins) + len(l.rem) + len(l.extraRem) }

// RecordNow records one block's changes on the caller's goroutine: the
// coins that left the set first, then those that entered it.
func (l *LazyMuHash) RecordNow(w Window, removed, added [][]Entry) {
	for _, list := range removed {
		for _, e := range list {
			if w.byHeight && e.Height > w.height {
				continue // added in this Window: not read back, nothing to hash
			}
			l.remove(e.Outpoint, e.Coin)
		}
	}
	for _, list := range added {
		if w.byHeight {
			// A transaction's coins are consecutive, in index order.
			for i := 0; i < len(list); {
				j := TxidRunEnd(list, i)
				l.addTx(addedTx{list[i].Hash, list[j-1].Index + 1})
				i = j
			}
		} else {
			for _, e := range list {
				l.insert(e.Outpoint, e.Coin)
			}
		}
	}
}

// insert records, in a window kept in maps, that c entered the set at op. It
// cancels a pending removal
// of the same coin (a reorg adding back what it removed); otherwise only op
// is kept. An op already pending stays one insertion: the set holds one coin
// per outpoint, and materialize hashes the one it holds.
func (l *LazyMuHash) insert(op Outpoint, c Coin) {
	if len(l.rem) > 0 {
		if r, ok := l.rem[op]; ok {
			l.scratch = AppendTxOutSer(l.scratch[:0], op, c)
			if bytes.Equal(r, l.scratch) {
				delete(l.rem, op)
				return
			}
		}
	}
	l.ins[op] = struct{}{}
}

// remove records that c left the set at op (in a window kept by height, a
// coin created before it opened). A pending insertion of op was
// of c (changes arrive in the set's order), so the two cancel unhashed;
// otherwise c's serialization is kept.
func (l *LazyMuHash) remove(op Outpoint, c Coin) {
	if len(l.ins) > 0 {
		if _, ok := l.ins[op]; ok {
			delete(l.ins, op)
			return
		}
	}
	if _, dup := l.rem[op]; dup {
		l.extraRem = append(l.extraRem, l.kept.add(op, c))
		return
	}
	l.rem[op] = l.kept.add(op, c)
}

// serChunks holds serializations in chunks, so that the slices handed out
// stay put (a buffer grown by doubling would copy them); a full chunk is
// left to the slices that point into it. Chunks start at 64 KiB (a window
// of one block keeps a few removals) and double up to serChunk.
type serChunks struct{ cur []byte }

const serChunk = 1 << 20

// add appends op and c's TxOutSer to the current chunk and returns it.
func (s *serChunks) add(op Outpoint, c Coin) []byte {
	n := TxOutSerLen(c)
	if cap(s.cur)-len(s.cur) < n {
		size := 64 << 10
		if cap(s.cur) > 0 {
			size = min(2*cap(s.cur), serChunk)
		}
		s.cur = make([]byte, 0, max(size, n))
	}
	start := len(s.cur)
	s.cur = AppendTxOutSer(s.cur, op, c)
	return s.cur[start:len(s.cur):len(s.cur)]
}

// appendTxCoins appends the unspent outputs of a's transaction in set to
// dst: one read through txv when set has it, else one per output index
// below a.n.
func appendTxCoins(dst []IndexedCoin, set View, txv TxCoinsView, a addedTx) ([]IndexedCoin, error) {
	if txv != nil {
		dst, err := txv.AppendTxCoins(dst, a.txid)
		if err != nil {
			return dst, fmt.Errorf("utxo: lazy muhash: read back %s: %w", a.txid, err)
		}
		return dst, nil
	}
	for i := range a.n {
		c, found, err := set.Coin(Outpoint{Hash: a.txid, Index: i})
		if err != nil {
			return dst, fmt.Errorf("utxo: lazy muhash: read back %s:%d: %w", a.txid, i, err)
		}
		if found {
			dst = append(dst, IndexedCoin{Index: i, Coin: c})
		}
	}
	return dst, nil
}

// readBack appends the serializations of the added list's unspent outputs
// to ins, reading set on one goroutine. A listed transaction's unspent
// outputs are the ones it added (those spent in the window are gone); one
// listed twice (an overwrite, a txid made again after it was spent) is read
// once.
func (l *LazyMuHash) readBack(ins [][]byte, sers *serChunks, set View) ([][]byte, error) {
	txv, _ := set.(TxCoinsView)
	warmer, _ := set.(Warmer)
	seen := make(map[wire.Hash]struct{})
	var coins []IndexedCoin
	var batch []wire.Hash
	for part := range l.addedParts(warmBatch) {
		if warmer != nil {
			batch = batch[:0]
			for _, a := range part {
				batch = append(batch, a.txid)
			}
			warmer.WarmTxids(batch)
		}
		for _, a := range part {
			if _, dup := seen[a.txid]; dup {
				continue
			}
			var err error
			if coins, err = appendTxCoins(coins[:0], set, txv, a); err != nil {
				return ins, err
			}
			if len(coins) == 0 {
				continue
			}
			seen[a.txid] = struct{}{}
			for _, c := range coins {
				ins = append(ins, sers.add(Outpoint{Hash: a.txid, Index: c.Index}, c.Coin))
			}
		}
	}
	return ins, nil
}

// foldBatch is the number of coins foldAdded serialises before hashing them.
const foldBatch = 1024

// foldAdded is readBack for worker w of n on a set read concurrently: it
// takes the listed transactions whose txid's first byte is w modulo n (so
// a txid listed twice meets one worker, which reads it once) and inserts
// their coins into p a batch at a time, holding one batch's serializations.
func (l *LazyMuHash) foldAdded(p *MuHash3072, cv ConcurrentTxCoinsView, w, n int) error {
	seen := make(map[wire.Hash]struct{})
	var (
		coins   []IndexedCoin
		scripts []byte
		buf     []byte
		ends    []int
		batch   [][]byte
	)
	fold := func() {
		batch = batch[:0]
		start := 0
		for _, end := range ends {
			batch = append(batch, buf[start:end:end])
			start = end
		}
		p.InsertMany(batch)
		buf, ends = buf[:0], ends[:0]
	}
	for _, chunk := range l.added {
		for _, a := range chunk {
			if int(a.txid[0])%n != w {
				continue
			}
			if _, dup := seen[a.txid]; dup {
				continue
			}
			var err error
			if coins, scripts, err = cv.AppendTxCoinsArena(coins[:0], scripts[:0], a.txid); err != nil {
				return fmt.Errorf("utxo: lazy muhash: read back %s: %w", a.txid, err)
			}
			if len(coins) == 0 {
				continue
			}
			seen[a.txid] = struct{}{}
			for _, c := range coins {
				buf = AppendTxOutSer(buf, Outpoint{Hash: a.txid, Index: c.Index}, c.Coin)
				ends = append(ends, len(buf))
			}
			if len(ends) >= foldBatch {
				fold()
			}
		}
	}
	fold()
	return nil
}

// Materialize folds every pending change into m and empties the record.
// The coins added are read back from set, which must hold every one of them
// (it has applied every recorded change); an error leaves m and the record
// unchanged.
func (l *LazyMuHash) Materialize(m *MuHash3072, set View) error {
	if l.pending() == 0 {
		l.win = Window{}
		return nil
	}
	var sers serChunks
	ins := make([][]byte, 0, len(l.ins))
	for op := range l.ins {
		c, found, err := set.Coin(op)
		if err != nil {
			return fmt.Errorf("utxo: lazy muhash: read back %s:%d: %w", op.Hash, op.Index, err)
		}
		if !found {
			return fmt.Errorf("utxo: lazy muhash: %w: coin %s:%d was added and is not in the set", ErrStats, op.Hash, op.Index)
		}
		ins = append(ins, sers.add(op, c))
	}
	rem := append(make([][]byte, 0, len(l.rem)+len(l.extraRem)), l.extraRem...)
	for _, ser := range l.rem {
		rem = append(rem, ser)
	}
	workers := l.workers
	if workers == 0 {
		workers = min(runtime.NumCPU(), max(1, (l.nAdded+len(ins)+len(rem))/256))
	}
	cv, _ := set.(ConcurrentTxCoinsView)
	if cv == nil && l.nAdded > 0 {
		var err error
		if ins, err = l.readBack(ins, &sers, set); err != nil {
			return err
		}
	}
	parts := make([]MuHash3072, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &parts[w]
			if cv != nil && l.nAdded > 0 {
				if errs[w] = l.foldAdded(p, cv, w, workers); errs[w] != nil {
					return
				}
			}
			// A contiguous share each, so the batch calls map several
			// elements per keystream kernel call.
			p.InsertMany(ins[w*len(ins)/workers : (w+1)*len(ins)/workers])
			p.RemoveMany(rem[w*len(rem)/workers : (w+1)*len(rem)/workers])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for w := range parts {
		m.Combine(&parts[w])
	}
	clear(l.ins)
	clear(l.rem)
	l.added, l.nAdded = nil, 0
	l.extraRem = nil
	l.win = Window{}
	l.kept = serChunks{} // garbage once the map is clear
	return nil
}
