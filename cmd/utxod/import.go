package main

import (
	"context"
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

	"utxod/chainstate"
	"utxod/internal/progress"
	"utxod/node"
	"utxod/params"
	"utxod/validate"
	"utxod/wire"
)

// importFlags are the flags of utxod import on top of commonFlags, and its
// block files.
type importFlags struct {
	commonFlags
	asJSON       bool
	hashType     string
	stopHeight   int
	xorKey       string
	orphanMB     int
	memProfile   string
	progress     time.Duration
	startProfile func() (stop func(), err error)
	files        []string
	key          []byte // --xor-key decoded
}

const importUsage = `Usage: utxod import --network N [--datadir D --backend B] [--json] FILE...

Reads Core's block-file framing (4-byte network magic, 4-byte LE length, block;
zero padding skipped; blocks may be out of order: they wait for their parent),
fully validates and connects the blocks. Headers first, as Core syncs: the
80-byte header of every record of every file is read and checked before any
block connects, so --assume-valid (default: the network's) knows the best
header; the JSON's assume_valid and assumed_valid_height say what was
skipped. With --datadir the chainstate is persistent and a later import resumes where this one stopped; without it the
chainstate lives in memory. A rejected block stops the import with exit status
1 and a line naming its hash, height and Core reject reason.

Flags:`

func (f *importFlags) register(fs *flag.FlagSet) {
	f.commonFlags.register(fs)
	f.registerIndex(fs)
	fs.BoolVar(&f.asJSON, "json", false, "print the final chainstate (gettxoutsetinfo fields, as GET /v1/chainstate returns) as JSON on stdout")
	fs.StringVar(&f.hashType, "hash-type", "hash_serialized_3", "digests in the JSON: hash_serialized_3 (also muhash), muhash or none")
	fs.IntVar(&f.stopHeight, "stop-height", -1, "stop once the active chain reaches this height")
	fs.StringVar(&f.xorKey, "xor-key", "", "hex XOR key of Core 28+ obfuscated block files (the content of blocks/xor.dat)")
	fs.IntVar(&f.orphanMB, "orphan-mb", 2048, "memory for blocks whose parent has not been read yet (out-of-order block files)")
	f.startProfile = profileFlags(fs)
	fs.StringVar(&f.memProfile, "memprofile", "", "write a heap profile (in-use memory at the end of the import, before the final flush) to this file")
	fs.DurationVar(&f.progress, "progress", progress.DefaultEvery, "interval of progress log lines when stderr is not a terminal (0: off)")
}

func cmdImport(args []string, stdout, stderr io.Writer) (code int) {
	var f importFlags
	log, code, done := f.parse(args, stdout, stderr)
	if done {
		return code
	}
	stopProfile, err := f.startProfile()
	if err != nil {
		return fail(stderr, "import", 2, err)
	}
	defer stopProfile()
	// An import meets each signature once: as Core's ConnectBlock
	// (fCacheResults = fJustCheck), it never stores into the signature
	// cache, so its lookups of the empty cache are skipped too. The table
	// stays allocated, as a serving node's.
	n, err := f.openNode(context.Background(), log, func(o *node.Options) {
		o.SigCacheLookupOnly = true
		o.MaxOrphanBytes = f.orphanMB << 20
	})
	if err != nil {
		return fail(stderr, "import", 2, err)
	}
	// The final flush happens here: if it fails, blocks connected since the
	// last flush are not saved, so the import must not report success.
	defer func() {
		if err := n.Close(); err != nil {
			fmt.Fprintln(stderr, "utxod import: final flush failed; the datadir stays at its last flushed tip:", err)
			if code == 0 {
				code = 1
			}
		}
	}()
	return f.run(n.Chain(), n.Params(), log, stdout, stderr)
}

// parse parses and checks the flags and returns the logger; done says the
// command ends with code (--help, a usage error).
func (f *importFlags) parse(args []string, stdout, stderr io.Writer) (log *slog.Logger, code int, done bool) {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), importUsage)
		fs.PrintDefaults()
	}
	if f.files, code, done = parseArgs(fs, args, true, stdout, stderr); done {
		return nil, code, true
	}
	if len(f.files) == 0 {
		fmt.Fprintln(stderr, "utxod import: no block files given (see utxod import --help)")
		return nil, 2, true
	}
	err := f.check()
	if err == nil {
		err = checkHashType(f.hashType)
	}
	if err == nil {
		log, err = f.logger(stderr)
	}
	if err == nil {
		if f.key, err = hex.DecodeString(f.xorKey); err != nil {
			err = fmt.Errorf("--xor-key: %w", err)
		}
	}
	if err != nil {
		return nil, fail(stderr, "import", 2, err), true
	}
	return log, 0, false
}

// run imports the files into cs: the headers first, then the blocks, then
// the digests.
func (f *importFlags) run(cs *chainstate.Chainstate, p *params.Params, log *slog.Logger, stdout, stderr io.Writer) int {
	var total int64
	for _, name := range f.files {
		if st, err := os.Stat(name); err == nil {
			total += st.Size()
		}
	}
	start := time.Now()
	if err := learnHeaders(cs, f.files, f.key, p.Magic, log); err != nil {
		return fail(stderr, "import", 1, err)
	}
	pr := progress.New(progress.Config{What: "import", Unit: "bytes", Total: total, Every: f.progress, Out: stderr, Log: log,
		Rates: []string{"blocks", "tx", "inputs"}})
	raise, restore := spareP()
	defer restore()
	if code := f.connect(cs, p, pr, raise, stderr); code != 0 {
		return code
	}
	f.afterBlocks(cs)
	tip := cs.Tip()
	log.Info("import done", "blocks", pr.Count(0), "txs", pr.Count(1), "inputs", pr.Count(2), "height", tip.Height, "tip", tip.Hash,
		"seconds", time.Since(start).Seconds())
	if f.asJSON {
		return printInfoJSON(cs, f.hashType, "import", stdout, stderr)
	}
	return 0
}

// connect streams the blocks of the files through cs. Blocks are read,
// parsed and checked ahead on a second goroutine while their scripts are
// assumed valid (with every script verified both cores verify signatures,
// and reading ahead only costs); from the first block whose scripts are
// verified (when raise gives the process a spare P), one block's scripts
// may still be verifying while the next block connects.
func (f *importFlags) connect(cs *chainstate.Chainstate, p *params.Params, pr *progress.Meter, raise func(), stderr io.Writer) int {
	src := &blockSource{files: f.files, key: f.key, magic: p.Magic}
	defer src.close()
	rejected := false
	scfg := chainstate.StreamConfig{StopHeight: int32(f.stopHeight), OwnedBlocks: true,
		AssumedPrefetch: chainstate.DefaultAssumedPrefetch, VerifiedDepth: chainstate.DefaultVerifiedDepth, OnVerified: raise}
	err := cs.ProcessStream(scfg, src.next, func(o chainstate.Outcome) bool {
		if o.Err != nil {
			name, off := src.where(o.Tag)
			reason := validate.Reason(o.Err)
			if reason == "" {
				reason = "error"
			}
			fmt.Fprintf(stderr, "utxod import: block %s height %d rejected: %s (%v) [%s offset %d]\n", o.Result.Hash, o.Result.Height, reason, o.Err, name, off)
			rejected = true
			return false
		}
		pr.Note("height", o.TipHeight)
		pr.Add(src.consumed(o.Tag), 1, int64(o.Result.Txs), int64(o.Result.Inputs))
		return true
	})
	pr.Note("height", cs.Tip().Height)
	pr.Add(src.carry)
	pr.Finish()
	switch {
	case err != nil:
		return fail(stderr, "import", 1, err)
	case rejected:
		return 1
	}
	return 0
}

// afterBlocks prepares the tail of the import: the flat files' fdatasyncs
// start, the import's garbage is collected, the heap profile is written.
func (f *importFlags) afterBlocks(cs *chainstate.Chainstate) {
	// The flat files' fdatasyncs run while the tail below uses the CPU.
	cs.SyncAhead()
	// The blocks, parses and deltas of the import are garbage now. Collect
	// them before the digest's read-back and the final flush allocate, so
	// those reuse the memory instead of growing a heap whose goal the
	// import's garbage had doubled (bench/decisions.md).
	runtime.GC()
	if f.memProfile != "" {
		if mf, err := os.Create(f.memProfile); err == nil {
			_ = pprof.WriteHeapProfile(mf) // as of the collection just above
			mf.Close()
		}
	}
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
