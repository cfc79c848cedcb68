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

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"utxod/backends"
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

func cmdSnapshotDump(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("snapshot dump", flag.ContinueOnError)
	var c commonFlags
	c.register(fs)
	out := fs.String("o", "", "output file, which must not exist (\"-\": standard output); written as FILE.incomplete and renamed when complete")
	asJSON := fs.Bool("json", false, "print the result as JSON (Core's dumptxoutset field names)")
	startProfile := profileFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: utxod snapshot dump --datadir D [--backend B] [--network N] -o FILE [--json]\n\nWrites the UTXO set at the datadir's tip in Core's snapshot format.\n\nFlags:")
		fs.PrintDefaults()
	}
	if pos, code, done := parseArgs(fs, args, false, stdout, stderr); done {
		return code
	} else if len(pos) != 0 {
		fmt.Fprintf(stderr, "utxod snapshot dump: unexpected argument %q (see utxod snapshot dump --help)\n", pos[0])
		return 2
	}
	if c.datadir == "" || *out == "" {
		fmt.Fprintln(stderr, "utxod snapshot dump: --datadir and -o are required (see utxod snapshot dump --help)")
		return 2
	}
	if err := c.check(); err != nil {
		fmt.Fprintln(stderr, "utxod snapshot dump:", err)
		return 2
	}
	if *out != "-" {
		// Core's dumptxoutset refuses an existing path too.
		if _, err := os.Stat(*out); err == nil {
			fmt.Fprintf(stderr, "utxod snapshot dump: %s already exists; move it out of the way first\n", *out)
			return 1
		}
	}
	log, err := c.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "utxod snapshot dump:", err)
		return 2
	}
	p, err := params.ByName(c.network)
	if err != nil {
		fmt.Fprintln(stderr, "utxod snapshot dump:", err)
		return 2
	}
	stopProfile, err := startProfile()
	if err != nil {
		fmt.Fprintln(stderr, "utxod snapshot dump:", err)
		return 2
	}
	defer stopProfile()
	cs, closeStore, err := c.openChainstate(log)
	if err != nil {
		fmt.Fprintln(stderr, "utxod snapshot dump:", err)
		return 1
	}
	defer closeStore()
	snap, err := cs.SnapshotCoins()
	if err != nil {
		fmt.Fprintln(stderr, "utxod snapshot dump:", err)
		return 1
	}
	defer snap.Close()
	base, height := snap.Stats.BestBlock, int32(snap.Stats.Height)
	meta := snapshot.Metadata{MessageStart: p.Magic, BaseHash: base, Coins: snap.Stats.TxOuts}
	start := time.Now()
	var n uint64
	if *out == "-" {
		n, err = snapshot.Dump(stdout, meta, snap.Scanner)
	} else {
		n, err = dumpToFile(*out, meta, snap.Scanner)
	}
	if err != nil {
		fmt.Fprintln(stderr, "utxod snapshot dump:", err)
		return 1
	}
	log.Info("snapshot written", "coins", n, "seconds", time.Since(start).Seconds(),
		"coins_per_s", int(float64(n)/max(time.Since(start).Seconds(), 1e-9)))
	res := dumpResult{CoinsWritten: n, BaseHash: base, BaseHeight: height, Path: *out}
	if e, ok := p.AssumeUTXOForBlockHash(base); ok {
		res.NChainTx = &e.ChainTxCount
	}
	if *out == "-" {
		return 0
	}
	if *asJSON {
		return printJSON(res, "snapshot", stdout, stderr)
	}
	fmt.Fprintf(stdout, "coins_written      %d\nbase_hash          %s\nbase_height        %d\npath               %s\n", res.CoinsWritten, res.BaseHash, res.BaseHeight, res.Path)
	return 0
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
	fs.DurationVar(&f.progress, "progress", 10*time.Second, "interval of progress log lines when stderr is not a terminal (0: off)")
}

func (f *snapshotFlags) logger(w io.Writer) (*slog.Logger, error) {
	c := commonFlags{logLevel: f.logLevel, logFormat: f.logFormat}
	return c.logger(w)
}

// coinProgress shows the coins read: a bar on a terminal, log lines
// otherwise.
type coinProgress struct {
	bar     *progressbar.ProgressBar
	log     *slog.Logger
	what    string
	every   time.Duration
	start   time.Time
	lastLog time.Time
}

func newCoinProgress(w io.Writer, what string, every time.Duration, log *slog.Logger) *coinProgress {
	p := &coinProgress{log: log, what: what, every: every, start: time.Now(), lastLog: time.Now()}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions64(-1, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionSetWidth(30), progressbar.OptionShowIts(), progressbar.OptionSetItsString("coins"))
	}
	return p
}

func (p *coinProgress) update(done, total uint64) {
	if p.bar != nil {
		if p.bar.GetMax64() != int64(total) {
			p.bar.ChangeMax64(int64(total))
		}
		_ = p.bar.Set64(int64(done))
		return
	}
	if p.every <= 0 || time.Since(p.lastLog) < p.every {
		return
	}
	p.lastLog = time.Now()
	el := time.Since(p.start).Seconds()
	rate := float64(done) / el
	eta := time.Duration(0)
	if rate > 0 && total > done {
		eta = (time.Duration(float64(total-done)/rate) * time.Second).Round(time.Second)
	}
	p.log.Info(p.what+" progress", "coins", done, "of", total, "percent", fmt.Sprintf("%.1f", 100*float64(done)/float64(max(total, 1))),
		"coins_per_s", int(rate), "eta", eta.String())
}

func (p *coinProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		fmt.Fprintln(os.Stderr)
	}
}

func cmdSnapshotVerify(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("snapshot verify", flag.ContinueOnError)
	var f snapshotFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: utxod snapshot verify FILE [--network N] [--expect-hash H] [--height H] [--json]

Reads FILE strictly, as Core's loadtxoutset does (same checks, same
messages), builds nothing, and prints the network, base block, coin count,
hash_serialized_3, MuHash and total amount. The exit status is 0 when the
content hash matches the assumeutxo table entry of the base (or
--expect-hash), 1 when it does not, when the base is in no table and no
--expect-hash is given, or when the file is bad.

Flags:`)
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
		fmt.Fprintln(stderr, "utxod snapshot verify:", err)
		return 2
	}
	node, err := snapshotNetwork(f.network)
	if err != nil {
		fmt.Fprintln(stderr, "utxod snapshot verify:", err)
		return 2
	}
	file, err := os.Open(files[0])
	if err != nil {
		fmt.Fprintln(stderr, "utxod snapshot verify:", err)
		return 1
	}
	defer file.Close()
	pr := newCoinProgress(stderr, "verify", f.progress, log)
	sum, err := snapshot.Verify(file, snapshot.VerifyOptions{Network: node, Height: int32(f.height), Progress: pr.update})
	pr.finish()
	if err != nil {
		fmt.Fprintf(stderr, "utxod snapshot verify: %s: %v\n", files[0], err)
		return 1
	}
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
		fmt.Fprintf(stderr, "utxod snapshot verify: %s: assumeutxo block hash in snapshot metadata not recognized (hash: %s); give --expect-hash to check the content hash\n", files[0], sum.Metadata.BaseHash)
		return 1
	case !*j.Matches:
		fmt.Fprintf(stderr, "utxod snapshot verify: %s: Bad snapshot content hash: expected %s, got %s\n", files[0], j.Expected, sum.HashSerialized3)
		return 1
	}
	return 0
}

func cmdSnapshotLoad(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("snapshot load", flag.ContinueOnError)
	var f snapshotFlags
	f.register(fs)
	datadir := fs.String("datadir", "", "the new data directory (must not exist or be empty)")
	backend := fs.String("backend", defaultBackend, "store: pebble, rocksdb or bbolt")
	cacheMB := fs.Int("cache-mb", defaultCacheMB, "store cache budget in MiB (a quarter of it is the store's block cache)")
	var headers listFlag
	fs.Var(&headers, "headers", "the header chain from genesis to the base: a file (Core block files, blk*.dat framing, or raw 80-byte headers as Core's REST /rest/headers/<count>/<hash>.bin returns them) or the http:// or https:// URL of a node's REST interface (bitcoind -rest, another utxod) to fetch it from; repeatable")
	xorKey := fs.String("xor-key", "", "hex XOR key of Core 28+ obfuscated block files given to --headers (blocks/xor.dat)")
	index := fs.String("index", "", "secondary index to build in the same pass over the coins: "+shindex.Name+" (as utxod index build would)")
	startProfile := profileFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: utxod snapshot load FILE --datadir D --backend B [--network N] [--expect-hash H] [--headers FILE|URL]... [--height H] [--index scripthash] [--json]

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

Flags:`)
		fs.PrintDefaults()
	}
	files, code, done := parseArgs(fs, args, true, stdout, stderr)
	if done {
		return code
	}
	if len(files) != 1 || *datadir == "" {
		fmt.Fprintln(stderr, "utxod snapshot load: want one FILE and --datadir (see utxod snapshot load --help)")
		return 2
	}
	if err := backends.Available(*backend); err != nil {
		fmt.Fprintf(stderr, "utxod snapshot load: --backend %s: %v\n", *backend, err)
		return 2
	}
	if *cacheMB < 0 {
		fmt.Fprintf(stderr, "utxod snapshot load: --cache-mb: must not be negative, got %d\n", *cacheMB)
		return 2
	}
	if *index != "" && *index != shindex.Name {
		fmt.Fprintf(stderr, "utxod snapshot load: --index %s: the one index is %s\n", *index, shindex.Name)
		return 2
	}
	log, err := f.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "utxod snapshot load:", err)
		return 2
	}
	node, err := snapshotNetwork(f.network)
	if err != nil {
		fmt.Fprintln(stderr, "utxod snapshot load:", err)
		return 2
	}
	key, err := hex.DecodeString(*xorKey)
	if err != nil {
		fmt.Fprintln(stderr, "utxod snapshot load: --xor-key:", err)
		return 2
	}
	stopProfile, err := startProfile()
	if err != nil {
		fmt.Fprintln(stderr, "utxod snapshot load:", err)
		return 2
	}
	defer stopProfile()
	file, err := os.Open(files[0])
	if err != nil {
		fmt.Fprintln(stderr, "utxod snapshot load:", err)
		return 1
	}
	defer file.Close()
	var hs *snapshot.HeaderSet
	if len(headers) > 0 {
		// The headers' network is the snapshot's: read its metadata first.
		net := node
		meta, n, err := snapshot.ReadMetadata(file, nil)
		if err != nil {
			fmt.Fprintf(stderr, "utxod snapshot load: %s: %v\n", files[0], err)
			return 1
		}
		if net == nil {
			net = n
		}
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			fmt.Fprintln(stderr, "utxod snapshot load:", err)
			return 1
		}
		hs = snapshot.NewHeaderSet(net)
		for _, name := range headers {
			if snapshot.IsURL(name) { // a node's REST interface: genesis to the base
				if err := hs.Fetch(ctx, name, meta.BaseHash, nil); err != nil {
					fmt.Fprintln(stderr, "utxod snapshot load:", err)
					return 1
				}
				continue
			}
			hf, err := os.Open(name)
			if err != nil {
				fmt.Fprintln(stderr, "utxod snapshot load:", err)
				return 1
			}
			err = hs.Read(wire.NewXORReader(hf, key))
			hf.Close()
			if err != nil {
				fmt.Fprintf(stderr, "utxod snapshot load: %s: %v\n", name, err)
				return 1
			}
		}
		log.Info("headers read", "headers", hs.Len())
	}
	pr := newCoinProgress(stderr, "load", f.progress, log)
	start := time.Now()
	sum, err := snapshot.Load(ctx, file, snapshot.LoadConfig{
		Network: node, ExpectHash: f.expectHash.h, Headers: hs, Height: int32(f.height),
		Backend: *backend, Datadir: *datadir,
		KVOptions: backends.Options{CacheBytes: int64(*cacheMB) << 20 / 4, Logger: log.With("store", *backend)},
		Progress:  pr.update, Log: log,
		Index: *index == shindex.Name,
	})
	pr.finish()
	if err != nil {
		fmt.Fprintf(stderr, "utxod snapshot load: %s: %v\n", files[0], err)
		if errors.Is(err, snapshot.ErrBaseUnknown) {
			fmt.Fprintln(stderr, "utxod snapshot load: for a chain the assumeutxo table lacks (regtest, a private chain) give the expected hash_serialized_3 with --expect-hash")
		}
		return 1
	}
	el := time.Since(start).Seconds()
	log.Info("snapshot load done", "coins", sum.Stats.TxOuts, "seconds", el, "coins_per_s", int(float64(sum.Stats.TxOuts)/max(el, 1e-9)))
	j := newSummaryJSON(sum, f.expectHash.h)
	j.Datadir = *datadir
	if f.asJSON {
		return printJSON(j, "snapshot", stdout, stderr)
	}
	printSummary(stdout, j)
	if hs == nil {
		fmt.Fprintln(stdout, "headers            none: lookups and digests work; connecting blocks needs a reload with --headers")
	} else {
		fmt.Fprintf(stdout, "headers            genesis to the base (%d); blocks from %d on connect with full validation\n", sum.Stats.Height, sum.Stats.Height+1)
	}
	fmt.Fprintf(stdout, "datadir            %s (%s)\n", *datadir, *backend)
	return 0
}
