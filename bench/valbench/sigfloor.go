package valbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"utxod/backends"
	_ "utxod/backends/pebble" // the signature-free import's store
	"utxod/bench"
	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/store/kvstore"
	"utxod/validate"
	"utxod/wire"
)

// CountingVerifier wraps a script.SigVerifier and counts the elliptic-curve
// operations the script engine asks of it — the verifications actually
// performed, after the engine's signature cache — and keeps a uniform
// reservoir sample of the successful ones (copies) for timing. It is a
// measurement hook: the engine's default verifier is unchanged unless a
// caller passes this one with script.WithSigVerifier.
type CountingVerifier struct {
	inner                      script.SigVerifier
	ecdsa, ecdsaFail           atomic.Int64
	schnorr, schnorrFail       atomic.Int64
	tweak, tweakFail           atomic.Int64
	mu                         sync.Mutex
	max                        int
	rng                        *rand.Rand
	ecdsaSeen, schnorrSeen     int64
	ecdsaSamples               []ECDSASample
	schnorrSamples             []SchnorrSample
	sampleECDSA, sampleSchnorr bool
}

// ECDSASample is one successful ECDSA verification's inputs.
type ECDSASample struct {
	PubKey, Sig []byte // serialized key; DER signature without hash type
	Msg         [32]byte
}

// SchnorrSample is one successful BIP340 verification's inputs.
type SchnorrSample struct {
	PubKey [32]byte
	Sig    [64]byte
	Msg    [32]byte
}

// NewCountingVerifier counts inner's calls and keeps up to samples
// successful signatures of each kind (reservoir sampling, fixed seed).
func NewCountingVerifier(inner script.SigVerifier, samples int) *CountingVerifier {
	return &CountingVerifier{inner: inner, max: samples, rng: rand.New(rand.NewPCG(1, 2)),
		sampleECDSA: samples > 0, sampleSchnorr: samples > 0}
}

// Name implements script.SigVerifier.
func (c *CountingVerifier) Name() string { return c.inner.Name() }

// VerifyECDSA implements script.SigVerifier.
func (c *CountingVerifier) VerifyECDSA(pubkey, sig []byte, msg [32]byte) bool {
	ok := c.inner.VerifyECDSA(pubkey, sig, msg)
	c.ecdsa.Add(1)
	if !ok {
		c.ecdsaFail.Add(1)
	} else if c.sampleECDSA {
		c.mu.Lock()
		c.ecdsaSeen++
		if i := c.slot(c.ecdsaSeen); i >= 0 {
			s := ECDSASample{PubKey: bytes.Clone(pubkey), Sig: bytes.Clone(sig), Msg: msg}
			if i == len(c.ecdsaSamples) {
				c.ecdsaSamples = append(c.ecdsaSamples, s)
			} else {
				c.ecdsaSamples[i] = s
			}
		}
		c.mu.Unlock()
	}
	return ok
}

// VerifySchnorr implements script.SigVerifier.
func (c *CountingVerifier) VerifySchnorr(pubkey [32]byte, sig [64]byte, msg [32]byte) bool {
	ok := c.inner.VerifySchnorr(pubkey, sig, msg)
	c.schnorr.Add(1)
	if !ok {
		c.schnorrFail.Add(1)
	} else if c.sampleSchnorr {
		c.mu.Lock()
		c.schnorrSeen++
		if i := c.slot(c.schnorrSeen); i >= 0 {
			s := SchnorrSample{PubKey: pubkey, Sig: sig, Msg: msg}
			if i == len(c.schnorrSamples) {
				c.schnorrSamples = append(c.schnorrSamples, s)
			} else {
				c.schnorrSamples[i] = s
			}
		}
		c.mu.Unlock()
	}
	return ok
}

// CheckTapTweak implements script.SigVerifier.
func (c *CountingVerifier) CheckTapTweak(internal, output, tweak [32]byte, parity bool) bool {
	ok := c.inner.CheckTapTweak(internal, output, tweak, parity)
	c.tweak.Add(1)
	if !ok {
		c.tweakFail.Add(1)
	}
	return ok
}

// slot is reservoir sampling (Algorithm R) for the seen-th item: the index
// to store it at, or -1. Called with mu held.
func (c *CountingVerifier) slot(seen int64) int {
	if seen <= int64(c.max) {
		return int(seen - 1)
	}
	if j := c.rng.Int64N(seen); j < int64(c.max) {
		return int(j)
	}
	return -1
}

// SigCount is what a CountingVerifier saw.
type SigCount struct {
	Verifier      string `json:"verifier"`
	ECDSA         int64  `json:"ecdsa"`
	ECDSAFailed   int64  `json:"ecdsa_failed"` // included in ECDSA (e.g. CHECKMULTISIG key trials)
	Schnorr       int64  `json:"schnorr"`
	SchnorrFailed int64  `json:"schnorr_failed"`
	TapTweak      int64  `json:"taptweak_checks"` // not part of the floor
	TapTweakFail  int64  `json:"taptweak_failed"`
}

// Count returns the counters.
func (c *CountingVerifier) Count() SigCount {
	return SigCount{Verifier: c.inner.Name(),
		ECDSA: c.ecdsa.Load(), ECDSAFailed: c.ecdsaFail.Load(),
		Schnorr: c.schnorr.Load(), SchnorrFailed: c.schnorrFail.Load(),
		TapTweak: c.tweak.Load(), TapTweakFail: c.tweakFail.Load()}
}

// Samples returns copies of the sampled signatures.
func (c *CountingVerifier) Samples() ([]ECDSASample, []SchnorrSample) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ecdsaSamples), slices.Clone(c.schnorrSamples)
}

// CountResult is a counting import.
type CountResult struct {
	Count   SigCount        `json:"count"`
	Blocks  int64           `json:"blocks"`
	Inputs  int64           `json:"inputs"`
	Height  int32           `json:"height"`
	Tip     wire.Hash       `json:"tip"`
	Seconds float64         `json:"seconds"`
	ECDSA   []ECDSASample   `json:"-"`
	Schnorr []SchnorrSample `json:"-"`
}

// CountSignatures imports the corpus into a fresh in-memory chainstate the
// way `utxod import` does (the same chainstate, validator and script
// engine: script.NewEngine with a fresh signature cache of the default size
// that, as the import's, is looked up but never stored into) with a CountingVerifier around script.DefaultSigVerifier
// (libsecp256k1 when compiled in), and returns the verifications performed
// and up to samples successful signatures of each kind. MuHash is off: it
// does not change what is verified.
func CountSignatures(ctx context.Context, corpus, network string, samples int) (*CountResult, error) {
	cv := NewCountingVerifier(script.DefaultSigVerifier(), samples)
	im, err := importCorpus(ctx, corpus, network, cv, "")
	if err != nil {
		return nil, fmt.Errorf("valbench: count: %w", err)
	}
	res := &CountResult{Blocks: im.Blocks, Inputs: im.Inputs, Height: im.Height, Tip: im.Tip, Seconds: im.WallS}
	res.Count = cv.Count()
	res.ECDSA, res.Schnorr = cv.Samples()
	return res, nil
}

// importRun is one in-process import of a corpus.
type importRun struct {
	Blocks, Inputs int64
	Height         int32
	Tip            wire.Hash
	WallS, CPUS    float64 // CPUS: the whole process's user+system time
}

// importCorpus imports the corpus with an engine on verifier v and a fresh
// default-size, look-up-only signature cache, as CountSignatures describes.
// With dir empty the chainstate is in memory with MuHash off; otherwise it
// is a new pebble store in dir with `utxod import`'s defaults (coins cache
// budget, blocks and undo records in flat files, trusted cache misses,
// early batches unsynced, transactions counted by the store) and MuHash
// on, flushed at the end as the import is, so that it does the import's
// work around the signatures.
func importCorpus(ctx context.Context, corpus, network string, v script.SigVerifier, dir string) (_ *importRun, err error) {
	p, err := params.ByName(network)
	if err != nil {
		return nil, err
	}
	eng := script.NewEngine(script.WithSigVerifier(v), script.WithSigCacheEntries(script.DefaultSigCacheEntries), script.WithSigCacheStore(false))
	cfg := chainstate.Config{Params: p, Validator: validate.New(p, eng, nil), Store: store.NewMem(), DisableMuHash: true, MaxOrphanBytes: 2048 << 20}
	if dir != "" {
		var kv backends.KV
		var st *kvstore.Store
		if kv, st, err = openPebbleStore(dir); err != nil {
			return nil, err
		}
		defer func() { err = errors.Join(err, kv.Close()) }() // the named result: a failed close is reported
		cfg.Store, cfg.DisableMuHash = st, false
	}
	cs, err := chainstate.New(cfg)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(corpus)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	start, cpu0 := time.Now(), bench.ProcessCPU()
	res := &importRun{}
	r := wire.NewBlockFileReader(f, p.Magic)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		raw, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", corpus, err)
		}
		br, err := cs.ProcessBlock(raw)
		if err != nil {
			return nil, fmt.Errorf("block %s rejected: %s: %w",
				wire.DoubleSHA256(raw[:wire.HeaderSize]), validate.Reason(err), err)
		}
		res.Blocks++
		res.Inputs += int64(br.Inputs)
	}
	if dir != "" {
		if _, err := cs.Info(chainstate.HashTypeMuHash); err != nil {
			return nil, err
		}
		if err := cs.Flush(); err != nil {
			return nil, err
		}
	}
	res.WallS, res.CPUS = time.Since(start).Seconds(), (bench.ProcessCPU() - cpu0).Seconds()
	tip := cs.Tip()
	res.Height, res.Tip = tip.Height, tip.Hash
	return res, nil
}

// openPebbleStore opens a new pebble store in dir with the settings
// `utxod import --datadir dir` gives a new datadir by default.
func openPebbleStore(dir string) (backends.KV, *kvstore.Store, error) {
	// Its block cache a quarter of the coins cache budget, as utxod gives.
	kv, err := backends.Open("pebble", dir, backends.Options{CacheBytes: kvstore.DefaultCacheBytes / 4})
	if err != nil {
		return nil, nil, err
	}
	st, err := kvstore.Open(kv, kvstore.Options{UnsyncedEarlyWrites: true, TrustCacheMisses: true,
		BlocksDir: filepath.Join(dir, "blocks"), UndoDir: filepath.Join(dir, "undo")})
	if err != nil {
		return nil, nil, errors.Join(err, kv.Close())
	}
	return kv, st, nil
}

// acceptVerifier answers every signature and tweak check with true. It
// exists only to measure an import without signature verification (on a
// corpus whose signatures all verify, so nothing else changes); nothing
// outside this package can construct it.
type acceptVerifier struct{}

func (acceptVerifier) Name() string                                    { return "accept-all" }
func (acceptVerifier) VerifyECDSA([]byte, []byte, [32]byte) bool       { return true }
func (acceptVerifier) VerifySchnorr([32]byte, [64]byte, [32]byte) bool { return true }
func (acceptVerifier) CheckTapTweak(_, _, _ [32]byte, _ bool) bool     { return true }

// SigFree is the work around the signatures: the in-process import of
// CountSignatures with every check answered true, on a corpus whose
// verifications all succeed (otherwise it is not measured). It runs on a
// new pebble store with MuHash on and the store counting transactions, as
// `utxod import` does by default, but connects one block at a time (no
// pipelining or read-ahead). Not the memory store: its Go maps cost more
// than the store's txid table.
type SigFree struct {
	Store       string       `json:"store"`
	Runs        []SigFreeRun `json:"runs"`
	Inputs      int64        `json:"inputs"`
	WallMedianS float64      `json:"wall_median_s"`
	CPUMedianS  float64      `json:"cpu_median_s"`
	// CPUPerInputUs is CPUMedianS per non-coinbase input, in µs.
	CPUPerInputUs float64 `json:"cpu_per_input_us"`
	// BoundS = (Floor.CPUSeconds + CPUMedianS) / Floor.Cores: the wall
	// time of a perfect schedule of the signatures' single-thread CPU and
	// this work on every core (0 until the floor is known).
	BoundS float64 `json:"bound_s"`
}

// SigFreeRun is one signature-free import.
type SigFreeRun struct {
	WallS float64 `json:"wall_s"`
	CPUS  float64 `json:"cpu_s"`
}

// MeasureSigFree runs the signature-free import runs times, each on a new
// pebble store in a directory of its own under workdir (removed after), and
// checks each reaches height and tip.
func MeasureSigFree(ctx context.Context, corpus, network, workdir string, runs int, height int32, tip wire.Hash) (*SigFree, error) {
	sf := &SigFree{Store: "pebble"}
	var walls, cpus []float64
	for range runs {
		runtime.GC()
		dir, err := os.MkdirTemp(workdir, "valbench-sigfree-")
		if err != nil {
			return nil, err
		}
		im, err := importCorpus(ctx, corpus, network, acceptVerifier{}, dir)
		os.RemoveAll(dir)
		if err != nil {
			return nil, fmt.Errorf("valbench: signature-free import: %w", err)
		}
		if im.Height != height || im.Tip != tip {
			return nil, fmt.Errorf("valbench: signature-free import ended at %s height %d, want %s height %d", im.Tip, im.Height, tip, height)
		}
		sf.Inputs = im.Inputs
		sf.Runs = append(sf.Runs, SigFreeRun{WallS: im.WallS, CPUS: im.CPUS})
		walls, cpus = append(walls, im.WallS), append(cpus, im.CPUS)
	}
	sf.WallMedianS, sf.CPUMedianS = bench.Median(walls), bench.Median(cpus)
	if sf.Inputs > 0 {
		sf.CPUPerInputUs = sf.CPUMedianS / float64(sf.Inputs) * 1e6
	}
	return sf, nil
}

// KindCost is the measured single-verify cost of one signature kind.
type KindCost struct {
	Samples int `json:"samples"` // distinct signatures cycled through
	// Per-verify nanoseconds of each timed one-thread batch: wall
	// (monotonic clock) and the timing thread's CPU time. Seq is the run
	// each batch was timed just before (Step.Seq; 0: before the rounds,
	// one more than the runs: after the last).
	WallNs []float64 `json:"wall_ns"`
	CPUNs  []float64 `json:"cpu_ns"`
	Seq    []int     `json:"seq"`
	// Medians and minimum over the one-thread batches.
	WallMedianNs float64 `json:"wall_median_ns"`
	WallMinNs    float64 `json:"wall_min_ns"`
	CPUMedianNs  float64 `json:"cpu_median_ns"`
	// AllCoreNs are batches with every core verifying at once (Threads
	// locked threads, each cycling from its own offset and rescheduling
	// as the import's workers do): the wall ns per verification of all of
	// them together, which is the verify cost ÷ cores as the cores
	// deliver it. They are timed before every run and after the last
	// (AllCoreSeq, as Seq), so that each run has a floor timed beside it
	// (RunFloor): a shared host has slow spells that come and go within
	// minutes.
	Threads    int       `json:"threads,omitempty"`
	AllCoreNs  []float64 `json:"all_core_ns,omitempty"`
	AllCoreSeq []int     `json:"all_core_seq,omitempty"`
}

// aroundMedian is the median of the values tagged seq and of those with
// the next tag above it: a run's batches before and after it (0 when
// either side has none).
func aroundMedian(vals []float64, tags []int, seq int) float64 {
	next := math.MaxInt
	for _, t := range tags {
		if t > seq {
			next = min(next, t)
		}
	}
	var w []float64
	nBefore := 0
	for i, t := range tags {
		if t == seq {
			nBefore++
		}
		if t == seq || t == next {
			w = append(w, vals[i])
		}
	}
	if nBefore == 0 || nBefore == len(w) {
		return 0
	}
	return bench.Median(w)
}

// sampleVerifiers returns v's checks of the i-th sampled ECDSA and
// Schnorr signature.
func sampleVerifiers(v script.SigVerifier, ecdsa []ECDSASample, schnorr []SchnorrSample) (e, sch func(i int) bool) {
	e = func(i int) bool { s := &ecdsa[i]; return v.VerifyECDSA(s.PubKey, s.Sig, s.Msg) }
	sch = func(i int) bool { s := &schnorr[i]; return v.VerifySchnorr(s.PubKey, s.Sig, s.Msg) }
	return e, sch
}

// VerifyCost is the single-verify cost of the verifier on one thread.
type VerifyCost struct {
	Verifier string `json:"verifier"`
	// BatchS is the minimum duration of one timed batch.
	BatchS  float64   `json:"batch_s"`
	ECDSA   *KindCost `json:"ecdsa,omitempty"`
	Schnorr *KindCost `json:"schnorr,omitempty"`
}

// MeasureVerifyCost times v on the sampled signatures: for each kind,
// batches timed loops of at least perBatch each on one locked OS thread,
// cycling through the samples (every verification must succeed), tagged
// with seq (KindCost.Seq). It adds the batches to into (nil: a new
// VerifyCost) and recomputes its medians, so measurements before and
// after the rounds pool.
func MeasureVerifyCost(v script.SigVerifier, ecdsa []ECDSASample, schnorr []SchnorrSample, seq, batches int, perBatch time.Duration, into *VerifyCost) (*VerifyCost, error) {
	if into == nil {
		into = &VerifyCost{Verifier: v.Name(), BatchS: perBatch.Seconds()}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	verifyE, verifyS := sampleVerifiers(v, ecdsa, schnorr)
	for _, kd := range []struct {
		name   string
		k      **KindCost
		n      int
		verify func(i int) bool
	}{{"ECDSA", &into.ECDSA, len(ecdsa), verifyE}, {"Schnorr", &into.Schnorr, len(schnorr), verifyS}} {
		if kd.n == 0 {
			continue
		}
		if *kd.k == nil {
			*kd.k = &KindCost{}
		}
		if i, ok := (*kd.k).time(kd.n, seq, batches, perBatch, kd.verify); !ok {
			return nil, fmt.Errorf("valbench: sampled %s signature %d does not verify with %s", kd.name, i, v.Name())
		}
	}
	return into, nil
}

// time runs batches of at least perBatch each, cycling verify over the
// samples, and records wall and thread-CPU ns per verification, tagged
// with seq (the calling goroutine is locked to its OS thread); false and
// the sample if one does not verify.
func (k *KindCost) time(samples, seq, batches int, perBatch time.Duration, verify func(i int) bool) (failed int, ok bool) {
	k.Samples = samples
	for b := 0; b < batches; b++ {
		n, wall := 0, time.Duration(0)
		start, cpu0 := time.Now(), bench.ThreadCPU()
		for wall < perBatch {
			for range 64 {
				if !verify(n % samples) {
					return n % samples, false
				}
				n++
			}
			// No reschedule here: with one thread verifying, the other
			// core absorbs sysmon's polling, and a Gosched of a locked
			// thread costs about 1 % (timeThreads does reschedule).
			wall = time.Since(start)
		}
		cpu := bench.ThreadCPU() - cpu0
		k.WallNs = append(k.WallNs, float64(wall.Nanoseconds())/float64(n))
		k.CPUNs = append(k.CPUNs, float64(cpu.Nanoseconds())/float64(n))
		k.Seq = append(k.Seq, seq)
	}
	k.finish()
	return 0, true
}

func (k *KindCost) finish() {
	k.WallMedianNs = bench.Median(k.WallNs)
	k.WallMinNs = slices.Min(k.WallNs)
	k.CPUMedianNs = bench.Median(k.CPUNs)
}

// MeasureAllCoreCost times batches runs of at least perBatch each with
// threads threads verifying at once (timeThreads), for each kind with
// samples, tagged with seq (KindCost.AllCoreSeq), and adds them to into,
// whose kinds MeasureVerifyCost has created. Every verification must
// succeed.
func MeasureAllCoreCost(v script.SigVerifier, ecdsa []ECDSASample, schnorr []SchnorrSample, threads, seq, batches int, perBatch time.Duration, into *VerifyCost) error {
	verifyE, verifyS := sampleVerifiers(v, ecdsa, schnorr)
	kinds := []struct {
		k      *KindCost
		n      int
		verify func(i int) bool
	}{{into.ECDSA, len(ecdsa), verifyE}, {into.Schnorr, len(schnorr), verifyS}}
	for _, kd := range kinds {
		if kd.k == nil || kd.n == 0 {
			continue
		}
		kd.k.Threads = threads
		for range batches {
			ns, err := timeThreads(threads, kd.n, perBatch, kd.verify)
			if err != nil {
				return fmt.Errorf("valbench: all-core verify with %s: %w", v.Name(), err)
			}
			kd.k.AllCoreNs = append(kd.k.AllCoreNs, ns)
			kd.k.AllCoreSeq = append(kd.k.AllCoreSeq, seq)
		}
	}
	return nil
}

// Floor is the signature floor of a corpus.
type Floor struct {
	Cores int `json:"cores"` // runtime.NumCPU()
	// Seconds = (ECDSA × ECDSA wall median + Schnorr × Schnorr wall
	// median) / Cores: the wall time of the corpus' signature checks alone
	// with every core verifying.
	Seconds float64 `json:"seconds"`
	// CPUSeconds = ECDSA × ECDSA thread-CPU median + Schnorr × Schnorr
	// thread-CPU median: the CPU time they need (not divided by cores).
	CPUSeconds float64 `json:"cpu_seconds"`
}

// ComputeFloor applies the definition to a count and a cost.
func ComputeFloor(c SigCount, v *VerifyCost, cores int) Floor {
	f := Floor{Cores: cores}
	add := func(n int64, k *KindCost) {
		if k != nil && n > 0 {
			f.Seconds += float64(n) * k.WallMedianNs / 1e9
			f.CPUSeconds += float64(n) * k.CPUMedianNs / 1e9
		}
	}
	add(c.ECDSA, v.ECDSA)
	add(c.Schnorr, v.Schnorr)
	if cores > 0 {
		f.Seconds /= float64(cores)
	}
	return f
}

// RunFloor is the signature floor of run seq: each kind's verifications
// × its all-core cost from the batches timed just before and just after
// that run (KindCost.AllCoreNs), in seconds; 0 if a side is missing.
func RunFloor(c SigCount, v *VerifyCost, seq int) float64 {
	s := 0.0
	for _, nk := range []struct {
		n int64
		k *KindCost
	}{{c.ECDSA, v.ECDSA}, {c.Schnorr, v.Schnorr}} {
		if nk.k == nil || nk.n == 0 {
			continue
		}
		m := aroundMedian(nk.k.AllCoreNs, nk.k.AllCoreSeq, seq)
		if m == 0 {
			return 0
		}
		s += float64(nk.n) * m / 1e9
	}
	return s
}

// ParallelCost is the verifier's throughput with every core verifying at
// once: one locked OS thread per core, each cycling through the sampled
// signatures of the dominant kind from its own offset. The floor assumes
// the cores together verify Threads× as fast as one thread; on cores that
// share execution units (SMT siblings, a contended host) they do not.
// Each parallel batch is paired with a single-thread batch timed just
// before it, so a burst of load on the host moves both sides of a pair.
type ParallelCost struct {
	Kind    string `json:"kind"` // "ECDSA" or "Schnorr": the kind with more verifications
	Threads int    `json:"threads"`
	// Per pair: SingleNs is one thread's wall ns per verification,
	// WallNs the parallel batch's wall time divided by the verifications
	// all threads completed in it, Speedups SingleNs / WallNs.
	SingleNs     []float64 `json:"single_ns"`
	WallNs       []float64 `json:"wall_ns"`
	Speedups     []float64 `json:"speedups"`
	WallMedianNs float64   `json:"wall_median_ns"`
	// Speedup is the median of Speedups.
	Speedup float64 `json:"speedup"`
	// FloorS is the floor at the measured speed-up: the signatures'
	// single-thread wall time ÷ Speedup (Floor.Seconds × Cores / Speedup).
	FloorS float64 `json:"floor_s"`
}

// MeasureParallelVerify times batches pairs of timed runs of at least
// perBatch each — one thread, then threads goroutines each locked to its
// own OS thread — verifying the samples of the kind with more counted
// verifications, and adds the pairs to into (nil: a new ParallelCost).
// Every verification must succeed.
func MeasureParallelVerify(v script.SigVerifier, c SigCount, ecdsa []ECDSASample, schnorr []SchnorrSample, threads, batches int, perBatch time.Duration, into *ParallelCost) (*ParallelCost, error) {
	kind, n := "ECDSA", len(ecdsa)
	verify, verifyS := sampleVerifiers(v, ecdsa, schnorr)
	if c.Schnorr > c.ECDSA && len(schnorr) > 0 || n == 0 {
		kind, n = "Schnorr", len(schnorr)
		verify = verifyS
	}
	if n == 0 || threads < 1 {
		return into, nil
	}
	if into == nil {
		into = &ParallelCost{Kind: kind, Threads: threads}
	}
	for range batches {
		single, err := timeThreads(1, n, perBatch, verify)
		if err != nil {
			return nil, fmt.Errorf("valbench: %s with %s: %w", kind, v.Name(), err)
		}
		par, err := timeThreads(threads, n, perBatch, verify)
		if err != nil {
			return nil, fmt.Errorf("valbench: %s with %s: %w", kind, v.Name(), err)
		}
		into.SingleNs = append(into.SingleNs, single)
		into.WallNs = append(into.WallNs, par)
		into.Speedups = append(into.Speedups, single/par)
	}
	into.WallMedianNs = bench.Median(into.WallNs)
	into.Speedup = bench.Median(into.Speedups)
	return into, nil
}

// timeThreads runs threads goroutines, each locked to its own OS thread,
// calling verify on the n samples (each from its own offset) for at least
// perBatch, and returns the wall ns per verification of all of them
// together.
func timeThreads(threads, n int, perBatch time.Duration, verify func(i int) bool) (float64, error) {
	var stop, failed atomic.Bool
	counts := make([]int, threads)
	var ready, done sync.WaitGroup
	ready.Add(threads)
	done.Add(threads)
	startGun := make(chan struct{})
	for t := range threads {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ready.Done()
			<-startGun
			i, k := t*n/threads, 0
			for !stop.Load() {
				for range 16 {
					if !verify(i % n) {
						failed.Store(true)
						return
					}
					i++
					k++
				}
				// As the import's script workers do (validate.yieldEvery):
				// without it sysmon retakes each P every 10 ms and polls
				// every 20 µs, preempting the verifiers (about 1.76x
				// instead of 2x).
				runtime.Gosched()
			}
			counts[t] = k
		}()
	}
	ready.Wait()
	start := time.Now()
	close(startGun)
	time.Sleep(perBatch)
	stop.Store(true)
	done.Wait()
	wall := time.Since(start)
	if failed.Load() {
		return 0, errors.New("a sampled signature does not verify")
	}
	total := 0
	for _, k := range counts {
		total += k
	}
	if total == 0 {
		return 0, errors.New("no verification completed")
	}
	return float64(wall.Nanoseconds()) / float64(total), nil
}

// finish sets the floor at the measured speed-up.
func (p *ParallelCost) finish(f Floor) {
	if p.Speedup > 0 {
		p.FloorS = f.Seconds * float64(f.Cores) / p.Speedup
	}
}
