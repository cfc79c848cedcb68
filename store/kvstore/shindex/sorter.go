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
	"os"
	"path/filepath"
	"slices"
	"unsafe"

	"utxod/backends"
	"utxod/utxo"
	"utxod/wire"
)

// The rows of the index arrive in txid order (a coin scan, a snapshot
// load) but are keyed by scripthash: written as they come, every batch
// would touch the whole key range (an LSM store compacts each key many
// times over, bbolt rewrites a page per row). A Sorter sorts them in
// bounded runs instead — a run's rows are hashed and sorted by a goroutine
// of its own while the next run fills, and spilled to a file — and at the
// end merges the runs into one ascending stream written with the store's
// append path (backends.WriteAppend: ingested tables on pebble and
// RocksDB, full pages on bbolt), each key written once.

// DefaultSortMemory is the memory a Sorter uses for its runs unless told
// otherwise: two runs (one filling, one being sorted and spilled). The
// runs are mapped outside the Go heap where the system allows (they hold
// no pointers), so they do not raise the garbage collector's target, and
// pages a small set never reaches are never resident.
const DefaultSortMemory = 128 << 20

// sortRowBytes is a row's size in a run (in memory, as sortRow, and in a
// run file): the key without the prefix, then value<<1|coinbase as uint64.
const sortRowBytes = keyLen - 1 + 8

// sortRowBudget is the memory counted per row of a run: the row, its
// place in the order, its script's offset and a typical script.
const sortRowBudget = sortRowBytes + 16 + 4 + 40

// appendBatchBytes is the size of the batches the merge writes; minRunRows
// the fewest rows a run holds (variables for the tests).
var (
	appendBatchBytes = 16 << 20
	minRunRows       = 1024
)

// sortFilePrefix names the directories a Sorter spills to; a build
// removes those a crash left.
const sortFilePrefix = "shindex-sort-"

// sortIdx is a row's place in a run with the first 8 bytes of its key:
// the sort moves these 16 bytes, not the 80-byte rows, and compares whole
// keys only when the prefixes tie.
type sortIdx struct {
	p uint64
	i uint32
}

type sortRow struct {
	k rowKey // k[:32] is filled in when the run is sorted
	v uint64
}

// sortRun is a run being filled: the rows without their scripthashes and
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
	// Dir is where a directory for the run files is created (default
	// os.TempDir()). The Sorter removes it in Close.
	Dir string
	// Memory bounds the runs in memory (default DefaultSortMemory).
	Memory int
	// Rows, if not 0, is the number of rows expected: runs are not
	// allocated bigger than that.
	Rows uint64
}

// Sorter collects the rows of coins in any order (AddTx) and writes them
// in key order (Write). It is not safe for concurrent use.
type Sorter struct {
	cfg     SorterConfig
	maxRows int
	maxData int
	dir     string // the run files' directory, once created
	cur     *sortRun
	free    chan *sortRun
	work    chan *sortRun
	wdone   chan struct{}
	werr    error // the spiller's first error, read after wdone
	runs    []string
	rows    uint64
	closed  bool
	all     []*sortRun // every run allocated, freed by Close
}

// NewSorter returns an empty sorter.
func NewSorter(cfg SorterConfig) *Sorter {
	if cfg.Memory <= 0 {
		cfg.Memory = DefaultSortMemory
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
	s.cur = s.newRun()
	go s.spiller()
	return s
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
	mem, mapped := allocRun(rowBytes + orderBytes + endBytes + s.maxData)
	run := &sortRun{mem: mem, mapped: mapped}
	run.rows = unsafe.Slice((*sortRow)(unsafe.Pointer(&mem[0])), s.maxRows)[:0]
	run.order = unsafe.Slice((*sortIdx)(unsafe.Pointer(&mem[rowBytes])), s.maxRows)[:0]
	run.ends = unsafe.Slice((*uint32)(unsafe.Pointer(&mem[rowBytes+orderBytes])), s.maxRows)[:0]
	off := rowBytes + orderBytes + endBytes
	run.scripts = mem[off:off:len(mem)]
	s.all = append(s.all, run)
	return run
}

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
		binary.BigEndian.PutUint32(r.k[32:], c.Height)
		copy(r.k[36:68], txid[:])
		binary.BigEndian.PutUint32(r.k[68:], outs[i].Index)
		script := c.Script
		if len(script) > bigScript {
			// Hashed here (rare: Core keeps no script above 10,000
			// bytes in the set), so that any size fits a run.
			h := sha256.Sum256(script)
			copy(r.k[:32], h[:])
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
		s.cur.rows, s.cur.order, s.cur.scripts, s.cur.ends = s.cur.rows[:0], s.cur.order[:0], s.cur.scripts[:0], s.cur.ends[:0]
	default:
		s.cur = s.newRun()
	}
	return nil
}

// spiller sorts the runs it is handed and writes each to a file.
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

// sort fills in the scripthashes of run's rows and sorts them.
func (run *sortRun) sort() {
	start := uint32(0)
	for i := range run.rows {
		end := run.ends[i]
		if end&preHashed != 0 {
			continue
		}
		h := sha256.Sum256(run.scripts[start:end])
		copy(run.rows[i].k[:32], h[:])
		start = end
	}
	run.order = run.order[:len(run.rows)]
	for i := range run.rows {
		run.order[i] = sortIdx{binary.BigEndian.Uint64(run.rows[i].k[:8]), uint32(i)}
	}
	rows := run.rows
	slices.SortFunc(run.order, func(a, b sortIdx) int {
		switch {
		case a.p < b.p:
			return -1
		case a.p > b.p:
			return 1
		}
		return bytes.Compare(rows[a.i].k[8:], rows[b.i].k[8:])
	})
}

func (s *Sorter) writeRun(run *sortRun) (err error) {
	run.sort()
	if s.dir == "" {
		base := s.cfg.Dir
		if base == "" {
			base = os.TempDir()
		}
		if s.dir, err = os.MkdirTemp(base, sortFilePrefix); err != nil {
			return fmt.Errorf("shindex: sort: %w", err)
		}
	}
	name := filepath.Join(s.dir, fmt.Sprintf("run-%06d", len(s.runs)))
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("shindex: sort: %w", err)
	}
	s.runs = append(s.runs, name)
	w := bufio.NewWriterSize(f, 1<<20)
	var rec [sortRowBytes]byte
	for _, o := range run.order {
		r := &run.rows[o.i]
		copy(rec[:], r.k[:])
		binary.LittleEndian.PutUint64(rec[keyLen-1:], r.v)
		if _, err = w.Write(rec[:]); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("shindex: sort: %w", err)
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

// Close stops the sorter and removes its run files. It is safe to call
// after Write and more than once.
func (s *Sorter) Close() error {
	err := s.stop()
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

// Write merges the runs and writes every row, in key order, to kv with
// backends.WriteAppend in unsynced batches (the caller's synced write of
// the meta key makes them durable), and returns the number of rows. kv
// must hold no row of the index. progress, if set, is called after each
// batch with the rows written and the total. Write does not Close.
func (s *Sorter) Write(ctx context.Context, kv backends.KV, progress Progress) (uint64, error) {
	if err := s.stop(); err != nil {
		return 0, err
	}
	last := s.cur
	last.sort()
	srcs := make(mergeHeap, 0, len(s.runs)+1)
	defer func() {
		for _, c := range srcs {
			if c.f != nil {
				c.f.Close()
			}
		}
	}()
	// A read buffer per run file, within the memory the runs had.
	bufSize := min(1<<20, max(64<<10, s.cfg.Memory/2/max(1, len(s.runs))))
	for _, name := range s.runs {
		f, err := os.Open(name)
		if err != nil {
			return 0, fmt.Errorf("shindex: sort: %w", err)
		}
		c := &mergeSource{f: f, r: bufio.NewReaderSize(f, bufSize)}
		srcs = append(srcs, c)
	}
	if len(last.rows) > 0 {
		srcs = append(srcs, &mergeSource{mem: last.rows, order: last.order})
	}
	h := srcs[:0:0]
	for _, c := range srcs {
		ok, err := c.next()
		if err != nil {
			return 0, err
		}
		if ok {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	b := backends.NewBatch()
	b.Grow(appendBatchBytes+64<<10, appendBatchBytes/(keyLen+4))
	var key [keyLen]byte
	key[0] = Prefix
	var val []byte
	var n uint64
	var prev rowKey
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := backends.WriteAppend(kv, b, backends.NoSync); err != nil {
			return fmt.Errorf("shindex: write rows: %w", err)
		}
		b.Reset()
		if progress != nil {
			progress(n, s.rows)
		}
		return nil
	}
	for len(h) > 0 {
		c := h[0]
		if n > 0 && cmpKey(c.row.k, prev) <= 0 {
			return n, fmt.Errorf("shindex: sort: row %x twice", c.row.k[:])
		}
		prev = c.row.k
		copy(key[1:], c.row.k[:])
		val = binary.AppendUvarint(val[:0], c.row.v)
		b.Put(key[:], val)
		n++
		if b.Size() >= appendBatchBytes {
			if err := flush(); err != nil {
				return n, err
			}
		}
		ok, err := c.next()
		if err != nil {
			return n, err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	if err := flush(); err != nil {
		return n, err
	}
	if n != s.rows {
		return n, fmt.Errorf("shindex: sort: %d rows merged of %d added", n, s.rows)
	}
	return n, nil
}

// mergeSource is a sorted run: a file or the last run in memory.
type mergeSource struct {
	f     *os.File
	r     *bufio.Reader
	mem   []sortRow
	order []sortIdx
	row   sortRow
}

func (c *mergeSource) next() (bool, error) {
	if c.f == nil {
		if len(c.order) == 0 {
			return false, nil
		}
		c.row, c.order = c.mem[c.order[0].i], c.order[1:]
		return true, nil
	}
	var rec [sortRowBytes]byte
	if _, err := io.ReadFull(c.r, rec[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, fmt.Errorf("shindex: sort: read %s: %w", c.f.Name(), err)
	}
	copy(c.row.k[:], rec[:keyLen-1])
	c.row.v = binary.LittleEndian.Uint64(rec[keyLen-1:])
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
