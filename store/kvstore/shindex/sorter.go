package shindex

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"unsafe"

	"utxod/backends"
	"utxod/utxo"
	"utxod/wire"
)

// The rows of the index arrive in txid order (a coin scan, a snapshot
// load) but are keyed by scripthash id: written as they come, every batch
// would touch the whole key range (an LSM store compacts each key many
// times over, bbolt rewrites a page per row). A Sorter partitions them
// instead: runs of rows are hashed by a goroutine of its own while the next
// run fills, and each run's rows are appended to one file per range of
// ids (a bucket: the top bits of the id, so the buckets are in
// key order). At the end each bucket in turn is read back, sorted in memory
// and written with the store's append path (backends.WriteAppend: ingested
// tables on pebble and RocksDB, full pages on bbolt), each key written
// once, while the next bucket is read and sorted on another goroutine. A
// k-way merge of hundreds of runs, whose cost per row grew with the set,
// is gone; only a bucket too big for memory (a script with millions of
// coins) is sorted in chunks and merged.

// DefaultSortMemory is the memory a Sorter uses for its runs unless told
// otherwise: two runs (one filling, one being hashed and spilled), each
// later the room for one bucket being sorted. The runs are mapped outside
// the Go heap where the system allows (they hold no pointers), so they do
// not raise the garbage collector's target, and pages a small set never
// reaches are never resident.
const DefaultSortMemory = 128 << 20

// sortRowBytes is a row's size in a run and in a bucket file (written as
// sortRow's memory: the files are the process's own, read back by it): the
// key in memory, then value<<1|coinbase as uint64.
const sortRowBytes = rowKeyLen + 8

// sortRowBudget is the memory counted per row of a run: the row, its
// place in the order, its script's offset and a typical script.
const sortRowBudget = sortRowBytes + 16 + 4 + 40

// bucketRowBytes is the memory a row takes in a bucket being sorted: the
// row and its place in the order.
const bucketRowBytes = sortRowBytes + 16

// maxBuckets bounds the bucket files, all open while rows are added.
const maxBuckets = 512

// appendBatchBytes is the size of the batches the write sends; minRunRows
// the fewest rows a run holds (variables for the tests).
var (
	appendBatchBytes = 16 << 20
	minRunRows       = 1024
)

// sortFilePrefix names the directories a Sorter spills to; a build
// removes those a crash left.
const sortFilePrefix = "shindex-sort-"

// sortIdx is a row's place in a run with the first 8 bytes of its key:
// the sort moves these 16 bytes, not the 56-byte rows, and compares whole
// keys only when the prefixes tie.
type sortIdx struct {
	p uint64
	i uint32
}

type sortRow struct {
	k rowKey // k[:8], the id, is filled in when the run is hashed
	v uint64
}

// sortRun is a run being filled: the rows without their ids and
// the scripts to hash, all three in one fixed block of memory (never
// grown: a full run is spilled).
type sortRun struct {
	mem     []byte
	mapped  bool
	rows    []sortRow
	order   []sortIdx // after sort: the rows in key order
	scripts []byte
	ends    []uint32
}

// SorterConfig configures a Sorter.
type SorterConfig struct {
	// Dir is where a directory for the bucket files is created (default
	// os.TempDir()). The Sorter removes it in Close.
	Dir string
	// Memory bounds the runs in memory (default DefaultSortMemory).
	Memory int
	// Rows, if not 0, is the number of rows expected: runs are not
	// allocated bigger than that, and the buckets are sized for it.
	Rows uint64
	// Key is the key of the rows' ids; the zero key makes a new one
	// (Sorter.Key).
	Key IDKey
}

// Sorter collects the rows of coins in any order (AddTx) and writes them
// in key order (Write). It is not safe for concurrent use.
type Sorter struct {
	cfg     SorterConfig
	maxRows int
	maxData int
	bits    uint // log2 of the number of buckets
	dir     string
	files   []*os.File // one per bucket, once the first run is spilled
	counts  []uint64   // rows in each bucket file
	spilled bool
	spills  int    // runs written to the buckets
	out     []byte // the spiller's write buffer
	cur     *sortRun
	free    chan *sortRun
	work    chan *sortRun
	wdone   chan struct{}
	werr    error // the spiller's first error, read after wdone
	rows    uint64
	closed  bool
	all     []*sortRun // every run allocated, freed by Close
}

// NewSorter returns an empty sorter.
func NewSorter(cfg SorterConfig) *Sorter {
	if cfg.Memory <= 0 {
		cfg.Memory = DefaultSortMemory
	}
	if cfg.Key == (IDKey{}) {
		cfg.Key = NewIDKey()
	}
	maxRows := max(minRunRows, cfg.Memory/2/sortRowBudget)
	if cfg.Rows > 0 && cfg.Rows < uint64(maxRows) {
		maxRows = max(1, int(cfg.Rows))
	}
	// Room for the scripts: the rest of the run's share, at least
	// maxScriptRoom.
	maxData := max(maxScriptRoom, cfg.Memory/2-maxRows*(sortRowBytes+16+4))
	if cfg.Rows > 0 {
		maxData = min(maxData, max(maxScriptRoom, int(min(cfg.Rows, uint64(maxRows)))*(sortRowBudget-sortRowBytes-16-4)))
	}
	s := &Sorter{cfg: cfg, maxRows: maxRows, maxData: maxData,
		free: make(chan *sortRun, 1), work: make(chan *sortRun), wdone: make(chan struct{})}
	// Buckets of half a run's block on average (ids are uniform;
	// the slack takes the variance and most big scripts): an unknown
	// count takes the most.
	s.bits = uint(bits.Len(maxBuckets - 1))
	if cfg.Rows > 0 {
		perBucket := uint64(max(1, s.bucketCap()/2))
		s.bits = min(s.bits, uint(bits.Len64((cfg.Rows+perBucket-1)/perBucket-1)))
	}
	s.cur = s.newRun()
	go s.spiller()
	return s
}

// bucketCap is how many rows of a bucket a run's block holds when sorted.
func (s *Sorter) bucketCap() int {
	return max(1, s.blockBytes()/bucketRowBytes)
}

func (s *Sorter) blockBytes() int {
	return s.maxRows*int(unsafe.Sizeof(sortRow{})+unsafe.Sizeof(sortIdx{})+4) + s.maxData
}

// maxScriptRoom is the least room for scripts a run has; scripts longer
// than bigScript are hashed as they are added (their end offset carries
// preHashed) instead of being kept for the run's sort.
const (
	maxScriptRoom = 64 << 10
	bigScript     = 4 << 10
	preHashed     = 1 << 31
)

func (s *Sorter) newRun() *sortRun {
	rowBytes := s.maxRows * int(unsafe.Sizeof(sortRow{}))
	orderBytes := s.maxRows * int(unsafe.Sizeof(sortIdx{}))
	endBytes := s.maxRows * 4
	mem, mapped := allocRun(s.blockBytes())
	run := &sortRun{mem: mem, mapped: mapped}
	run.rows = unsafe.Slice((*sortRow)(unsafe.Pointer(&mem[0])), s.maxRows)[:0]
	run.order = unsafe.Slice((*sortIdx)(unsafe.Pointer(&mem[rowBytes])), s.maxRows)[:0]
	run.ends = unsafe.Slice((*uint32)(unsafe.Pointer(&mem[rowBytes+orderBytes])), s.maxRows)[:0]
	off := rowBytes + orderBytes + endBytes
	run.scripts = mem[off:off:len(mem)]
	s.all = append(s.all, run)
	return run
}

// Key is the key of the rows' ids, for the index's meta key.
func (s *Sorter) Key() IDKey { return s.cfg.Key }

// Rows is the number of rows added so far.
func (s *Sorter) Rows() uint64 { return s.rows }

// AddTx adds the rows of txid's coins.
func (s *Sorter) AddTx(txid wire.Hash, outs []utxo.IndexedCoin) error {
	for i := range outs {
		c := &outs[i].Coin
		r := sortRow{v: uint64(c.Value) << 1}
		if c.Coinbase {
			r.v |= 1
		}
		if c.Height > MaxHeight {
			return fmt.Errorf("%w: %s:%d at %d", ErrHeight, txid, outs[i].Index, c.Height)
		}
		binary.BigEndian.PutUint32(r.k[kHeight:], c.Height)
		copy(r.k[kTxid:kVout], txid[:])
		binary.BigEndian.PutUint32(r.k[kVout:], outs[i].Index)
		script := c.Script
		if len(script) > bigScript {
			// Hashed here (rare: Core keeps no script above 10,000
			// bytes in the set), so that any size fits a run.
			binary.BigEndian.PutUint64(r.k[:], s.cfg.Key.ID(sha256.Sum256(script)))
			script = nil
		}
		if len(s.cur.scripts)+len(script) > cap(s.cur.scripts) {
			if err := s.spill(); err != nil {
				return err
			}
		}
		run := s.cur
		run.rows = append(run.rows, r)
		run.scripts = append(run.scripts, script...)
		end := uint32(len(run.scripts))
		if script == nil && len(c.Script) > bigScript {
			end |= preHashed
		}
		run.ends = append(run.ends, end)
		s.rows++
		if len(run.rows) == cap(run.rows) {
			if err := s.spill(); err != nil {
				return err
			}
		}
	}
	return nil
}

// spill hands the current run to the spiller and takes an empty one.
func (s *Sorter) spill() error {
	select {
	case <-s.wdone:
		return s.werr
	case s.work <- s.cur:
	}
	select {
	case s.cur = <-s.free:
		s.cur.reset()
	default:
		s.cur = s.newRun()
	}
	return nil
}

func (run *sortRun) reset() {
	run.rows, run.order, run.scripts, run.ends = run.rows[:0], run.order[:0], run.scripts[:0], run.ends[:0]
}

// spiller hashes the runs it is handed and appends their rows to the
// bucket files.
func (s *Sorter) spiller() {
	defer close(s.wdone)
	for run := range s.work {
		if s.werr == nil {
			s.werr = s.writeRun(run)
		}
		select {
		case s.free <- run:
		default:
		}
	}
}

// hash fills in the ids of run's rows.
func (run *sortRun) hash(key *IDKey) {
	start := uint32(0)
	for i := range run.rows {
		end := run.ends[i]
		if end&preHashed != 0 {
			continue
		}
		binary.BigEndian.PutUint64(run.rows[i].k[:], key.ID(sha256.Sum256(run.scripts[start:end])))
		start = end
	}
}

// sortIdxs sorts the places of rows in key order.
func sortIdxs(order []sortIdx, rows []sortRow) {
	slices.SortFunc(order, func(a, b sortIdx) int {
		switch {
		case a.p < b.p:
			return -1
		case a.p > b.p:
			return 1
		}
		return bytes.Compare(rows[a.i].k[8:], rows[b.i].k[8:])
	})
}

// sort fills in the ids of run's rows and sorts them.
func (run *sortRun) sort(key *IDKey) {
	run.hash(key)
	run.order = run.order[:len(run.rows)]
	for i := range run.rows {
		run.order[i] = sortIdx{binary.BigEndian.Uint64(run.rows[i].k[:8]), uint32(i)}
	}
	sortIdxs(run.order, run.rows)
}

func (s *Sorter) bucketOf(k *rowKey) int {
	if s.bits == 0 {
		return 0
	}
	return int(binary.BigEndian.Uint64(k[:8]) >> (64 - s.bits))
}

// rowBytes is rows' memory, the format of the bucket files.
func rowBytes(rows []sortRow) []byte {
	if len(rows) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&rows[0])), len(rows)*sortRowBytes)
}

// writeRun hashes run's rows and appends each to its bucket's file, in
// bucket order (a counting sort of the places; the order within a bucket
// is sorted when it is read back).
func (s *Sorter) writeRun(run *sortRun) error {
	run.hash(&s.cfg.Key)
	s.spills++
	if err := s.openBuckets(); err != nil {
		return err
	}
	n := 1 << s.bits
	starts := make([]int, n+1)
	for i := range run.rows {
		starts[s.bucketOf(&run.rows[i].k)+1]++
	}
	for b := 1; b <= n; b++ {
		starts[b] += starts[b-1]
	}
	run.order = run.order[:len(run.rows)]
	next := slices.Clone(starts[:n])
	for i := range run.rows {
		b := s.bucketOf(&run.rows[i].k)
		run.order[next[b]].i = uint32(i)
		next[b]++
	}
	if s.out == nil {
		s.out = make([]byte, 0, 1<<20)
	}
	for b := 0; b < n; b++ {
		for _, o := range run.order[starts[b]:starts[b+1]] {
			if len(s.out)+sortRowBytes > cap(s.out) {
				if err := s.writeBucket(b); err != nil {
					return err
				}
			}
			s.out = append(s.out, rowBytes(run.rows[o.i:o.i+1])...)
		}
		if err := s.writeBucket(b); err != nil {
			return err
		}
		s.counts[b] += uint64(starts[b+1] - starts[b])
	}
	return nil
}

func (s *Sorter) writeBucket(b int) error {
	if len(s.out) == 0 {
		return nil
	}
	if _, err := s.files[b].Write(s.out); err != nil {
		return fmt.Errorf("shindex: sort: %w", err)
	}
	s.out = s.out[:0]
	return nil
}

// openBuckets creates the directory and the bucket files on the first
// spill.
func (s *Sorter) openBuckets() (err error) {
	if s.spilled {
		return nil
	}
	s.spilled = true
	base := s.cfg.Dir
	if base == "" {
		base = os.TempDir()
	}
	if s.dir, err = os.MkdirTemp(base, sortFilePrefix); err != nil {
		return fmt.Errorf("shindex: sort: %w", err)
	}
	n := 1 << s.bits
	s.counts = make([]uint64, n)
	for b := 0; b < n; b++ {
		f, err := os.Create(filepath.Join(s.dir, fmt.Sprintf("bucket-%04d", b)))
		if err != nil {
			return fmt.Errorf("shindex: sort: %w", err)
		}
		s.files = append(s.files, f)
	}
	return nil
}

// stop waits for the spiller to finish and returns its error.
func (s *Sorter) stop() error {
	if !s.closed {
		s.closed = true
		close(s.work)
	}
	<-s.wdone
	return s.werr
}

// Close stops the sorter and removes its files. It is safe to call after
// Write and more than once.
func (s *Sorter) Close() error {
	err := s.stop()
	for _, f := range s.files {
		if f == nil {
			continue
		}
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	s.files = nil
	if s.dir != "" {
		if rerr := os.RemoveAll(s.dir); rerr != nil && err == nil {
			err = rerr
		}
		s.dir = ""
	}
	s.cur = nil
	for _, run := range s.all {
		freeRun(run.mem, run.mapped)
		run.mem, run.rows, run.order, run.ends, run.scripts = nil, nil, nil, nil, nil
	}
	s.all = nil
	return err
}

// Write sorts the buckets and writes every row, in key order, to kv with
// backends.WriteAppend in unsynced batches (the caller's synced write of
// the meta key makes them durable), and returns the number of rows. A
// goroutine reads and sorts the buckets and fills the batches while this
// one writes them (the table building), so both run at once. kv must hold
// no row of the index. progress, if set, is called after each batch with
// the rows written and the total. Write does not Close.
func (s *Sorter) Write(ctx context.Context, kv backends.KV, progress Progress) (uint64, error) {
	if err := s.stop(); err != nil {
		return 0, err
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan *backends.Batch)
	free := make(chan *backends.Batch, 1)
	pdone := make(chan error, 1)
	go func() {
		defer close(batches)
		e := &emitter{ctx: pctx, out: batches, free: free, b: newAppendBatch()}
		pdone <- s.produce(pctx, e)
	}()
	var n uint64
	var werr error
	for b := range batches {
		if werr == nil {
			werr = ctx.Err()
			if werr == nil {
				if err := backends.WriteAppend(kv, b, backends.NoSync); err != nil {
					werr = fmt.Errorf("shindex: write rows: %w", err)
				}
			}
			if werr != nil {
				cancel() // the producer stops at its next batch
			} else {
				n += uint64(b.Len())
				if progress != nil {
					progress(n, s.rows)
				}
			}
		}
		b.Reset()
		select {
		case free <- b:
		default:
		}
	}
	perr := <-pdone
	switch {
	case werr != nil:
		return n, werr
	case perr != nil:
		return n, perr
	case n != s.rows:
		return n, fmt.Errorf("shindex: sort: %d rows written of %d added", n, s.rows)
	}
	return n, nil
}

// each gives fn every row in key order, its value as value<<1|coinbase.
// each does not Close.
func (s *Sorter) each(ctx context.Context, fn func(k *rowKey, v uint64) error) error {
	if err := s.stop(); err != nil {
		return err
	}
	e := &emitter{ctx: ctx, fn: fn}
	if err := s.produce(ctx, e); err != nil {
		return err
	}
	if e.n != s.rows {
		return fmt.Errorf("shindex: sort: %d rows of %d added", e.n, s.rows)
	}
	return nil
}

func newAppendBatch() *backends.Batch {
	b := backends.NewBatch()
	b.Grow(appendBatchBytes+64<<10, appendBatchBytes/(minDiskKey+4))
	return b
}

// emitter fills batches with rows in key order and hands them on, or
// gives each row to fn when set.
type emitter struct {
	fn   func(k *rowKey, v uint64) error
	ctx  context.Context
	out  chan<- *backends.Batch
	free chan *backends.Batch
	b    *backends.Batch
	key  []byte
	val  []byte
	prev rowKey
	n    uint64
}

func (e *emitter) put(r *sortRow) error {
	if e.n > 0 && cmpKey(r.k, e.prev) <= 0 {
		return fmt.Errorf("shindex: sort: row %x twice", r.k[:])
	}
	e.prev = r.k
	if e.fn != nil {
		e.n++
		return e.fn(&r.k, r.v)
	}
	e.key = appendDiskKey(e.key[:0], &r.k)
	e.val = binary.AppendUvarint(e.val[:0], r.v)
	e.b.Put(e.key, e.val)
	e.n++
	if e.b.Size() >= appendBatchBytes {
		return e.send()
	}
	return nil
}

func (e *emitter) send() error {
	if e.fn != nil || e.b.Len() == 0 {
		return nil
	}
	select {
	case e.out <- e.b:
	case <-e.ctx.Done():
		return e.ctx.Err()
	}
	select {
	case e.b = <-e.free:
	default:
		e.b = newAppendBatch()
	}
	return nil
}

// produce emits every row in key order: from the one run in memory when
// nothing was spilled, else bucket by bucket, each read into a run's
// block, sorted, emitted and removed.
func (s *Sorter) produce(ctx context.Context, e *emitter) error {
	run := s.cur
	if !s.spilled {
		run.sort(&s.cfg.Key)
		for _, o := range run.order {
			if err := e.put(&run.rows[o.i]); err != nil {
				return err
			}
		}
		return e.send()
	}
	if len(run.rows) > 0 {
		if err := s.writeRun(run); err != nil {
			return err
		}
	}
	capRows := s.bucketCap()
	rows := unsafe.Slice((*sortRow)(unsafe.Pointer(&run.mem[0])), capRows)
	order := unsafe.Slice((*sortIdx)(unsafe.Pointer(&run.mem[capRows*sortRowBytes])), capRows)
	// A second block takes a bucket's rows split by the next bits of
	// their id: parts small enough to sort in the processor's
	// cache.
	var parts []sortRow
	for _, r := range s.all {
		if r != run {
			parts = unsafe.Slice((*sortRow)(unsafe.Pointer(&r.mem[0])), capRows)
			break
		}
	}
	for b, f := range s.files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("shindex: sort: %w", err)
		}
		var err error
		if cnt := s.counts[b]; cnt <= uint64(capRows) && parts != nil {
			err = s.emitBucket(f, rows[:cnt], parts[:cnt], order, e)
		} else {
			err = s.mergeBucket(f, cnt, rows, order, e)
		}
		if err != nil {
			return err
		}
		// The bucket's disk space goes back as the index grows.
		s.files[b] = nil
		if err := errors.Join(f.Close(), os.Remove(f.Name())); err != nil {
			return fmt.Errorf("shindex: sort: %w", err)
		}
	}
	return e.send()
}

// readSorted reads len(rows) rows of f and sorts their places into order.
func readSorted(f *os.File, rows []sortRow, order []sortIdx) error {
	if _, err := io.ReadFull(f, rowBytes(rows)); err != nil {
		return fmt.Errorf("shindex: sort: read %s: %w", f.Name(), err)
	}
	for i := range rows {
		order[i] = sortIdx{binary.BigEndian.Uint64(rows[i].k[:8]), uint32(i)}
	}
	sortIdxs(order, rows)
	return nil
}

// emitBucket reads a bucket that fits in rows, splits it into parts by
// the 8 bits of the id after the bucket's (a counting sort into
// parts), and sorts and emits each part (order may overlap rows).
func (s *Sorter) emitBucket(f *os.File, rows, parts []sortRow, order []sortIdx, e *emitter) error {
	if _, err := io.ReadFull(f, rowBytes(rows)); err != nil {
		return fmt.Errorf("shindex: sort: read %s: %w", f.Name(), err)
	}
	shift := 64 - s.bits - 8
	var starts [257]int
	for i := range rows {
		starts[1+int(byte(binary.BigEndian.Uint64(rows[i].k[:8])>>shift))]++
	}
	for j := 1; j <= 256; j++ {
		starts[j] += starts[j-1]
	}
	next := starts
	for i := range rows {
		j := byte(binary.BigEndian.Uint64(rows[i].k[:8]) >> shift)
		parts[next[j]] = rows[i]
		next[j]++
	}
	for j := range 256 {
		part := parts[starts[j]:starts[j+1]]
		od := order[:len(part)]
		for i := range part {
			od[i] = sortIdx{binary.BigEndian.Uint64(part[i].k[:8]), uint32(i)}
		}
		sortIdxs(od, part)
		for _, o := range od {
			if err := e.put(&part[o.i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// mergeBucket emits a bucket of cnt rows bigger than rows: sorted in
// chunks spilled to files of their own, then merged.
func (s *Sorter) mergeBucket(f *os.File, cnt uint64, rows []sortRow, order []sortIdx, e *emitter) error {
	var srcs mergeHeap
	defer func() {
		for _, c := range srcs {
			c.f.Close()
			os.Remove(c.f.Name())
		}
	}()
	for left := cnt; left > 0; {
		k := min(left, uint64(len(rows)))
		if err := readSorted(f, rows[:k], order[:k]); err != nil {
			return err
		}
		cf, err := os.Create(fmt.Sprintf("%s-%d", f.Name(), len(srcs)))
		if err != nil {
			return fmt.Errorf("shindex: sort: %w", err)
		}
		srcs = append(srcs, &mergeSource{f: cf})
		w := bufio.NewWriterSize(cf, 1<<20)
		for _, o := range order[:k] {
			w.Write(rowBytes(rows[o.i : o.i+1])) // its error is Flush's
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("shindex: sort: %w", err)
		}
		if _, err := cf.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("shindex: sort: %w", err)
		}
		srcs[len(srcs)-1].r = bufio.NewReaderSize(cf, 256<<10)
		left -= k
	}
	h := srcs[:0:0]
	for _, c := range srcs {
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		c := h[0]
		if err := e.put(&c.row); err != nil {
			return err
		}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil
}

// mergeSource is a sorted chunk file of a bucket.
type mergeSource struct {
	f   *os.File
	r   *bufio.Reader
	row sortRow
}

func (c *mergeSource) next() (bool, error) {
	if _, err := io.ReadFull(c.r, rowBytes(unsafe.Slice(&c.row, 1))); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, fmt.Errorf("shindex: sort: read %s: %w", c.f.Name(), err)
	}
	return true, nil
}

type mergeHeap []*mergeSource

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return cmpKey(h[i].row.k, h[j].row.k) < 0 }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.(*mergeSource)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// removeStaleSortDirs removes the run directories a crashed build left in
// dir.
func removeStaleSortDirs(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() && bytes.HasPrefix([]byte(e.Name()), []byte(sortFilePrefix)) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}
