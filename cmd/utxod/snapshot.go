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
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"utxod/backends"
	"utxod/chainstate"
	"utxod/internal/progress"
	"utxod/node"
	"utxod/params"
	"utxod/snapshot"
	"utxod/store/kvstore/shindex"
	"utxod/utxo"
	"utxod/wire"
)

const snapshotUsage = `Usage: utxod snapshot <dump|verify|load> [flags]

Bitcoin Core UTXO snapshots (the file of dumptxoutset and loadtxoutset,
format version 2), byte-identical to Core's for the same UTXO set.

  utxod snapshot dump --datadir D [--backend B] -o FILE
      write the datadir's UTXO set at its tip (the datadir must not be in
      use; a running server serves the same file at GET /v1/snapshot)
  utxod snapshot verify FILE [--expect-hash H] [--json]
      read FILE strictly and print its network, base block, coin count,
      hash_serialized_3, MuHash and total amount; check the base against
      the network's assumeutxo table (Core's m_assumeutxo_data)
  utxod snapshot load FILE --datadir D --backend B [--expect-hash H] [--headers FILE]...
      build a new datadir at the snapshot's base block, refusing a file
      whose content hash does not match the table (or --expect-hash for a
      chain the table lacks); with --headers, blocks from base+1 connect
      with full validation

Run 'utxod snapshot <command> --help' for its flags.
`

func cmdSnapshot(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, snapshotUsage)
		return 2
	}
	switch args[0] {
	case "dump":
		return cmdSnapshotDump(args[1:], stdout, stderr)
	case "verify":
		return cmdSnapshotVerify(args[1:], stdout, stderr)
	case "load":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return cmdSnapshotLoad(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, snapshotUsage)
		return 0
	}
	fmt.Fprintf(stderr, "utxod snapshot: unknown command %q\n\n%s", args[0], snapshotUsage)
	return 2
}

// hashFlag is an optional display-order hash flag.
type hashFlag struct{ h *wire.Hash }

func (f *hashFlag) String() string {
	if f.h == nil {
		return ""
	}
	return f.h.String()
}

func (f *hashFlag) Set(s string) error {
	h, err := wire.ParseHash(s)
	if err != nil {
		return fmt.Errorf("want 64 hex digits (display order): %w", err)
	}
	f.h = &h
	return nil
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// snapshotNetwork is the --network of verify and load: empty takes the
// snapshot's own.
func snapshotNetwork(name string) (*params.Params, error) {
	if name == "" {
		return nil, nil
	}
	return params.ByName(name)
}

// dumpResult is the answer of snapshot dump, with the field names of Core's
// dumptxoutset result.
type dumpResult struct {
	CoinsWritten uint64    `json:"coins_written"`
	BaseHash     wire.Hash `json:"base_hash"`
	BaseHeight   int32     `json:"base_height"`
	Path         string    `json:"path"`
	TxOutSetHash *string   `json:"txoutset_hash,omitempty"`
	NChainTx     *uint64   `json:"nchaintx,omitempty"`
}

// dumpFlags are the flags of utxod snapshot dump.
type dumpFlags struct {
	commonFlags
	out          string
	asJSON       bool
	startProfile func() (stop func(), err error)
}

func (f *dumpFlags) register(fs *flag.FlagSet) {
	f.commonFlags.register(fs)
	fs.StringVar(&f.out, "o", "", "output file, which must not exist (\"-\": standard output); written as FILE.incomplete and renamed when complete")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as JSON (Core's dumptxoutset field names)")
	f.startProfile = profileFlags(fs)
}

func cmdSnapshotDump(args []string, stdout, stderr io.Writer) int {
	var f dumpFlags
	log, code, done := f.parse(args, stdout, stderr)
	if done {
		return code
	}
	stopProfile, err := f.startProfile()
	if err != nil {
		return fail(stderr, "snapshot dump", 2, err)
	}
	defer stopProfile()
	n, err := f.openNode(context.Background(), log)
	if err != nil {
		return fail(stderr, "snapshot dump", 1, err)
	}
	defer n.Close()
	res, err := f.dump(n.Chain(), n.Params(), log, stdout)
	if err != nil {
		return fail(stderr, "snapshot dump", 1, err)
	}
	if f.out == "-" {
		return 0
	}
	if f.asJSON {
		return printJSON(res, "snapshot", stdout, stderr)
	}
	fmt.Fprintf(stdout, "coins_written      %d\nbase_hash          %s\nbase_height        %d\npath               %s\n", res.CoinsWritten, res.BaseHash, res.BaseHeight, res.Path)
	return 0
}

// parse parses and checks the flags and returns the logger; done says the
// command ends with code (--help, a usage error, an existing -o).
func (f *dumpFlags) parse(args []string, stdout, stderr io.Writer) (log *slog.Logger, code int, done bool) {
	fs := flag.NewFlagSet("snapshot dump", flag.ContinueOnError)
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: utxod snapshot dump --datadir D [--backend B] [--network N] -o FILE [--json]\n\nWrites the UTXO set at the datadir's tip in Core's snapshot format.\n\nFlags:")
		fs.PrintDefaults()
	}
	if pos, code, done := parseArgs(fs, args, false, stdout, stderr); done {
		return nil, code, true
	} else if len(pos) != 0 {
		fmt.Fprintf(stderr, "utxod snapshot dump: unexpected argument %q (see utxod snapshot dump --help)\n", pos[0])
		return nil, 2, true
	}
	if f.datadir == "" || f.out == "" {
		fmt.Fprintln(stderr, "utxod snapshot dump: --datadir and -o are required (see utxod snapshot dump --help)")
		return nil, 2, true
	}
	if err := f.check(); err != nil {
		return nil, fail(stderr, "snapshot dump", 2, err), true
	}
	if f.out != "-" {
		// Core's dumptxoutset refuses an existing path too.
		if _, err := os.Stat(f.out); err == nil {
			fmt.Fprintf(stderr, "utxod snapshot dump: %s already exists; move it out of the way first\n", f.out)
			return nil, 1, true
		}
	}
	log, err := f.logger(stderr)
	if err != nil {
		return nil, fail(stderr, "snapshot dump", 2, err), true
	}
	return log, 0, false
}

// dump writes the coins of cs at its tip to -o (or stdout for "-").
func (f *dumpFlags) dump(cs *chainstate.Chainstate, p *params.Params, log *slog.Logger, stdout io.Writer) (dumpResult, error) {
	snap, err := cs.SnapshotCoins()
	if err != nil {
		return dumpResult{}, err
	}
	defer snap.Close()
	base, height := snap.Stats.BestBlock, int32(snap.Stats.Height)
	meta := snapshot.Metadata{MessageStart: p.Magic, BaseHash: base, Coins: snap.Stats.TxOuts}
	start := time.Now()
	var n uint64
	if f.out == "-" {
		n, err = snapshot.Dump(stdout, meta, snap.Scanner)
	} else {
		n, err = dumpToFile(f.out, meta, snap.Scanner)
	}
	if err != nil {
		return dumpResult{}, err
	}
	log.Info("snapshot written", "coins", n, "seconds", time.Since(start).Seconds(),
		"coins_per_s", int(float64(n)/max(time.Since(start).Seconds(), 1e-9)))
	res := dumpResult{CoinsWritten: n, BaseHash: base, BaseHeight: height, Path: f.out}
	if e, ok := p.AssumeUTXOForBlockHash(base); ok {
		res.NChainTx = &e.ChainTxCount
	}
	return res, nil
}

// dumpToFile writes the snapshot to path via path.incomplete, synced and
// renamed only when complete (a failure leaves no file at path).
func dumpToFile(path string, meta snapshot.Metadata, src snapshot.Source) (uint64, error) {
	tmp := path + ".incomplete"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := snapshot.Dump(f, meta, src)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return n, err
	}
	return n, nil
}

// summaryJSON is the JSON answer of verify and load.
type summaryJSON struct {
	Network    string    `json:"network"`
	BaseHash   wire.Hash `json:"base_hash"`
	BaseHeight *int32    `json:"base_height"`
	// CoinsCount is the header's count; TxOuts the distinct coins read.
	CoinsCount      uint64      `json:"coins_count"`
	TxOuts          uint64      `json:"txouts"`
	Transactions    uint64      `json:"transactions"`
	BogoSize        uint64      `json:"bogosize"`
	TotalAmount     utxo.Amount `json:"total_amount"`
	TotalAmountSat  int64       `json:"total_amount_sat"`
	HashSerialized3 wire.Hash   `json:"hash_serialized_3"`
	MuHash          *wire.Hash  `json:"muhash,omitempty"`
	MaxCoinHeight   uint32      `json:"max_coin_height"`
	Canonical       bool        `json:"canonical"`
	NonCanonical    string      `json:"non_canonical,omitempty"`
	// AssumeUTXO is the table entry of the base block (null: none).
	AssumeUTXO *assumeUTXOJSON `json:"assumeutxo"`
	// Expected is the hash_serialized_3 checked against (the table's or
	// --expect-hash); Matches whether the file has it (null: nothing to
	// check against).
	Expected *wire.Hash `json:"expected_hash_serialized_3"`
	Matches  *bool      `json:"matches"`
	Datadir  string     `json:"datadir,omitempty"`
}

type assumeUTXOJSON struct {
	Height          int32     `json:"height"`
	BlockHash       wire.Hash `json:"blockhash"`
	HashSerialized3 wire.Hash `json:"hash_serialized_3"`
	NChainTx        uint64    `json:"nchaintx"`
}

func newSummaryJSON(s *snapshot.Summary, expect *wire.Hash) summaryJSON {
	info := s.Info()
	j := summaryJSON{Network: s.Network.Name, BaseHash: s.Metadata.BaseHash, CoinsCount: s.Metadata.Coins,
		TxOuts: info.TxOuts, Transactions: info.Transactions, BogoSize: info.BogoSize,
		TotalAmount: info.TotalAmount, TotalAmountSat: info.TotalAmountSat, HashSerialized3: s.HashSerialized3,
		MuHash: info.MuHash, MaxCoinHeight: s.MaxHeight, Canonical: s.NonCanonical == "", NonCanonical: s.NonCanonical}
	if s.HeightKnown {
		h := int32(s.Stats.Height)
		j.BaseHeight = &h
	}
	if e := s.Table; e != nil {
		j.AssumeUTXO = &assumeUTXOJSON{Height: e.Height, BlockHash: e.BlockHash, HashSerialized3: e.HashSerialized, NChainTx: e.ChainTxCount}
		h := e.HashSerialized
		j.Expected = &h
	}
	if expect != nil {
		j.Expected = expect
	}
	if j.Expected != nil {
		m := *j.Expected == s.HashSerialized3
		j.Matches = &m
	}
	return j
}

func printSummary(w io.Writer, j summaryJSON) {
	height := "unknown (not in the assumeutxo table; give --height)"
	if j.BaseHeight != nil {
		height = strconv.Itoa(int(*j.BaseHeight))
	}
	fmt.Fprintf(w, "network            %s\nbase_hash          %s\nbase_height        %s\ncoins              %d\ntransactions       %d\nbogosize           %d\ntotal_amount       %s BTC (%d sat)\nhash_serialized_3  %s\n",
		j.Network, j.BaseHash, height, j.TxOuts, j.Transactions, j.BogoSize, j.TotalAmount, j.TotalAmountSat, j.HashSerialized3)
	if j.MuHash != nil {
		fmt.Fprintf(w, "muhash             %s\n", j.MuHash)
	}
	fmt.Fprintf(w, "max_coin_height    %d\n", j.MaxCoinHeight)
	if j.Canonical {
		fmt.Fprintln(w, "canonical          yes (byte-identical to what dumptxoutset writes for these coins)")
	} else {
		fmt.Fprintf(w, "canonical          no: %s (Core reads it the same way)\n", j.NonCanonical)
	}
	switch {
	case j.AssumeUTXO != nil && j.Matches != nil && *j.Matches:
		fmt.Fprintf(w, "assumeutxo         matches the table entry at height %d (nchaintx %d)\n", j.AssumeUTXO.Height, j.AssumeUTXO.NChainTx)
	case j.AssumeUTXO != nil:
		fmt.Fprintf(w, "assumeutxo         DOES NOT MATCH the table entry at height %d: expected %s\n", j.AssumeUTXO.Height, j.AssumeUTXO.HashSerialized3)
	case j.Matches != nil && *j.Matches:
		fmt.Fprintln(w, "assumeutxo         base not in the table; matches --expect-hash")
	case j.Matches != nil:
		fmt.Fprintf(w, "assumeutxo         base not in the table; DOES NOT MATCH --expect-hash %s\n", j.Expected)
	default:
		fmt.Fprintln(w, "assumeutxo         base not in the table (give --expect-hash to check the content hash)")
	}
}

// snapshotFlags are the flags verify and load share.
type snapshotFlags struct {
	network    string
	expectHash hashFlag
	height     int
	asJSON     bool
	logLevel   string
	logFormat  string
	progress   time.Duration
}

func (f *snapshotFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.network, "network", "", "the node's network (main, testnet3, testnet4, signet, regtest); empty: the snapshot's own")
	fs.Var(&f.expectHash, "expect-hash", "hash_serialized_3 the coins must have (display hex), for a chain the assumeutxo table lacks (regtest, a private chain)")
	fs.IntVar(&f.height, "height", 0, "the base block's height, when neither the assumeutxo table nor --headers gives it")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.DurationVar(&f.progress, "progress", progress.DefaultEvery, "interval of progress log lines when stderr is not a terminal (0: off)")
}

func (f *snapshotFlags) logger(w io.Writer) (*slog.Logger, error) {
	c := commonFlags{logLevel: f.logLevel, logFormat: f.logFormat}
	return c.logger(w)
}

// meter is the progress meter of the coins read (verify, load).
func (f *snapshotFlags) meter(what string, stderr io.Writer, log *slog.Logger) *progress.Meter {
	return progress.New(progress.Config{What: what, Unit: "coins", Every: f.progress, Out: stderr, Log: log})
}

const verifyUsage = `Usage: utxod snapshot verify FILE [--network N] [--expect-hash H] [--height H] [--json]

Reads FILE strictly, as Core's loadtxoutset does (same checks, same
messages), builds nothing, and prints the network, base block, coin count,
hash_serialized_3, MuHash and total amount. The exit status is 0 when the
content hash matches the assumeutxo table entry of the base (or
--expect-hash), 1 when it does not, when the base is in no table and no
--expect-hash is given, or when the file is bad.

Flags:`

func cmdSnapshotVerify(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("snapshot verify", flag.ContinueOnError)
	var f snapshotFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), verifyUsage)
		fs.PrintDefaults()
	}
	files, code, done := parseArgs(fs, args, true, stdout, stderr)
	if done {
		return code
	}
	if len(files) != 1 {
		fmt.Fprintln(stderr, "utxod snapshot verify: want one FILE (see utxod snapshot verify --help)")
		return 2
	}
	log, err := f.logger(stderr)
	if err != nil {
		return fail(stderr, "snapshot verify", 2, err)
	}
	network, err := snapshotNetwork(f.network)
	if err != nil {
		return fail(stderr, "snapshot verify", 2, err)
	}
	file, err := os.Open(files[0])
	if err != nil {
		return fail(stderr, "snapshot verify", 1, err)
	}
	defer file.Close()
	pr := f.meter("verify", stderr, log)
	sum, err := snapshot.Verify(file, snapshot.VerifyOptions{Network: network, Height: int32(f.height), Progress: pr.Report})
	pr.Finish()
	if err != nil {
		fmt.Fprintf(stderr, "utxod snapshot verify: %s: %v\n", files[0], err)
		return 1
	}
	return f.verdict(files[0], sum, stdout, stderr)
}

// verdict prints the summary of the file at name and returns the exit
// status: 0 when its content hash matches the table or --expect-hash.
func (f *snapshotFlags) verdict(name string, sum *snapshot.Summary, stdout, stderr io.Writer) int {
	j := newSummaryJSON(sum, f.expectHash.h)
	if f.asJSON {
		if code := printJSON(j, "snapshot", stdout, stderr); code != 0 {
			return code
		}
	} else {
		printSummary(stdout, j)
	}
	switch {
	case j.Matches == nil:
		fmt.Fprintf(stderr, "utxod snapshot verify: %s: assumeutxo block hash in snapshot metadata not recognized (hash: %s); give --expect-hash to check the content hash\n", name, sum.Metadata.BaseHash)
		return 1
	case !*j.Matches:
		fmt.Fprintf(stderr, "utxod snapshot verify: %s: Bad snapshot content hash: expected %s, got %s\n", name, j.Expected, sum.HashSerialized3)
		return 1
	}
	return 0
}

// loadFlags are the flags of utxod snapshot load, and its file.
type loadFlags struct {
	snapshotFlags
	datadir      string
	backend      string
	cacheMB      int
	headers      listFlag
	xorKey       string
	index        string // --index: "" or shindex.Name
	startProfile func() (stop func(), err error)
	file         string
	key          []byte // --xor-key decoded
}

const loadUsage = `Usage: utxod snapshot load FILE --datadir D --backend B [--network N] [--expect-hash H] [--headers FILE|URL]... [--height H] [--index scripthash] [--json]

Builds a new datadir at the snapshot's base block: the coins, the
statistics with MuHash, the tip. The file is checked as Core's
loadtxoutset checks it (same messages) and its hash_serialized_3 must equal
the network's assumeutxo table entry for the base, or --expect-hash for a
chain the table lacks. The store is built in D.snapshot-loading and renamed
to D only when complete and verified; a bad file or an interruption leaves
nothing. With --headers (files, or a node's REST interface at http://host:port)
the block index holds the chain from genesis to the base and blocks from
base+1 connect with full validation; without, the state answers lookups and
digests and refuses blocks until it is reloaded with the headers. With
--index scripthash the scripthash index is built in the same pass.

Flags:`

func (f *loadFlags) register(fs *flag.FlagSet) {
	f.snapshotFlags.register(fs)
	fs.StringVar(&f.datadir, "datadir", "", "the new data directory (must not exist or be empty)")
	fs.StringVar(&f.backend, "backend", defaultBackend, "store: pebble, rocksdb or bbolt")
	fs.IntVar(&f.cacheMB, "cache-mb", defaultCacheMB, "store cache budget in MiB (a quarter of it is the store's block cache)")
	fs.Var(&f.headers, "headers", "the header chain from genesis to the base: a file (Core block files, blk*.dat framing, or raw 80-byte headers as Core's REST /rest/headers/<count>/<hash>.bin returns them) or the http:// or https:// URL of a node's REST interface (bitcoind -rest, another utxod) to fetch it from; repeatable")
	fs.StringVar(&f.xorKey, "xor-key", "", "hex XOR key of Core 28+ obfuscated block files given to --headers (blocks/xor.dat)")
	fs.StringVar(&f.index, "index", "", "secondary index to build in the same pass over the coins: "+shindex.Name+" (as utxod index build would)")
	f.startProfile = profileFlags(fs)
}

func cmdSnapshotLoad(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f loadFlags
	log, network, code, done := f.parse(args, stdout, stderr)
	if done {
		return code
	}
	stopProfile, err := f.startProfile()
	if err != nil {
		return fail(stderr, "snapshot load", 2, err)
	}
	defer stopProfile()
	file, err := os.Open(f.file)
	if err != nil {
		return fail(stderr, "snapshot load", 1, err)
	}
	defer file.Close()
	hs, err := f.readHeaders(ctx, file, network, log)
	if err != nil {
		return fail(stderr, "snapshot load", 1, err)
	}
	sum, err := f.load(ctx, file, network, hs, log, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "utxod snapshot load: %s: %v\n", f.file, err)
		if errors.Is(err, snapshot.ErrBaseUnknown) {
			fmt.Fprintln(stderr, "utxod snapshot load: for a chain the assumeutxo table lacks (regtest, a private chain) give the expected hash_serialized_3 with --expect-hash")
		}
		return 1
	}
	j := newSummaryJSON(sum, f.expectHash.h)
	j.Datadir = f.datadir
	if f.asJSON {
		return printJSON(j, "snapshot", stdout, stderr)
	}
	printSummary(stdout, j)
	if hs == nil {
		fmt.Fprintln(stdout, "headers            none: lookups and digests work; connecting blocks needs a reload with --headers")
	} else {
		fmt.Fprintf(stdout, "headers            genesis to the base (%d); blocks from %d on connect with full validation\n", sum.Stats.Height, sum.Stats.Height+1)
	}
	fmt.Fprintf(stdout, "datadir            %s (%s)\n", f.datadir, f.backend)
	return 0
}

// parse parses and checks the flags and returns the logger and the
// --network (nil: the snapshot's); done says the command ends with code
// (--help, a usage error).
func (f *loadFlags) parse(args []string, stdout, stderr io.Writer) (log *slog.Logger, network *params.Params, code int, done bool) {
	fs := flag.NewFlagSet("snapshot load", flag.ContinueOnError)
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), loadUsage)
		fs.PrintDefaults()
	}
	files, code, done := parseArgs(fs, args, true, stdout, stderr)
	if done {
		return nil, nil, code, true
	}
	if len(files) != 1 || f.datadir == "" {
		fmt.Fprintln(stderr, "utxod snapshot load: want one FILE and --datadir (see utxod snapshot load --help)")
		return nil, nil, 2, true
	}
	f.file = files[0]
	if err := backends.Available(f.backend); err != nil {
		fmt.Fprintf(stderr, "utxod snapshot load: --backend %s: %v\n", f.backend, err)
		return nil, nil, 2, true
	}
	if f.cacheMB < 0 {
		fmt.Fprintf(stderr, "utxod snapshot load: --cache-mb: must not be negative, got %d\n", f.cacheMB)
		return nil, nil, 2, true
	}
	if f.index != "" && f.index != shindex.Name {
		fmt.Fprintf(stderr, "utxod snapshot load: --index %s: the one index a load builds is %s\n", f.index, shindex.Name)
		return nil, nil, 2, true
	}
	log, err := f.logger(stderr)
	if err == nil {
		network, err = snapshotNetwork(f.network)
	}
	if err == nil {
		if f.key, err = hex.DecodeString(f.xorKey); err != nil {
			err = fmt.Errorf("--xor-key: %w", err)
		}
	}
	if err != nil {
		return nil, nil, fail(stderr, "snapshot load", 2, err), true
	}
	return log, network, 0, false
}

// readHeaders reads the --headers files (nil without any) on the
// snapshot's network: network, or the one file's metadata names.
func (f *loadFlags) readHeaders(ctx context.Context, file io.ReadSeeker, network *params.Params, log *slog.Logger) (*snapshot.HeaderSet, error) {
	if len(f.headers) == 0 {
		return nil, nil
	}
	meta, n, err := snapshot.ReadMetadata(file, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.file, err)
	}
	if network == nil {
		network = n
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	hs := snapshot.NewHeaderSet(network)
	for _, name := range f.headers {
		if snapshot.IsURL(name) { // a node's REST interface: genesis to the base
			if err := hs.Fetch(ctx, name, meta.BaseHash, nil); err != nil {
				return nil, err
			}
			continue
		}
		hf, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		err = hs.Read(wire.NewXORReader(hf, f.key))
		hf.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	log.Info("headers read", "headers", hs.Len())
	return hs, nil
}

// load builds the datadir from file.
func (f *loadFlags) load(ctx context.Context, file io.Reader, network *params.Params, hs *snapshot.HeaderSet, log *slog.Logger, stderr io.Writer) (*snapshot.Summary, error) {
	pr := f.meter("load", stderr, log)
	limitMemory(f.cacheMB, f.backend)
	start := time.Now()
	sum, err := snapshot.Load(ctx, file, snapshot.LoadConfig{
		Network: network, ExpectHash: f.expectHash.h, Headers: hs, Height: int32(f.height),
		Backend: f.backend, Datadir: f.datadir,
		KVOptions: node.BackendOptions(f.backend, int64(f.cacheMB)<<20, log),
		Progress:  pr.Report, Log: log,
		Index: f.index == shindex.Name,
	})
	pr.Finish()
	if err != nil {
		return nil, err
	}
	el := time.Since(start).Seconds()
	log.Info("snapshot load done", "coins", sum.Stats.TxOuts, "seconds", el, "coins_per_s", int(float64(sum.Stats.TxOuts)/max(el, 1e-9)))
	return sum, nil
}
