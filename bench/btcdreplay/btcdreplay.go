// Package btcdreplay replays Core-framed block files (4-byte network magic,
// 4-byte little-endian length, block; read with wire.BlockFileReader)
// through btcd's blockchain package with full validation, as the reference
// arm of the side-by-side validation benchmark (bench/valbench,
// bench/results/validation.md). bench/cmd/btcdreplay is its command line.
//
// # What btcd is asked to do
//
// Every block goes through BlockChain.ProcessBlock(block, blockchain.BFNone):
// no BFFastAdd, no BFNoPoWCheck. The chain is configured as btcd's node
// configures it by default (server.go, config.go of the btcd version in
// go.mod), except for the things a replay has no use for:
//
//   - Checkpoints: none (Config.Checkpoints nil, as `btcd --nocheckpoints`),
//     so script validation is never skipped below a checkpoint; or, with
//     Config.Checkpoint, exactly one (as `btcd --addcheckpoint`): btcd's
//     assume-valid equivalent, it skips the scripts of every block at or
//     below the checkpoint's height (checkConnectBlock: runScripts is false
//     for node.height <= LatestCheckpoint().Height), requires the block at
//     that height to have the checkpoint's hash, and refuses forks below it.
//   - SigCache: txscript.NewSigCache(100000) (btcd's default
//     --sigcachemaxsize).
//   - HashCache: txscript.NewHashCache(100000) (the node sizes it by
//     --sigcachemaxsize too).
//   - UtxoCacheMaxSize: 250 MiB (btcd's default --utxocachemaxsize); the
//     cache is flushed to the database at the end, as the node does at
//     shutdown.
//   - Database: ffldb in DataDir/blocks_ffldb (a temporary directory by
//     default).
//   - Indexes: none (IndexManager nil: no txindex, addrindex or the node's
//     default committed-filter index, which are not validation).
//   - Prune: off. TimeSource: blockchain.NewMedianTime().
//
// # Network parameters
//
// The network names are utxod's (params.ByName); each maps to btcd's
// chaincfg parameters of the same network, whose genesis hash and magic must
// equal utxod's. Generated chains (testkit/chaingen) are regtest: btcd's
// RegressionNetParams enable P2SH only for blocks timestamped at or after
// 2012-04-01 (txscript.Bip16Activation), which is why chaingen starts its
// blocks there (see testkit/chaingen's package documentation).
package btcdreplay

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil/v2"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/database"
	_ "github.com/btcsuite/btcd/database/ffldb" // registers the ffldb driver
	"github.com/btcsuite/btcd/txscript/v2"

	"utxod/params"
	"utxod/wire"
)

// btcd node defaults (btcd config.go).
const (
	// DefaultSigCacheEntries is btcd's defaultSigCacheMaxSize.
	DefaultSigCacheEntries = 100_000
	// DefaultUtxoCacheMiB is btcd's defaultUtxoCacheMaxSizeMiB.
	DefaultUtxoCacheMiB = 250
)

// dbDirName is the ffldb directory inside the data directory.
const dbDirName = "blocks_ffldb"

// Config configures a replay.
type Config struct {
	// Network is a utxod network name (main, testnet3, testnet4, signet,
	// regtest).
	Network string
	// DataDir holds btcd's database (created in DataDir/blocks_ffldb,
	// which must not exist yet: a replay starts from genesis); "" uses a
	// temporary directory that Close removes.
	DataDir string
	// SigCacheEntries and HashCacheEntries size btcd's signature and
	// sighash-midstate caches (0: DefaultSigCacheEntries, btcd's default).
	SigCacheEntries  uint
	HashCacheEntries uint
	// UtxoCacheMiB is btcd's UTXO cache (0: DefaultUtxoCacheMiB).
	UtxoCacheMiB uint
	// Log receives progress lines (nil: discarded).
	Log *slog.Logger
	// Progress is the interval of progress log lines (0: none).
	Progress time.Duration
	// Checkpoint, when set, is btcd's only checkpoint (see the package
	// documentation); nil: none.
	Checkpoint *Checkpoint
}

// Checkpoint is a block btcd is told is on the valid chain.
type Checkpoint struct {
	Height int32
	Hash   wire.Hash
}

// ParseCheckpoint parses HEIGHT:HASH (btcd's --addcheckpoint syntax; the
// hash in display order).
func ParseCheckpoint(s string) (*Checkpoint, error) {
	hs, hash, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("btcdreplay: checkpoint %q: want HEIGHT:HASH", s)
	}
	height, err := strconv.ParseInt(hs, 10, 32)
	if err != nil || height < 1 {
		return nil, fmt.Errorf("btcdreplay: checkpoint %q: height must be a positive integer", s)
	}
	h, err := wire.ParseHash(hash)
	if err != nil {
		return nil, fmt.Errorf("btcdreplay: checkpoint %q: %w", s, err)
	}
	return &Checkpoint{Height: int32(height), Hash: h}, nil
}

// Summary is what a replay did. Its JSON is what `btcdreplay --json`
// prints.
type Summary struct {
	Network     string `json:"network"`
	BtcdVersion string `json:"btcd_version"`
	// Blocks were accepted by ProcessBlock (main chain, side chain or
	// orphan); Orphans of them arrived before their parent; Duplicates
	// repeat a block accepted earlier in the replay and are skipped (a
	// replay starts from an empty database and stops at the first
	// rejection, so a duplicate is never of an invalid block).
	Blocks     int64 `json:"blocks"`
	Orphans    int64 `json:"orphans"`
	Duplicates int64 `json:"duplicates"`
	// Txs and Inputs count the accepted blocks' transactions (coinbases
	// included) and non-coinbase inputs.
	Txs         int64     `json:"txs"`
	Inputs      int64     `json:"inputs"`
	Height      int32     `json:"height"`
	Tip         wire.Hash `json:"tip"`
	WallSeconds float64   `json:"wall_seconds"`
	// The configuration, stated so a result names what was measured.
	Flags       string `json:"flags"`
	Checkpoints int    `json:"checkpoints"`
	// CheckpointHeight and CheckpointHash are the checkpoint's, when set:
	// the scripts of blocks at or below it were not verified.
	CheckpointHeight *int32     `json:"checkpoint_height,omitempty"`
	CheckpointHash   *wire.Hash `json:"checkpoint_hash,omitempty"`
	SigCacheEntries  uint       `json:"sig_cache_entries"`
	HashCacheEntries uint       `json:"hash_cache_entries"`
	UtxoCacheMiB     uint       `json:"utxo_cache_mib"`
	Database         string     `json:"database"`
}

// RejectError is a block btcd refused (or could not decode).
type RejectError struct {
	Hash wire.Hash
	// Height is the block's height if its parent is on btcd's main chain,
	// else -1.
	Height int32
	File   string
	Offset int64
	Err    error // btcd's error (a blockchain.RuleError for consensus failures)
}

func (e *RejectError) Error() string {
	loc := ""
	if e.File != "" {
		loc = fmt.Sprintf(" [%s offset %d]", e.File, e.Offset)
	}
	return fmt.Sprintf("btcd rejected block %s height %d: %v%s", e.Hash, e.Height, e.Err, loc)
}

func (e *RejectError) Unwrap() error { return e.Err }

// BtcdVersion is the btcd module version compiled into this binary (from
// the build info; "unknown" in binaries without it).
func BtcdVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/btcsuite/btcd" {
				if d.Replace != nil {
					return d.Version + " => " + d.Replace.Path + " " + d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

// ChainParams returns btcd's parameters for a utxod network name, checked
// against utxod's (genesis hash and network magic), with no checkpoints.
func ChainParams(network string) (*chaincfg.Params, *params.Params, error) {
	up, err := params.ByName(network)
	if err != nil {
		return nil, nil, err
	}
	var bp chaincfg.Params
	switch up.Name {
	case "main":
		bp = chaincfg.MainNetParams
	case "testnet3":
		bp = chaincfg.TestNet3Params
	case "testnet4":
		bp = chaincfg.TestNet4Params
	case "signet":
		bp = chaincfg.SigNetParams
	case "regtest":
		bp = chaincfg.RegressionNetParams
	default:
		return nil, nil, fmt.Errorf("btcdreplay: no btcd parameters for network %q", up.Name)
	}
	bp.Checkpoints = nil
	if got := wire.Hash(*bp.GenesisHash); got != up.GenesisHash {
		return nil, nil, fmt.Errorf("btcdreplay: btcd %s genesis %s, utxod's %s", bp.Name, got, up.GenesisHash)
	}
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], uint32(bp.Net))
	if magic != up.Magic {
		return nil, nil, fmt.Errorf("btcdreplay: btcd %s magic %x, utxod's %x", bp.Name, magic, up.Magic)
	}
	return &bp, up, nil
}

// Replayer is a btcd chain over an ffldb database.
type Replayer struct {
	cfg    Config
	chain  *blockchain.BlockChain
	db     database.DB
	dir    string
	tmp    bool
	magic  [4]byte
	log    *slog.Logger
	sum    Summary
	closed bool

	start, lastLog time.Time
}

// Open creates (or reopens) btcd's database and chain.
func Open(cfg Config) (*Replayer, error) {
	bp, up, err := ChainParams(cfg.Network)
	if err != nil {
		return nil, err
	}
	if cfg.SigCacheEntries == 0 {
		cfg.SigCacheEntries = DefaultSigCacheEntries
	}
	if cfg.HashCacheEntries == 0 {
		cfg.HashCacheEntries = DefaultSigCacheEntries
	}
	if cfg.UtxoCacheMiB == 0 {
		cfg.UtxoCacheMiB = DefaultUtxoCacheMiB
	}
	r := &Replayer{cfg: cfg, magic: up.Magic, log: cfg.Log, start: time.Now()}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.lastLog = r.start
	r.dir = cfg.DataDir
	if r.dir == "" {
		if r.dir, err = os.MkdirTemp("", "btcdreplay-"); err != nil {
			return nil, fmt.Errorf("btcdreplay: temp datadir: %w", err)
		}
		r.tmp = true
	} else if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, fmt.Errorf("btcdreplay: datadir: %w", err)
	}
	dbPath := filepath.Join(r.dir, dbDirName)
	if _, serr := os.Stat(dbPath); serr == nil {
		return nil, fmt.Errorf("btcdreplay: %s already holds a btcd database; a replay starts from genesis in a fresh datadir", r.dir)
	}
	r.db, err = database.Create("ffldb", dbPath, bp.Net)
	if err != nil {
		r.removeTemp()
		return nil, fmt.Errorf("btcdreplay: ffldb %s: %w", dbPath, err)
	}
	var checkpoints []chaincfg.Checkpoint
	if cp := cfg.Checkpoint; cp != nil {
		if cp.Height < 1 {
			r.db.Close()
			r.removeTemp()
			return nil, fmt.Errorf("btcdreplay: checkpoint height %d: must be positive", cp.Height)
		}
		h := chainhash.Hash(cp.Hash)
		checkpoints = []chaincfg.Checkpoint{{Height: cp.Height, Hash: &h}}
	}
	r.chain, err = blockchain.New(&blockchain.Config{
		DB:               r.db,
		ChainParams:      bp,
		Checkpoints:      checkpoints,
		TimeSource:       blockchain.NewMedianTime(),
		SigCache:         txscript.NewSigCache(cfg.SigCacheEntries),
		HashCache:        txscript.NewHashCache(cfg.HashCacheEntries),
		UtxoCacheMaxSize: uint64(cfg.UtxoCacheMiB) << 20,
	})
	if err != nil {
		r.db.Close()
		r.removeTemp()
		return nil, fmt.Errorf("btcdreplay: blockchain.New: %w", err)
	}
	r.sum = Summary{
		Network: up.Name, BtcdVersion: BtcdVersion(), Flags: "BFNone", Checkpoints: len(checkpoints),
		SigCacheEntries: cfg.SigCacheEntries, HashCacheEntries: cfg.HashCacheEntries,
		UtxoCacheMiB: cfg.UtxoCacheMiB, Database: "ffldb",
	}
	if cp := cfg.Checkpoint; cp != nil {
		height, hash := cp.Height, cp.Hash
		r.sum.CheckpointHeight, r.sum.CheckpointHash = &height, &hash
	}
	return r, nil
}

func (r *Replayer) removeTemp() {
	if r.tmp {
		os.RemoveAll(r.dir)
	}
}

// Tip returns btcd's best chain tip.
func (r *Replayer) Tip() (wire.Hash, int32) {
	s := r.chain.BestSnapshot()
	return wire.Hash(s.Hash), s.Height
}

// ProcessBlock fully validates one raw block. A block btcd refuses
// returns a *RejectError; a block btcd already has (accepted earlier: the
// caller stops at the first rejection) is counted as a duplicate.
func (r *Replayer) ProcessBlock(raw []byte) error {
	if r.closed {
		return errors.New("btcdreplay: replayer closed")
	}
	var hash wire.Hash
	if len(raw) >= wire.HeaderSize {
		hash = wire.DoubleSHA256(raw[:wire.HeaderSize])
	}
	rej := func(err error) error {
		return &RejectError{Hash: hash, Height: r.heightOf(raw), Err: err}
	}
	b, err := btcutil.NewBlockFromBytes(raw)
	if err != nil {
		return rej(fmt.Errorf("decode: %w", err))
	}
	_, orphan, err := r.chain.ProcessBlock(b, blockchain.BFNone)
	if err != nil {
		var re blockchain.RuleError
		if errors.As(err, &re) && re.ErrorCode == blockchain.ErrDuplicateBlock {
			r.sum.Duplicates++
			return nil
		}
		return rej(err)
	}
	r.sum.Blocks++
	if orphan {
		r.sum.Orphans++
	}
	txs := b.MsgBlock().Transactions
	r.sum.Txs += int64(len(txs))
	for _, tx := range txs[min(1, len(txs)):] {
		r.sum.Inputs += int64(len(tx.TxIn))
	}
	if r.cfg.Progress > 0 && time.Since(r.lastLog) >= r.cfg.Progress {
		r.lastLog = time.Now()
		_, h := r.Tip()
		el := time.Since(r.start).Seconds()
		r.log.Info("btcd replay progress", "height", h, "blocks", r.sum.Blocks,
			"blocks_per_s", int(float64(r.sum.Blocks)/el), "inputs_per_s", int(float64(r.sum.Inputs)/el))
	}
	return nil
}

// heightOf is the height a block would have on btcd's main chain, or -1.
func (r *Replayer) heightOf(raw []byte) int32 {
	if len(raw) < wire.HeaderSize {
		return -1
	}
	var prev chainhash.Hash
	copy(prev[:], raw[4:36])
	h, err := r.chain.BlockHeightByHash(&prev)
	if err != nil {
		return -1
	}
	return h + 1
}

// ReplayFile processes every framed block of one file in order. It stops
// at the first rejected block (a *RejectError naming the file and offset)
// or when ctx is done.
func (r *Replayer) ReplayFile(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("btcdreplay: %w", err)
	}
	defer f.Close()
	br := wire.NewBlockFileReader(f, r.magic)
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("btcdreplay: %w", err)
		}
		raw, off, err := br.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("btcdreplay: %s: %w", path, err)
		}
		if err := r.ProcessBlock(raw); err != nil {
			var re *RejectError
			if errors.As(err, &re) {
				re.File, re.Offset = path, off
			}
			return err
		}
	}
}

// Close flushes btcd's UTXO cache to the database (as the node does at
// shutdown), closes the database and removes a temporary data directory.
func (r *Replayer) Close() error {
	err := r.closeDB()
	r.removeTemp()
	return err
}

func (r *Replayer) closeDB() error {
	if r.closed {
		return nil
	}
	r.closed = true
	ferr := r.chain.FlushUtxoCache(blockchain.FlushRequired)
	if ferr != nil {
		ferr = fmt.Errorf("btcdreplay: flush utxo cache: %w", ferr)
	}
	cerr := r.db.Close()
	if cerr != nil {
		cerr = fmt.Errorf("btcdreplay: close database: %w", cerr)
	}
	return errors.Join(ferr, cerr)
}

// Summary returns the counts so far and the tip (WallSeconds is left to
// the caller; Run fills it).
func (r *Replayer) Summary() Summary {
	s := r.sum
	s.Tip, s.Height = r.Tip()
	return s
}

// Run replays files in order into a fresh or existing btcd chain and
// returns the summary. WallSeconds covers opening the database through the
// final UTXO-cache flush and close (not the removal of a temporary data
// directory). A rejected block stops the replay with
// a *RejectError; the summary then covers the blocks before it.
func Run(ctx context.Context, cfg Config, files []string) (*Summary, error) {
	start := time.Now()
	r, err := Open(cfg)
	if err != nil {
		return nil, err
	}
	var rerr error
	for _, f := range files {
		if rerr = r.ReplayFile(ctx, f); rerr != nil {
			break
		}
	}
	s := r.Summary()
	cerr := r.closeDB()
	s.WallSeconds = time.Since(start).Seconds()
	r.removeTemp()
	if err := errors.Join(rerr, cerr); err != nil {
		return &s, err
	}
	return &s, nil
}
