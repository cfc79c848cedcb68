package storebench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"utxod/backends"
	_ "utxod/backends/all"
	"utxod/chainstate"
	"utxod/params"
	"utxod/script"
	"utxod/store/kvstore"
	"utxod/validate"
	"utxod/wire"
)

// ConnectConfig configures Connect: replay Files into a fresh datadir.
type ConnectConfig struct {
	Network    string
	Backend    string
	Datadir    string // must not exist yet
	CacheMB    int
	FlushEvery int // explicit flush every this many blocks (0: only when the cache exceeds its budget)
	Files      []string
	// Checkpoints are UTXO-set sizes; the first block at or past each one
	// records a Checkpoint.
	Checkpoints []int64
	// StopUTXOs stops the replay at the first block whose UTXO set reaches
	// it (0: replay everything).
	StopUTXOs int64
}

// Checkpoint is the state when the UTXO set first reached a size.
type Checkpoint struct {
	UTXOs        int64   `json:"utxos"`
	Transactions int64   `json:"transactions"` // txids with unspent outputs
	Height       int32   `json:"height"`
	Seconds      float64 `json:"seconds"`
	// Since the previous checkpoint:
	BlocksPerS  float64 `json:"seg_blocks_per_s"`
	InputsPerS  float64 `json:"seg_inputs_per_s"`
	Flushes     int     `json:"seg_flushes"`
	FlushMaxMs  float64 `json:"seg_flush_max_ms"`
	FlushMeanMs float64 `json:"seg_flush_mean_ms"`
	RSS         int64   `json:"rss"`
	CacheBytes  int64   `json:"cache_bytes"`
}

// ConnectResult is one replay.
type ConnectResult struct {
	Backend      string  `json:"backend"`
	CacheMB      int     `json:"cache_mb"`
	FlushEvery   int     `json:"flush_every"`
	Blocks       int     `json:"blocks"`
	Inputs       int64   `json:"inputs"`
	Seconds      float64 `json:"seconds"` // replay including the final flush
	BlocksPerS   float64 `json:"blocks_per_s"`
	InputsPerS   float64 `json:"inputs_per_s"`
	Flushes      int     `json:"flushes"`
	FlushP50Ms   float64 `json:"flush_p50_ms"`
	FlushP95Ms   float64 `json:"flush_p95_ms"`
	FlushMaxMs   float64 `json:"flush_max_ms"`
	FinalFlushMs float64 `json:"final_flush_ms"`
	UTXOs        int64   `json:"utxos"`
	Transactions int64   `json:"transactions"`
	Height       int32   `json:"height"`
	// Memory (bytes). Baseline: after opening the store and the chainstate,
	// before the first block. PreFlush: after the last block and a GC,
	// before the final flush (pending undo/block data included unless
	// FlushEvery flushed them). Peak: VmHWM at the end.
	RSSBaseline   int64   `json:"rss_baseline"`
	RSSPreFlush   int64   `json:"rss_pre_flush"`
	RSSPostFlush  int64   `json:"rss_post_flush"` // after the final flush and a GC
	RSSPeak       int64   `json:"rss_peak"`
	HeapBaseline  int64   `json:"heap_baseline"`   // runtime HeapAlloc after GC
	HeapPostFlush int64   `json:"heap_post_flush"` // after the final flush and GC: the cache (clean) + index
	CacheBytes    int64   `json:"cache_bytes"`     // the cache's own estimate before the final flush
	CacheHeldAll  bool    `json:"cache_held_all"`  // the cache never exceeded its budget
	RSSPerOutput  float64 `json:"rss_per_output"`  // (RSSPostFlush − RSSBaseline)/UTXOs, when CacheHeldAll
	// Dropping the coins cache (kvstore.Store.Close) after the final flush, then
	// GC and FreeOSMemory: what RSS and the live heap give back is the
	// cache's own footprint, without the store's memtables and caches.
	RSSCacheDrop       int64   `json:"rss_cache_drop"`
	HeapCacheDrop      int64   `json:"heap_cache_drop"`
	CacheRSSPerOutput  float64 `json:"cache_rss_per_output"`
	CacheHeapPerOutput float64 `json:"cache_heap_per_output"`
	PeakRSSPerOutput   float64 `json:"peak_rss_per_output"`
	HeapPerOutput      float64 `json:"heap_per_output"`
	CacheEstPerOutput  float64 `json:"cache_estimate_per_output"`
	DiskBytes          int64   `json:"disk_bytes"` // datadir after close (apparent size)
	DiskAlloc          int64   `json:"disk_alloc"` // datadir after close (allocated blocks)

	Checkpoints []Checkpoint `json:"checkpoints,omitempty"`
}

func newChainstate(network, backend, dir string, cacheMB int) (*chainstate.Chainstate, backends.KV, *kvstore.Store, error) {
	p, err := params.ByName(network)
	if err != nil {
		return nil, nil, nil, err
	}
	// The same store options as `utxod import` (node.BackendOptions): block cache a
	// quarter of the coins cache.
	kv, err := backends.Open(backend, dir, backends.Options{CacheBytes: int64(cacheMB) << 20 / 4})
	if err != nil {
		return nil, nil, nil, err
	}
	// Blocks and undo records stay in the KV: the benchmark measures the
	// store alone.
	st, err := kvstore.Open(kv, kvstore.Options{CacheBytes: int64(cacheMB) << 20})
	if err != nil {
		kv.Close()
		return nil, nil, nil, err
	}
	cs, err := chainstate.New(chainstate.Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: st})
	if err != nil {
		kv.Close()
		return nil, nil, nil, err
	}
	return cs, kv, st, nil
}

// Connect replays cfg.Files into a fresh datadir and measures it.
func Connect(cfg ConnectConfig) (*ConnectResult, error) {
	if _, err := os.Stat(cfg.Datadir); err == nil {
		return nil, fmt.Errorf("storebench: %s exists; connect wants a fresh datadir", cfg.Datadir)
	}
	p, err := params.ByName(cfg.Network)
	if err != nil {
		return nil, err
	}
	cs, kv, store, err := newChainstate(cfg.Network, cfg.Backend, cfg.Datadir, cfg.CacheMB)
	if err != nil {
		return nil, err
	}
	defer kv.Close()
	res := &ConnectResult{Backend: cfg.Backend, CacheMB: cfg.CacheMB, FlushEvery: cfg.FlushEvery, CacheHeldAll: true}
	var flushes []time.Duration
	cs.OnFlush = func(d time.Duration) { flushes = append(flushes, d) }
	runtime.GC()
	res.HeapBaseline = heapAlloc()
	res.RSSBaseline, _ = procStatus()
	budget := int64(cfg.CacheMB) << 20

	start := time.Now()
	seg := struct {
		t       time.Time
		blocks  int
		inputs  int64
		flushes int
	}{t: start}
	cps := slices.Clone(cfg.Checkpoints)
	slices.Sort(cps)
	stop := false
	for _, name := range cfg.Files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		r := wire.NewBlockFileReader(bufio.NewReaderSize(f, 4<<20), p.Magic)
		for !stop {
			raw, _, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				f.Close()
				return nil, err
			}
			nf := len(flushes)
			br, err := cs.ProcessBlock(raw)
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("height %d: %w", br.Height, err)
			}
			res.Blocks++
			res.Inputs += int64(br.Inputs)
			seg.blocks++
			seg.inputs += int64(br.Inputs)
			if cfg.FlushEvery > 0 && res.Blocks%cfg.FlushEvery == 0 {
				if err := cs.Flush(); err != nil {
					f.Close()
					return nil, err
				}
			}
			if len(flushes) > nf && cs.CacheBytes() == 0 {
				res.CacheHeldAll = false // a flush over budget cleared the cache
			}
			st := cs.Stats()
			utxos := int64(st.TxOuts)
			for len(cps) > 0 && utxos >= cps[0] {
				now := time.Now()
				el := now.Sub(seg.t).Seconds()
				cp := Checkpoint{UTXOs: utxos, Transactions: int64(st.Transactions), Height: int32(st.Height),
					Seconds: now.Sub(start).Seconds(), BlocksPerS: float64(seg.blocks) / el, InputsPerS: float64(seg.inputs) / el,
					Flushes: len(flushes) - seg.flushes, CacheBytes: cs.CacheBytes()}
				cp.RSS, _ = procStatus()
				if fl := flushes[seg.flushes:]; len(fl) > 0 {
					var sum time.Duration
					for _, d := range fl {
						sum += d
						cp.FlushMaxMs = max(cp.FlushMaxMs, ms(d))
					}
					cp.FlushMeanMs = ms(sum) / float64(len(fl))
				}
				res.Checkpoints = append(res.Checkpoints, cp)
				cps = cps[1:]
				seg.t, seg.blocks, seg.inputs, seg.flushes = now, 0, 0, len(flushes)
			}
			if cfg.StopUTXOs > 0 && utxos >= cfg.StopUTXOs {
				stop = true
			}
		}
		f.Close()
	}
	res.CacheBytes = cs.CacheBytes()
	if res.CacheBytes > budget {
		res.CacheHeldAll = false
	}
	runtime.GC()
	res.RSSPreFlush, _ = procStatus()
	ff := time.Now()
	if err := cs.Flush(); err != nil {
		return nil, err
	}
	res.FinalFlushMs = ms(time.Since(ff))
	res.Seconds = time.Since(start).Seconds()
	debug.FreeOSMemory()
	res.HeapPostFlush = heapAlloc()
	res.RSSPostFlush, res.RSSPeak = procStatus()
	st := cs.Stats()
	res.UTXOs, res.Transactions, res.Height = int64(st.TxOuts), int64(st.Transactions), int32(st.Height)
	res.BlocksPerS = float64(res.Blocks) / res.Seconds
	res.InputsPerS = float64(res.Inputs) / res.Seconds
	res.Flushes = len(flushes)
	if len(flushes) > 0 {
		res.FlushP50Ms = ms(percentile(flushes, 0.50))
		res.FlushP95Ms = ms(percentile(flushes, 0.95))
		res.FlushMaxMs = ms(slices.Max(flushes))
	}
	if res.UTXOs > 0 {
		n := float64(res.UTXOs)
		res.CacheEstPerOutput = float64(res.CacheBytes) / n
		if res.CacheHeldAll {
			res.RSSPerOutput = float64(res.RSSPostFlush-res.RSSBaseline) / n
			res.PeakRSSPerOutput = float64(res.RSSPeak-res.RSSBaseline) / n
			res.HeapPerOutput = float64(res.HeapPostFlush-res.HeapBaseline) / n
		}
	}
	store.Close()
	debug.FreeOSMemory()
	rss, _ := procStatus()
	res.RSSCacheDrop = res.RSSPostFlush - rss
	res.HeapCacheDrop = res.HeapPostFlush - heapAlloc()
	if res.UTXOs > 0 && res.CacheHeldAll {
		res.CacheRSSPerOutput = float64(res.RSSCacheDrop) / float64(res.UTXOs)
		res.CacheHeapPerOutput = float64(res.HeapCacheDrop) / float64(res.UTXOs)
	}
	if err := kv.Close(); err != nil {
		return nil, err
	}
	res.DiskBytes, res.DiskAlloc, err = DirSize(cfg.Datadir)
	return res, err
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func percentile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}

func heapAlloc() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// procStatus returns VmRSS and VmHWM of this process in bytes (0 off Linux).
func procStatus() (rss, hwm int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = n << 10
		case "VmHWM:":
			hwm = n << 10
		}
	}
	return rss, hwm
}

// DirSize is the apparent and allocated size of every regular file under dir.
func DirSize(dir string) (apparent, alloc int64, err error) {
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		apparent += fi.Size()
		alloc += allocated(fi)
		return nil
	})
	return apparent, alloc, err
}
