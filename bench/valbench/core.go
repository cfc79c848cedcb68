package valbench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"utxod/bench"
	"utxod/testkit/bitcoind"
)

// KindCore is Bitcoin Core's arm (opt-in: Config.Bitcoind).
const KindCore = "core"

// tipHeightPlaceholder stands for the corpus tip's height in Arm.Argv.
const tipHeightPlaceholder = "{tip_height}"

// coreArm is `bitcoind -loadblock=CORPUS` on a fresh datadir, stopping by
// itself once the active chain reaches the corpus tip (-stopatheight): the
// whole process is measured as the other arms are — start-up (a fresh
// regtest datadir: well under a second), copying the blocks into Core's
// block files and indexing them, connecting them, and the final flush of
// the chainstate at shutdown. -dbcache is the same budget as utxod's
// --cache-mb.
func (c *Config) coreArm() Arm {
	argv := []string{c.Bitcoind, "-datadir=" + datadirPlaceholder}
	argv = append(argv, bitcoind.BaseArgs...)
	argv = append(argv, "-server=0", "-loadblock="+c.Corpus, "-assumevalid="+c.coreAssumeValid(),
		"-dbcache="+strconv.Itoa(c.coreDBCache()), "-stopatheight="+tipHeightPlaceholder, "-logtimemicros=1")
	argv = append(argv, c.CoreArgs...)
	return Arm{Name: KindCore, Kind: KindCore, Store: "leveldb", Argv: argv}
}

func (c *Config) coreAssumeValid() string {
	if c.CoreAssumeValid == "" {
		return "0"
	}
	return c.CoreAssumeValid
}

// coreDBCache is Config.CoreDBCacheMB, else the --cache-mb of UtxodArgs,
// else utxod's default (450 MiB, Core's default -dbcache too).
func (c *Config) coreDBCache() int {
	if c.CoreDBCacheMB > 0 {
		return c.CoreDBCacheMB
	}
	for i, a := range c.UtxodArgs {
		v, ok := strings.CutPrefix(a, "--cache-mb=")
		if !ok && a == "--cache-mb" && i+1 < len(c.UtxodArgs) {
			v, ok = c.UtxodArgs[i+1], true
		}
		if ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n
			}
		}
	}
	return 450
}

// CorePhases are read from the run's debug.log (-logtimemicros): seconds
// from the first log line to the end of start-up ("Done loading"), to the
// end of reading the block file ("Loaded N blocks from external file"),
// to the last tip update, and to "Shutdown: done".
type CorePhases struct {
	ReadyS    float64 `json:"ready_s"`
	LoadedS   float64 `json:"file_loaded_s"`
	LastTipS  float64 `json:"last_tip_s"`
	ShutdownS float64 `json:"shutdown_done_s"`
	// AssumeValidSkipped: the log says scripts were skipped (assume-valid
	// in effect for at least one block).
	AssumeValidSkipped bool `json:"assumevalid_skipped,omitempty"`
}

var (
	logTimeRE = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) (.*)$`)
)

func readCorePhases(path string) (*CorePhases, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var p CorePhases
	var t0 time.Time
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := logTimeRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			continue
		}
		if t0.IsZero() {
			t0 = t
		}
		s, msg := t.Sub(t0).Seconds(), m[2]
		switch {
		case strings.Contains(msg, "Done loading"):
			p.ReadyS = s
		case strings.Contains(msg, "blocks from external file"):
			p.LoadedS = s
		case strings.Contains(msg, "UpdateTip:"):
			p.LastTipS = s
		case strings.Contains(msg, "Shutdown: done") || strings.Contains(msg, "Shutdown done"):
			p.ShutdownS = s
		case strings.Contains(msg, "Disabling script verification"):
			p.AssumeValidSkipped = true
		}
	}
	return &p, sc.Err()
}

// coreAfter restarts bitcoind on the run's datadir (not measured) and
// records its gettxoutsetinfo muhash as the run's output, in the field
// names of utxod's --json (bench.Digests), with the phases of its
// debug.log.
func coreAfter(bin string) func(ctx context.Context, s bench.Step, dir, datadir string, rec *bench.Record) {
	return func(ctx context.Context, _ bench.Step, _, datadir string, rec *bench.Record) {
		phases, _ := readCorePhases(filepath.Join(datadir, "regtest", "debug.log"))
		n, err := bitcoind.Start(ctx, bin, datadir, "-assumevalid=0")
		if err != nil {
			rec.Fail(fmt.Errorf("restarting bitcoind for gettxoutsetinfo: %w", err))
			return
		}
		info, err := n.TxOutSetInfo(ctx, "muhash")
		if serr := n.Stop(ctx); err == nil {
			err = serr
		}
		if err != nil {
			rec.Fail(fmt.Errorf("gettxoutsetinfo: %w", err))
			return
		}
		out := map[string]any{
			"height": info.Height, "bestblock": info.BestBlock, "txouts": info.TxOuts,
			"transactions": info.Transactions, "bogosize": info.BogoSize,
			"total_amount_sat": int64(math.Round(info.TotalAmount * 1e8)), "muhash": info.MuHash,
			"core_phases": phases,
		}
		rec.Stdout, _ = json.Marshal(out)
	}
}

// coreVersion is the version bitcoind -version prints ("v31.99.0-…").
func coreVersion(ctx context.Context, bin string) string {
	out, err := exec.CommandContext(ctx, bin, "-version").Output()
	if err != nil {
		return ""
	}
	for _, f := range strings.Fields(strings.SplitN(string(out), "\n", 2)[0]) {
		if len(f) > 1 && f[0] == 'v' && f[1] >= '0' && f[1] <= '9' {
			return f
		}
	}
	return ""
}
