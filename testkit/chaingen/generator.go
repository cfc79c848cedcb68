package chaingen

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/merkle"
	"utxod/params"
	"utxod/wire"
)

// Profiles.
const (
	ProfileEarly  = "early"
	ProfileModern = "modern"
)

// DefaultStartTime is the earliest header time of a generated block:
// 2012-04-01 00:00:00 UTC, btcd's txscript.Bip16Activation. Core applies
// P2SH (and with it segwit) to every regtest block whatever its time, but
// btcd's blockchain enables P2SH only for blocks timestamped at or after
// this instant (blockchain/validate.go checkConnectBlock: enforceBIP0016 :=
// node.timestamp >= txscript.Bip16Activation.Unix()), and with segwit on and
// P2SH off its script engine refuses every input ("P2SH must be enabled to
// do witness verification"). Starting here keeps btcd usable as a
// cross-check; the regtest genesis block (1296688602) stays the parent of
// block 1, whose time is simply 14 months later.
const DefaultStartTime = 1333238400

// TimeCap is the latest header time the generator writes (2026-01-01
// 00:00:00 UTC); past it, blocks step one second above their parent.
const TimeCap = 1767225600

// Config configures a generation run.
type Config struct {
	Profile string         // ProfileEarly or ProfileModern
	Params  *params.Params // regtest (nil: params.RegTest())
	Seed    uint64

	// Blocks is the best-chain height to stop at. TargetInputs, when set
	// instead, stops once the best chain has at least that many non-coinbase
	// inputs. Exactly one of them must be positive.
	Blocks       int
	TargetInputs int64

	// Reorgs is the number of reorg events (see Run).
	Reorgs int

	// Workers sign in parallel (default GOMAXPROCS). The output does not
	// depend on it.
	Workers int

	// MaxBlockWeight bounds every block (default 3,992,000, leaving room
	// below Core's 4,000,000 for the coinbase).
	MaxBlockWeight int
	// MaxTxs bounds the non-coinbase transactions of a block (0: none).
	MaxTxs int
	// Ramp is the height at which the mean block reaches MaxBlockWeight/2
	// (0: profile default, 2500 for early, 400 for modern).
	Ramp int
	// Keys is the size of the deterministic key table (default 4096).
	Keys int
	// StartTime is the earliest header time (0: DefaultStartTime).
	StartTime uint32
	// Bury appends that many coinbase-only blocks once the chain is done,
	// so its transactions lie deep under the tip: 2017 puts them more than
	// two weeks of regtest work under it, which Core's assume-valid
	// requires before it skips their scripts (0: none).
	Bury int
}

// Summary describes a generated file. Counts named Best* and Txs/Inputs/
// Outputs cover the final best chain; Blocks and Bytes the whole file
// (stale branch blocks included).
type Summary struct {
	Profile     string           `json:"profile"`
	Network     string           `json:"network"`
	Seed        uint64           `json:"seed"`
	Blocks      int64            `json:"blocks"`       // blocks written
	StaleBlocks int64            `json:"stale_blocks"` // written, not on the best chain
	Reorgs      int              `json:"reorgs"`
	Height      int32            `json:"height"` // best tip height
	Tip         wire.Hash        `json:"tip"`
	Txs         int64            `json:"txs"`     // best chain, coinbases included
	Inputs      int64            `json:"inputs"`  // best chain, non-coinbase inputs
	Outputs     int64            `json:"outputs"` // best chain, all outputs (coinbase, commitment, OP_RETURN)
	UTXOs       int64            `json:"utxos"`   // UTXO set size at the tip (Core's txouts)
	TotalAmount int64            `json:"total_amount_sat"`
	Bytes       int64            `json:"bytes"` // file size (framing included)
	Seconds     float64          `json:"seconds"`
	Coverage    map[string]int64 `json:"coverage"`
	// InputAges counts best-chain inputs by the age in blocks of the coin
	// they spend (0: created earlier in the same block).
	InputAges map[string]int64 `json:"input_ages"`
}

// Generator writes one chain.
type Generator struct {
	cfg     Config
	p       *params.Params
	rng     *rand.Rand
	keys    *keyTable
	modern  bool
	maxW    int
	ramp    int
	workers int

	w        *bufio.Writer
	bytes    int64
	blocks   int64
	branchID uint32
	burying  bool // coinbase-only blocks (Config.Bury)
	// Total file counters.
	fileTxs, fileInputs int64
}

// New validates cfg and prepares a generator.
func New(cfg Config) (*Generator, error) {
	if cfg.Params == nil {
		cfg.Params = params.RegTest()
	}
	if cfg.Params.Name != "regtest" {
		return nil, fmt.Errorf("chaingen: only regtest is supported (proof of work is ground at the network's limit), not %s", cfg.Params.Name)
	}
	if cfg.Profile != ProfileEarly && cfg.Profile != ProfileModern {
		return nil, fmt.Errorf("chaingen: unknown profile %q (want early or modern)", cfg.Profile)
	}
	if (cfg.Blocks > 0) == (cfg.TargetInputs > 0) {
		return nil, errors.New("chaingen: set exactly one of blocks and target inputs")
	}
	if cfg.Reorgs < 0 {
		return nil, errors.New("chaingen: negative reorg count")
	}
	if cfg.Bury < 0 {
		return nil, errors.New("chaingen: negative burial")
	}
	if cfg.Blocks > 0 && cfg.Reorgs > 0 && cfg.Blocks < 12*(cfg.Reorgs+1) {
		return nil, fmt.Errorf("chaingen: %d blocks are too few for %d reorgs (need %d)", cfg.Blocks, cfg.Reorgs, 12*(cfg.Reorgs+1))
	}
	g := &Generator{cfg: cfg, p: cfg.Params, modern: cfg.Profile == ProfileModern}
	g.rng = rand.New(rand.NewPCG(cfg.Seed, 0x636861696e67656e)) // "chaingen"
	nk := cfg.Keys
	if nk <= 0 {
		nk = 4096
	}
	if nk < 3 {
		nk = 3
	}
	g.keys = newKeyTable(cfg.Seed, nk)
	g.maxW = cfg.MaxBlockWeight
	if g.maxW <= 0 || g.maxW > 3_992_000 {
		g.maxW = 3_992_000
	}
	g.ramp = cfg.Ramp
	if g.ramp <= 0 {
		g.ramp = 2500
		if g.modern {
			g.ramp = 400
		}
	}
	if g.cfg.StartTime == 0 {
		g.cfg.StartTime = DefaultStartTime
	}
	g.workers = cfg.Workers
	if g.workers <= 0 {
		g.workers = runtime.GOMAXPROCS(0)
	}
	return g, nil
}

// reorgEvent: at best height fork, the main chain gets depth blocks, then a
// competing branch from fork gets depth blocks (equal work: the importer
// stays on the first-seen main chain) and one more (more work: the importer
// must reorg to it). If back is set, the original chain then gets two more
// blocks and wins again (a second reorg, reconnecting the blocks the first
// one disconnected); otherwise the branch stays the best chain.
type reorgEvent struct {
	fork  int32
	depth int32
	back  bool
}

func (g *Generator) schedule() []reorgEvent {
	k := g.cfg.Reorgs
	ev := make([]reorgEvent, k)
	for i := range ev {
		ev[i].depth = 1 + int32(g.rng.IntN(6))
		ev[i].back = g.rng.IntN(3) == 0
		if g.cfg.Blocks > 0 {
			// Spread over the chain, each event fitting before the next
			// (depth + 2 ≤ 8 blocks, spacing ≥ 12).
			span := int32(g.cfg.Blocks - 10)
			ev[i].fork = int32(i+1) * span / int32(k+1)
		} else {
			ev[i].fork = 150 + int32(i)*100
		}
	}
	return ev
}

// Run writes the chain to w and returns its summary. With Reorgs = K, K
// reorg events happen (see reorgEvent); in TargetInputs mode events not
// reached when the target is met run at the end, so exactly K happen and
// the final best chain is the last winner.
func (g *Generator) Run(out io.Writer) (*Summary, error) {
	start := time.Now()
	g.w = bufio.NewWriterSize(out, 1<<20)
	st := &state{tip: [32]byte(g.p.GenesisHash)}
	gen, err := wire.ParseHeader(g.p.GenesisBlock)
	if err != nil {
		return nil, err
	}
	st.times = []uint32{gen.Time}
	events := g.schedule()
	var stale int64
	done := func() bool {
		if g.cfg.Blocks > 0 {
			return int(st.height) >= g.cfg.Blocks
		}
		return st.inputs >= g.cfg.TargetInputs
	}
	for !done() || (g.cfg.TargetInputs > 0 && len(events) > 0) {
		if len(events) > 0 && (st.height >= events[0].fork || done()) {
			var n int64
			st, n, err = g.reorg(st, events[0])
			if err != nil {
				return nil, err
			}
			stale += n
			events = events[1:]
			continue
		}
		if err := g.block(st); err != nil {
			return nil, err
		}
	}
	g.burying = true
	for range g.cfg.Bury {
		if err := g.block(st); err != nil {
			return nil, err
		}
	}
	if err := g.w.Flush(); err != nil {
		return nil, err
	}
	s := &Summary{
		Profile: g.cfg.Profile, Network: g.p.Name, Seed: g.cfg.Seed,
		Blocks: g.blocks, StaleBlocks: stale, Reorgs: g.cfg.Reorgs,
		Height: st.height, Tip: wire.Hash(st.tip),
		Txs: st.txs, Inputs: st.inputs, Outputs: st.outputs,
		UTXOs: st.utxos(), TotalAmount: st.amount, Bytes: g.bytes,
		Seconds:  time.Since(start).Seconds(),
		Coverage: make(map[string]int64, numCover),
	}
	for i := range numCover {
		s.Coverage[coverName(i)] = st.cover[i]
	}
	s.InputAges = make(map[string]int64, len(ageBuckets))
	for i := range ageBuckets {
		s.InputAges[ageBucketName(i)] = st.ages[i]
	}
	return s, nil
}

// Generate runs cfg's generator into memory and returns the block file's
// bytes (Core framing) and the summary.
func Generate(cfg Config) ([]byte, *Summary, error) {
	g, err := New(cfg)
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	sum, err := g.Run(&buf)
	if err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), sum, nil
}

// reorg runs one event from the current tip (the fork point) and returns
// the winning state and the number of blocks that ended up stale.
func (g *Generator) reorg(st *state, ev reorgEvent) (*state, int64, error) {
	fork := st.clone()
	for range ev.depth {
		if err := g.block(st); err != nil {
			return nil, 0, err
		}
	}
	g.branchID++
	branch := fork
	for range ev.depth + 1 {
		if err := g.block(branch); err != nil {
			return nil, 0, err
		}
	}
	if !ev.back {
		return branch, int64(ev.depth), nil
	}
	g.branchID++
	for range 2 {
		if err := g.block(st); err != nil {
			return nil, 0, err
		}
	}
	return st, int64(ev.depth) + 1, nil
}

// nextTime picks a header time above the parent's median time past:
// usually parent + 1..1199 s (mean ~600), in the modern profile one block in
// 20 up to 30 minutes below its parent (still above MTP, as Core allows).
func (g *Generator) nextTime(st *state, mtp uint32) uint32 {
	parent := int64(st.times[len(st.times)-1])
	if start := int64(g.cfg.StartTime); parent < start {
		parent = start - 1
	}
	var t int64
	if g.modern && g.rng.IntN(20) == 0 {
		t = parent - int64(g.rng.IntN(1800))
	} else {
		t = parent + 1 + int64(g.rng.IntN(1199))
	}
	if t > TimeCap {
		t = parent + 1
	}
	t = max(t, int64(mtp)+1, int64(g.cfg.StartTime))
	if t < parent {
		st.cover[covTimeBackwards]++
	}
	return uint32(t)
}

// writeBlock frames and writes b.
func (g *Generator) writeBlock(b *btcwire.MsgBlock) error {
	size := b.SerializeSize()
	var hdr [8]byte
	copy(hdr[:4], g.p.Magic[:])
	binary.LittleEndian.PutUint32(hdr[4:], uint32(size))
	if _, err := g.w.Write(hdr[:]); err != nil {
		return err
	}
	if err := b.Serialize(g.w); err != nil {
		return err
	}
	g.bytes += int64(size) + 8
	g.blocks++
	return nil
}

// signAll signs every transaction of txs (index 0, the coinbase, is
// skipped) on g.workers goroutines and fills txids. Signatures are
// deterministic, so the result does not depend on scheduling.
func (g *Generator) signAll(txs []*btcwire.MsgTx, plans [][]inPlan, txids [][32]byte) error {
	n := len(txs)
	var next atomic.Int64
	next.Store(1)
	var firstErr error
	var mu sync.Mutex
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			if err := g.signTx(txs[i], plans[i]); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("chaingen: signing tx %d: %w", i, err)
				}
				mu.Unlock()
				return
			}
			txids[i] = txs[i].TxHash()
		}
	}
	workers := min(g.workers, n-1)
	if workers <= 1 {
		work()
		return firstErr
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(work)
	}
	wg.Wait()
	return firstErr
}

// merkleRoot computes the header merkle root from txids.
func merkleRoot(txids [][32]byte) [32]byte {
	leaves := make([]wire.Hash, len(txids))
	for i, h := range txids {
		leaves[i] = wire.Hash(h)
	}
	r, _ := merkle.Root(leaves)
	return r
}
