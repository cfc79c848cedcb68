package chaingen

import (
	"fmt"
	"slices"
)

// coin is a spendable output the generator knows the key of. The output
// script is derived from (kind, key, lock); see keyTable.pkScript.
type coin struct {
	txid     [32]byte
	value    int64
	vout     uint32
	height   int32  // block height that created it
	mtp      uint32 // median time past of block height-1 (BIP68 time base)
	lock     uint32 // kCLTV: nLockTime threshold; kCSV: the script's nSequence
	key      uint32
	kind     kind
	coinbase bool
}

const (
	locktimeThreshold = 500_000_000 // LOCKTIME_THRESHOLD
	seqDisableFlag    = 1 << 31     // SEQUENCE_LOCKTIME_DISABLE_FLAG
	seqTypeFlag       = 1 << 22     // SEQUENCE_LOCKTIME_TYPE_FLAG
	seqMask           = 0x0000ffff  // SEQUENCE_LOCKTIME_MASK
	seqGranularity    = 9           // SEQUENCE_LOCKTIME_GRANULARITY
)

// unlocked reports whether a kCLTV/kCSV coin can be spent by a transaction
// in a block at height whose parent has median time past mtpPrev: BIP65
// (the spending tx's nLockTime is set to the lock and must be final per
// BIP113: lock < height, or lock < mtpPrev for time locks) and BIP68/BIP112
// (Core's CalculateSequenceLocks/EvaluateSequenceLocks: coinHeight + n - 1 <
// height, or coinMTP + (n << 9) - 1 < mtpPrev).
func (c *coin) unlocked(height int32, mtpPrev uint32) bool {
	switch c.kind {
	case kCLTV:
		if c.lock < locktimeThreshold {
			return int64(c.lock) < int64(height)
		}
		return c.lock < mtpPrev
	case kCSV:
		n := int64(c.lock & seqMask)
		if c.lock&seqTypeFlag == 0 {
			return int64(height)-int64(c.height) >= n
		}
		return int64(mtpPrev)-int64(c.mtp) >= n<<seqGranularity
	}
	return true
}

// state is everything the generator needs to extend one chain tip: the
// spendable pool, coins waiting for maturity or a lock, the last 11 block
// times and the running counters of the chain ending at the tip. Reorg
// events clone it at the fork point.
type state struct {
	height int32
	tip    [32]byte
	times  []uint32 // times of the last ≤11 blocks, oldest first

	pool     []coin // spendable now
	locked   []coin // kCLTV/kCSV coins whose condition does not hold yet
	immature []coin // coinbase outputs in height order

	// Counters of the chain from genesis to tip.
	txs, inputs, outputs int64
	amount               int64 // sum of unspent values (Core's total_amount)
	unspendable          int64 // OP_RETURN outputs (not in the UTXO set)
	cover                [numCover]int64
	ages                 [len(ageBuckets)]int64 // inputs by age of the spent coin
}

// ageBuckets are the lower bounds (in blocks) of the input-age histogram.
var ageBuckets = [...]int32{0, 1, 2, 10, 100, 1000}

func ageBucketName(i int) string {
	if i == len(ageBuckets)-1 {
		return fmt.Sprintf("%d+", ageBuckets[i])
	}
	if ageBuckets[i+1]-ageBuckets[i] == 1 {
		return fmt.Sprintf("%d", ageBuckets[i])
	}
	return fmt.Sprintf("%d-%d", ageBuckets[i], ageBuckets[i+1]-1)
}

func (s *state) clone() *state {
	c := *s
	c.times = slices.Clone(s.times)
	c.pool = slices.Clone(s.pool)
	c.locked = slices.Clone(s.locked)
	c.immature = slices.Clone(s.immature)
	return &c
}

// mtp is Core's GetMedianTimePast of the tip.
func (s *state) mtp() uint32 {
	ts := slices.Clone(s.times)
	slices.Sort(ts)
	return ts[len(ts)/2]
}

func (s *state) pushTime(t uint32) {
	if len(s.times) == 11 {
		copy(s.times, s.times[1:])
		s.times = s.times[:10]
	}
	s.times = append(s.times, t)
}

// utxos is the size of the UTXO set at the tip (genesis output excluded,
// as in Core).
func (s *state) utxos() int64 {
	return int64(len(s.pool) + len(s.locked) + len(s.immature))
}

// Coverage counters (what the chain exercises), reported in the summary.
// Index i < numKinds counts spends of kind(i).
const (
	covTRScriptKey = int(numKinds) + iota
	covCoinbaseSpend
	covSameBlock
	covCLTVHeight
	covCLTVTime
	covCSVHeight
	covCSVTime
	covBIP68Height
	covBIP68Time
	covLocktimeHeight
	covLocktimeTime
	covOpReturn
	covConsolidation
	covFanOut
	covSighashOther
	covTimeBackwards
	numCover
)

func coverName(i int) string {
	if i < int(numKinds) {
		return "spend-" + kind(i).String()
	}
	return [...]string{
		"spend-p2tr-script-keypath", "spend-coinbase", "spend-same-block",
		"cltv-height", "cltv-time", "csv-height", "csv-time", "bip68-height", "bip68-time",
		"locktime-height", "locktime-time", "op-return", "consolidation", "fan-out",
		"sighash-non-all", "time-below-parent",
	}[i-int(numKinds)]
}
