package main

import (
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"utxod/chainstate"
	"utxod/params"
	"utxod/validate"
	"utxod/wire"
)

func cmdImport(args []string, stdout, stderr io.Writer) (code int) {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c commonFlags
	c.register(fs)
	c.registerIndex(fs)
	asJSON := fs.Bool("json", false, "print the final chainstate (gettxoutsetinfo fields, as GET /v1/chainstate returns) as JSON on stdout")
	hashType := fs.String("hash-type", "hash_serialized_3", "digests in the JSON: hash_serialized_3 (also muhash), muhash or none")
	stopHeight := fs.Int("stop-height", -1, "stop once the active chain reaches this height")
	xorKey := fs.String("xor-key", "", "hex XOR key of Core 28+ obfuscated block files (the content of blocks/xor.dat)")
	orphanMB := fs.Int("orphan-mb", 2048, "memory for blocks whose parent has not been read yet (out-of-order block files)")
	startProfile := profileFlags(fs)
	memProfile := fs.String("memprofile", "", "write a heap profile (in-use memory at the end of the import, before the final flush) to this file")
	progress := fs.Duration("progress", 10*time.Second, "interval of progress log lines when stderr is not a terminal (0: off)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: utxod import --network N [--datadir D --backend B] [--json] FILE...

Reads Core's block-file framing (4-byte network magic, 4-byte LE length, block;
zero padding skipped; blocks may be out of order: they wait for their parent),
fully validates and connects the blocks. Headers first, as Core syncs: the
80-byte header of every record of every file is read and checked before any
block connects, so --assume-valid (default: the network's) knows the best
header; the JSON's assume_valid and assumed_valid_height say what was
skipped. With --datadir the chainstate is persistent and a later import resumes where this one stopped; without it the
chainstate lives in memory. A rejected block stops the import with exit status
1 and a line naming its hash, height and Core reject reason.

Flags:`)
		fs.PrintDefaults()
	}
	files, code, done := parseArgs(fs, args, true, stdout, stderr)
	if done {
		return code
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "utxod import: no block files given (see utxod import --help)")
		return 2
	}
	if err := c.check(); err != nil {
		fmt.Fprintln(stderr, "utxod import:", err)
		return 2
	}
	if err := checkHashType(*hashType); err != nil {
		fmt.Fprintln(stderr, "utxod import:", err)
		return 2
	}
	log, err := c.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "utxod import:", err)
		return 2
	}
	stopProfile, err := startProfile()
	if err != nil {
		fmt.Fprintln(stderr, "utxod import:", err)
		return 2
	}
	defer stopProfile()
	key, err := hex.DecodeString(*xorKey)
	if err != nil {
		fmt.Fprintln(stderr, "utxod import: --xor-key:", err)
		return 2
	}
	p, err := params.ByName(c.network)
	if err != nil {
		fmt.Fprintln(stderr, "utxod import:", err)
		return 2
	}
	// An import meets each signature once: as Core's ConnectBlock
	// (fCacheResults = fJustCheck), it never stores into the signature
	// cache, so its lookups of the empty cache are skipped too. The table
	// stays allocated, as a serving node's.
	c.sigCacheLookupOnly = true
	cs, closeStore, err := c.openChainstate(log, func(cfg *chainstate.Config) {
		cfg.MaxOrphanBytes = *orphanMB << 20
	})
	if err != nil {
		fmt.Fprintln(stderr, "utxod import:", err)
		return 2
	}
	// The final flush happens here: if it fails, blocks connected since the
	// last flush are not saved, so the import must not report success.
	defer func() {
		if err := closeStore(); err != nil {
			fmt.Fprintln(stderr, "utxod import: final flush failed; the datadir stays at its last flushed tip:", err)
			if code == 0 {
				code = 1
			}
		}
	}()

	var total int64
	for _, name := range files {
		if st, err := os.Stat(name); err == nil {
			total += st.Size()
		}
	}
	start := time.Now()
	if err := learnHeaders(cs, files, key, p.Magic, log); err != nil {
		fmt.Fprintln(stderr, "utxod import:", err)
		return 1
	}
	pr := newImportProgress(stderr, total, *progress, log)
	src := &blockSource{files: files, key: key, magic: p.Magic}
	defer src.close()
	rejected := false
	// Blocks are read, parsed and checked ahead on a second goroutine while
	// their scripts are assumed valid (with every script verified both
	// cores verify signatures, and reading ahead only costs); from the
	// first block whose scripts are verified, one block's scripts may still
	// be verifying while the next block connects.
	scfg := chainstate.StreamConfig{StopHeight: int32(*stopHeight), OwnedBlocks: true,
		AssumedPrefetch: chainstate.DefaultAssumedPrefetch, VerifiedDepth: chainstate.DefaultVerifiedDepth}
	raise, restore := spareP()
	scfg.OnVerified = raise
	defer restore()
	err = cs.ProcessStream(scfg, src.next, func(o chainstate.Outcome) bool {
		name, off := src.where(o.Tag)
		if o.Err != nil {
			reason := validate.Reason(o.Err)
			if reason == "" {
				reason = "error"
			}
			fmt.Fprintf(stderr, "utxod import: block %s height %d rejected: %s (%v) [%s offset %d]\n", o.Result.Hash, o.Result.Height, reason, o.Err, name, off)
			rejected = true
			return false
		}
		pr.add(1, o.Result.Txs, o.Result.Inputs, src.consumed(o.Tag), o.TipHeight)
		return true
	})
	pr.add(0, 0, 0, src.carry, cs.Tip().Height)
	if err != nil {
		pr.finish()
		fmt.Fprintln(stderr, "utxod import:", err)
		return 1
	}
	if rejected {
		pr.finish()
		return 1
	}
	pr.finish()
	// The flat files' fdatasyncs run while the tail below uses the CPU.
	cs.SyncAhead()
	// The blocks, parses and deltas of the import are garbage now. Collect
	// them before the digest's read-back and the final flush allocate, so
	// those reuse the memory instead of growing a heap whose goal the
	// import's garbage had doubled (bench/decisions.md).
	runtime.GC()
	if *memProfile != "" {
		if f, err := os.Create(*memProfile); err == nil {
			_ = pprof.WriteHeapProfile(f) // as of the collection just above
			f.Close()
		}
	}
	tip := cs.Tip()
	log.Info("import done", "blocks", pr.blocks, "txs", pr.txs, "inputs", pr.inputs, "height", tip.Height, "tip", tip.Hash,
		"seconds", time.Since(start).Seconds())
	if *asJSON {
		return printInfoJSON(cs, *hashType, "import", stdout, stderr)
	}
	return 0
}

// blockSource reads the blocks of several block files in order for
// Chainstate.ProcessStream. A block's tag is its sequence number; where and
// consumed look up the file, offset and size of blocks not yet reported.
type blockSource struct {
	files []string
	key   []byte
	magic [4]byte

	i     int // current file
	f     *os.File
	r     *wire.BlockFileReader
	end   int64 // end of the last block read in the current file
	carry int64 // bytes of finished files not yet attributed to a block
	seq   int64
	// mu guards read: next may run on the stream's reading goroutine
	// (StreamConfig.AssumedPrefetch) while where and consumed run in emit.
	mu   sync.Mutex
	read map[int64]blockPos
}

type blockPos struct {
	file  int
	off   int64 // offset of the block's framing in its file
	bytes int64 // file bytes this block accounts for in the progress meter
}

// next returns the next block in a fresh slice (StreamConfig.OwnedBlocks).
func (s *blockSource) next() ([]byte, int64, error) {
	for {
		if s.r == nil {
			if s.i >= len(s.files) {
				return nil, 0, io.EOF
			}
			f, err := os.Open(s.files[s.i])
			if err != nil {
				return nil, 0, err
			}
			s.f, s.end = f, 0
			s.r = wire.NewBlockFileReader(wire.NewXORReader(f, s.key), s.magic)
		}
		raw, off, err := s.r.NextOwned()
		if errors.Is(err, io.EOF) {
			s.carry += fileSize(s.f) - s.end
			s.close()
			s.i++
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", s.files[s.i], err)
		}
		end := off + int64(len(raw)) + 8
		s.mu.Lock()
		if s.read == nil {
			s.read = make(map[int64]blockPos)
		}
		s.seq++
		s.read[s.seq] = blockPos{file: s.i, off: off, bytes: s.carry + end - s.end}
		s.mu.Unlock()
		s.end, s.carry = end, 0
		return raw, s.seq, nil
	}
}

// where names the file and offset of a block.
func (s *blockSource) where(tag int64) (string, int64) {
	s.mu.Lock()
	p, ok := s.read[tag]
	s.mu.Unlock()
	if !ok {
		return "", 0
	}
	return s.files[p.file], p.off
}

// consumed is the number of file bytes a block accounts for; it forgets
// the block.
func (s *blockSource) consumed(tag int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.read[tag]
	delete(s.read, tag)
	return p.bytes
}

func (s *blockSource) close() {
	if s.f != nil {
		s.f.Close()
		s.f, s.r = nil, nil
	}
}

func fileSize(f *os.File) int64 {
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	return st.Size()
}

// importProgress shows a progress bar on a terminal and periodic log lines
// otherwise: height, blocks/s, tx/s, inputs/s and an ETA from bytes read.
type importProgress struct {
	bar                 *progressbar.ProgressBar
	log                 *slog.Logger
	every               time.Duration
	start, lastLog      time.Time
	blocks, txs, inputs int64
	done, total         int64
}

func newImportProgress(w io.Writer, total int64, every time.Duration, log *slog.Logger) *importProgress {
	p := &importProgress{log: log, every: every, start: time.Now(), lastLog: time.Now(), total: total}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionSetWidth(30),
		)
	}
	return p
}

func (p *importProgress) add(blocks, txs, ins int, bytes int64, height int32) {
	p.blocks += int64(blocks)
	p.txs += int64(txs)
	p.inputs += int64(ins)
	p.done += bytes
	el := time.Since(p.start).Seconds()
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("height %d  %.0f blk/s  %.0f tx/s  %.0f in/s", height,
			float64(p.blocks)/el, float64(p.txs)/el, float64(p.inputs)/el))
		_ = p.bar.Add64(bytes)
		return
	}
	if p.every > 0 && time.Since(p.lastLog) >= p.every {
		p.lastLog = time.Now()
		eta := time.Duration(0)
		if p.done > 0 && p.total > p.done {
			eta = time.Duration(float64(time.Since(p.start)) * float64(p.total-p.done) / float64(p.done)).Round(time.Second)
		}
		p.log.Info("import progress", "height", height, "blocks_per_s", int(float64(p.blocks)/el),
			"tx_per_s", int(float64(p.txs)/el), "inputs_per_s", int(float64(p.inputs)/el), "eta", eta.String())
	}
}

func (p *importProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		fmt.Fprintln(os.Stderr)
	}
}

// spareP returns raise, which gives the process one P more than GOMAXPROCS
// (unless the environment sets GOMAXPROCS), and restore, which puts the old
// value back if raise changed it. A signature verifier in a cgo call keeps
// its P until the runtime retakes it; the spare lets the connecting
// goroutine run meanwhile. Since the workers reschedule
// (validate.yieldEvery) it no longer buys speed, but removing it cost
// peak RSS (bench/decisions.md).
func spareP() (raise, restore func()) {
	prev := 0
	raise = func() {
		if prev == 0 && os.Getenv("GOMAXPROCS") == "" {
			prev = runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
		}
	}
	restore = func() {
		if prev > 0 {
			runtime.GOMAXPROCS(prev)
			prev = 0
		}
	}
	return raise, restore
}
