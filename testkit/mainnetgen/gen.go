package mainnetgen

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"utxod/params"
	"utxod/wire"
)

// Config says what to generate.
type Config struct {
	Coins   uint64 // coins in the set (≥ 1)
	Seed    uint64
	Network string // regtest (with a valid header chain) or main
	// Height is the base block's height (default DefaultHeight); every coin
	// is at a height in [1, Height].
	Height int32
	// Workers is the number of MuHash goroutines (default GOMAXPROCS).
	Workers int
	// Progress, if set, is called now and then with the coins written.
	Progress func(done, total uint64)
	// Blocks on top of the snapshot (regtest only; see blocks.go).
	Blocks BlockConfig
}

// DefaultHeight is the base height by default: mainnet's around December
// 2024, when its UTXO set peaked near 185 M coins.
const DefaultHeight = 880_000

// Files written into the output directory.
const (
	SnapshotFile = "utxo.dat"
	HeadersFile  = "headers.dat"
	ExpectFile   = "expect.json"
	BlocksFile   = "blocks.dat"
	// spendableFile lists the coins paying a pool key while the snapshot is
	// written (removed once the blocks are built).
	spendableFile = "spendable.tmp"
)

// Expect is DIR/expect.json: what the files hold, from the generator's own
// computation.
type Expect struct {
	Generator    string `json:"generator"`
	Network      string `json:"network"`
	Seed         uint64 `json:"seed"`
	Height       int32  `json:"height"`
	BaseHash     string `json:"base_hash"`
	Coins        uint64 `json:"coins"`
	Digests             // txouts, transactions, bogosize, total_amount (sat), hash_serialized_3, muhash
	TotalBTC     string `json:"total_amount_btc"`
	Snapshot     File   `json:"snapshot"`
	Headers      *File  `json:"headers"` // null on main: no valid header chain can be made
	HeaderFormat string `json:"headers_format,omitempty"`
	Shape        Shape  `json:"shape"`
	// Spendable counts the coins paying a key of the generator's pool
	// (KeyPool keys), the coins the blocks can spend.
	Spendable uint64        `json:"spendable_coins"`
	KeyPool   int           `json:"key_pool"`
	Blocks    *BlocksExpect `json:"blocks,omitempty"`
	Seconds   float64       `json:"seconds"`
}

// File is a written file.
type File struct {
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	Count  uint64 `json:"count,omitempty"` // headers
}

// Shape is what the set looks like, as generated.
type Shape struct {
	Types         map[string]uint64 `json:"types"` // coins per script type
	Eras          map[string]uint64 `json:"eras"`  // txids per era
	CoinbaseCoins uint64            `json:"coinbase_coins"`
	DustCoins     uint64            `json:"dust_coins"` // value < 1,000 sat
	MaxCoinHeight int32             `json:"max_coin_height"`
	MaxGroup      uint64            `json:"max_group"`       // coins of the biggest txid
	GroupsOver252 uint64            `json:"groups_over_252"` // txids whose count is a 3-byte CompactSize
	HugeTxid      string            `json:"huge_txid,omitempty"`
	HugeCoins     uint64            `json:"huge_coins,omitempty"`
	HugeMaxVout   uint32            `json:"huge_max_vout,omitempty"`
	HugeVoutsOver uint64            `json:"huge_vouts_ge_16512,omitempty"`
	LongScripts   uint64            `json:"scripts_ge_122_bytes"` // raw scripts needing a 2-byte VARINT length
	Whales        []Whale           `json:"whales"`
}

// coin is one output of the group being built.
type coin struct {
	vout   uint32
	value  uint64
	script []byte
	key    int64 // pool key paid, −1 for none
	typ    ScriptType
}

type generator struct {
	cfg    Config
	r      *rng
	n      uint64
	height int64
	whales []Whale
	wbytes [][]byte
	wleft  []uint64
	wtotal uint64
	wgot   []uint64 // coins given to each whale
	// decided counts the coins drawn so far (for the whales' sampling).
	decided uint64
	shape   Shape
	// The group being built.
	arena []byte
	coins []coin
	order []int
	keys  [][]byte
	buf   []byte
	// Pool-key coins: drawn from their own stream (sr) so that the rest of
	// the set does not move; listed in side while the snapshot is written.
	pool      *keyPool
	sr        *rng
	ppm       uint64
	side      *bufio.Writer
	spendable uint64
}

// sink takes the coins in Core's hashing order.
type sink interface {
	add(txid *[32]byte, vout, code uint32, value uint64, script []byte)
	endTx()
}

// newGenerator returns the generator of cfg (the same draws every time).
func newGenerator(cfg Config, pool *keyPool) *generator {
	g := &generator{cfg: cfg, r: newRNG(cfg.Seed, 1), n: cfg.Coins, height: int64(cfg.Height),
		pool: pool, sr: newRNG(cfg.Seed, 3), ppm: spendablePPM(cfg.Coins)}
	g.shape.Types = make(map[string]uint64)
	g.shape.Eras = make(map[string]uint64)
	g.initWhales()
	return g
}

// Generate writes DIR/utxo.dat, DIR/headers.dat (regtest) and
// DIR/expect.json and returns what expect.json holds.
func Generate(cfg Config, dir string) (*Expect, error) {
	start := time.Now()
	if cfg.Coins == 0 {
		return nil, errors.New("mainnetgen: want at least one coin")
	}
	if cfg.Height == 0 {
		cfg.Height = DefaultHeight
	}
	if cfg.Height < 1 {
		return nil, fmt.Errorf("mainnetgen: height %d: want at least 1", cfg.Height)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	var p *params.Params
	switch cfg.Network {
	case "", "regtest":
		cfg.Network, p = "regtest", params.RegTest()
	case "main":
		p = params.MainNet()
	default:
		return nil, fmt.Errorf("mainnetgen: network %q: want regtest or main", cfg.Network)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	exp := &Expect{Generator: "utxod/testkit/mainnetgen v1", Network: cfg.Network, Seed: cfg.Seed, Height: cfg.Height, Coins: cfg.Coins}

	// The header chain first: the snapshot's header names its base block.
	var base wire.Hash
	if cfg.Network == "regtest" {
		hf, b, err := writeHeaders(filepath.Join(dir, HeadersFile), p, cfg.Height, cfg.Seed)
		if err != nil {
			return nil, err
		}
		base, exp.Headers = b, hf
		exp.HeaderFormat = "raw 80-byte headers from height 1 to the base, as Core's REST /rest/headers returns them"
	} else {
		// No header chain can meet mainnet's proof of work: the base is a
		// made-up hash, and the height has to be given to a loader.
		os.Remove(filepath.Join(dir, HeadersFile))
		var seed [8 + 4]byte
		binary.LittleEndian.PutUint64(seed[:], cfg.Seed)
		binary.LittleEndian.PutUint32(seed[8:], uint32(cfg.Height))
		base = wire.DoubleSHA256(append([]byte("mainnetgen base block"), seed[:]...))
	}
	exp.BaseHash = base.String()

	pool := newKeyPool(cfg.Seed, keyPoolSize(cfg.Coins))
	g := newGenerator(cfg, pool)
	sidePath := filepath.Join(dir, spendableFile)
	sf, err := os.Create(sidePath)
	if err != nil {
		return nil, err
	}
	defer os.Remove(sidePath)
	g.side = bufio.NewWriterSize(sf, 1<<20)

	f, err := os.Create(filepath.Join(dir, SnapshotFile))
	if err != nil {
		sf.Close()
		return nil, err
	}
	fh := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, fh)}
	w := bufio.NewWriterSize(cw, 4<<20)
	d := newDigests(cfg.Workers)
	err = g.run(w, d, p.Magic, base)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = g.side.Flush()
	}
	if cerr := sf.Close(); err == nil {
		err = cerr
	}
	dg, mu := d.finish()
	if err != nil {
		return nil, err
	}
	exp.Spendable, exp.KeyPool = g.spendable, len(pool.keys)
	exp.Digests = dg
	exp.TotalBTC = fmt.Sprintf("%d.%08d", dg.TotalAmount/100_000_000, dg.TotalAmount%100_000_000)
	exp.Snapshot = File{Name: SnapshotFile, Bytes: cw.n, SHA256: hex.EncodeToString(fh.Sum(nil))}
	for i := range g.whales {
		g.whales[i].Coins = g.wgot[i] // as drawn (a coinbase coin never pays a whale)
	}
	g.shape.Whales = g.whales
	exp.Shape = g.shape
	if cfg.Network == "regtest" && cfg.Blocks.total() > 0 {
		bs := &blockSet{cfg: cfg, p: p, pool: pool, base: base, baseMu: mu, spendable: g.spendable, sidePath: sidePath}
		if exp.Blocks, err = bs.build(dir); err != nil {
			return nil, err
		}
	} else {
		os.Remove(filepath.Join(dir, BlocksFile))
	}
	exp.Seconds = time.Since(start).Seconds()
	out, err := json.MarshalIndent(exp, "", "  ")
	if err != nil {
		return nil, err
	}
	return exp, os.WriteFile(filepath.Join(dir, ExpectFile), append(out, '\n'), 0o644)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// initWhales sizes the whales and draws their scripts.
func (g *generator) initWhales() {
	g.whales = whaleSpec(g.n)
	r := newRNG(g.cfg.Seed, 2)
	for i := range g.whales {
		w := &g.whales[i]
		var t ScriptType
		for k, name := range typeNames {
			if name == w.Type {
				t = ScriptType(k)
			}
		}
		s := makeScript(r, t, nil)
		w.Script = hex.EncodeToString(s)
		g.wbytes = append(g.wbytes, s)
		g.wleft = append(g.wleft, w.Coins)
		g.wtotal += w.Coins
	}
	g.wgot = make([]uint64, len(g.whales))
}

// run writes the snapshot: the 51-byte header, then the txid groups in
// ascending raw txid order.
// With w nil nothing is written: the coins only go to d.
func (g *generator) run(w *bufio.Writer, d sink, magic [4]byte, base wire.Hash) error {
	if w != nil {
		var hdr []byte
		hdr = append(hdr, 'u', 't', 'x', 'o', 0xff)
		hdr = binary.LittleEndian.AppendUint16(hdr, 2)
		hdr = append(hdr, magic[:]...)
		hdr = append(hdr, base[:]...)
		hdr = binary.LittleEndian.AppendUint64(hdr, g.n)
		if _, err := w.Write(hdr); err != nil {
			return err
		}
	}
	hugeAt, huge := uint64(0), g.n >= HugeMinCoins
	if huge {
		hugeAt = g.r.below(g.n - HugeCoins + 1)
	}
	lastReport := time.Now()
	var done uint64
	for done < g.n {
		left := g.n - done
		var size uint64
		isHuge := false
		if huge && done >= hugeAt {
			size, isHuge, huge = HugeCoins, true, false
		} else {
			size = g.groupSize()
			if huge && done+size > hugeAt {
				size = hugeAt - done // leave room: the big txid starts at hugeAt
			}
			if size == 0 {
				continue
			}
			size = min(size, left)
		}
		n, err := g.group(w, d, done, size, isHuge)
		if err != nil {
			return err
		}
		done += n
		if g.cfg.Progress != nil && time.Since(lastReport) > time.Second {
			lastReport = time.Now()
			g.cfg.Progress(done, g.n)
		}
	}
	if g.cfg.Progress != nil {
		g.cfg.Progress(done, g.n)
	}
	return nil
}

// groupSize draws the number of coins of a txid.
func (g *generator) groupSize() uint64 {
	u := g.r.below(1_000_000)
	for _, s := range groupSizes {
		if u < s.cum {
			if s.lo == s.hi {
				return s.lo
			}
			return g.r.logUniform(s.lo, s.hi)
		}
	}
	return 1
}

// txid returns the txid of the group starting at coin index at: its first
// eight raw bytes are at·2^64/n plus a jitter smaller than the step to the
// next coin index, so txids ascend with the coin index and spread
// uniformly; the other 24 bytes are random.
func (g *generator) txid(at uint64) [32]byte {
	lo, _ := bits.Div64(at, 0, g.n)
	var hi uint64
	if at+1 < g.n {
		hi, _ = bits.Div64(at+1, 0, g.n)
	} else {
		hi = ^uint64(0)
	}
	v := lo + g.r.below(hi-lo)
	var t [32]byte
	binary.BigEndian.PutUint64(t[:8], v)
	g.r.fill(t[8:])
	return t
}

// group builds, hashes and writes one txid with size coins (one if it
// turns out a coinbase) and returns its number of coins.
func (g *generator) group(w *bufio.Writer, d sink, at, size uint64, isHuge bool) (uint64, error) {
	txid := g.txid(at)
	// Era, height, coinbase.
	var e *era
	if isHuge {
		e = &eras[len(eras)-1] // a recent batch payout
	} else {
		u := g.r.below(1_000_000)
		for i := range eras {
			e = &eras[i]
			if u < e.share {
				break
			}
			u -= e.share
		}
	}
	lo, hi := g.height*e.lo/1000+1, g.height*e.hi/1000
	hi = max(min(hi, g.height), 1)
	lo = min(max(lo, 1), hi)
	height := int64(g.r.between(uint64(lo), uint64(hi)))
	coinbase := !isHuge && g.r.perMillion(e.coinbase)
	if coinbase {
		size = 1
	}
	g.shape.Eras[e.name]++
	code := uint32(height)<<1 | b2u(coinbase)

	// Vouts, ascending.
	g.coins = g.coins[:0]
	g.arena = g.arena[:0]
	switch {
	case isHuge:
		need := uint64(HugeCoins)
		for v := uint64(0); v < HugeVouts && need > 0; v++ {
			if g.r.below(HugeVouts-v) < need {
				g.coins = append(g.coins, coin{vout: uint32(v), key: -1})
				need--
			}
		}
	case size == 1:
		v := uint32(0)
		if !coinbase {
			switch u := g.r.below(100); {
			case u < 35:
				v = 1
			case u < 45:
				v = uint32(g.r.between(2, 5))
			}
		}
		g.coins = append(g.coins, coin{vout: v, key: -1})
	default:
		total := size + g.r.below(size/4+2)
		need := size
		for v := uint64(0); v < total && need > 0; v++ {
			if g.r.below(total-v) < need {
				g.coins = append(g.coins, coin{vout: uint32(v), key: -1})
				need--
			}
		}
	}

	// Scripts and values; digests in numeric vout order (Core's
	// ComputeUTXOStats regroups a txid's coins into a std::map).
	type span struct{ off, n int }
	spans := make([]span, 0, len(g.coins))
	for i := range g.coins {
		c := &g.coins[i]
		var t ScriptType
		off := len(g.arena)
		wi, whale := 0, false
		if !coinbase {
			wi, whale = g.pickWhale()
		}
		g.decided++
		if whale {
			g.wgot[wi]++
			t = typeOf(g.whales[wi].Type)
			g.arena = append(g.arena, g.wbytes[wi]...)
			if g.whales[wi].Tier == 1_000_000 {
				c.value = 546 // a dust-attacked address
			} else {
				c.value = g.value(t, e)
			}
		} else {
			if coinbase {
				t = coinbaseType(e, height, g.height)
				g.arena = append(g.arena, makeScript(g.r, t, nil)...)
				c.value = subsidy(height)
				if e.name == "recent" {
					c.value += g.r.below(50_000_000)
				}
			} else {
				weights := &e.weights
				if isHuge {
					weights = &overallWeights
				}
				t = g.scriptType(weights)
				g.arena = append(g.arena, makeScript(g.r, t, nil)...)
				c.value = g.value(t, e)
				if spendableType(t) && g.sr.perMillion(g.ppm) {
					// A pool key's script instead of the random one (the
					// same length: the main stream's draws are unchanged).
					c.key = int64(g.sr.below(uint64(len(g.pool.keys))))
					g.arena = g.pool.appendScript(g.arena[:off], t, uint32(c.key))
				}
			}
		}
		c.typ = t
		spans = append(spans, span{off, len(g.arena) - off})
		g.shape.Types[t.String()]++
		if c.value < 1000 {
			g.shape.DustCoins++
		}
	}
	for i := range g.coins {
		g.coins[i].script = g.arena[spans[i].off : spans[i].off+spans[i].n]
	}
	for _, c := range g.coins {
		d.add(&txid, c.vout, code, c.value, c.script)
		if len(c.script) >= 122 && !compressible(c.script) {
			g.shape.LongScripts++
		}
		if c.key >= 0 {
			g.spendable++
			if g.side != nil {
				r := spendRec{txid: txid, vout: c.vout, code: code, value: c.value, key: uint32(c.key), typ: c.typ}
				if _, err := g.side.Write(r.append(g.buf[:0])); err != nil {
					return 0, err
				}
			}
		}
	}
	d.endTx()
	if w == nil {
		return uint64(len(g.coins)), nil
	}
	if coinbase {
		g.shape.CoinbaseCoins += uint64(len(g.coins))
	}
	g.shape.MaxCoinHeight = max(g.shape.MaxCoinHeight, int32(height))
	g.shape.MaxGroup = max(g.shape.MaxGroup, uint64(len(g.coins)))
	if len(g.coins) > 252 {
		g.shape.GroupsOver252++
	}
	maxVout := g.coins[len(g.coins)-1].vout
	if isHuge {
		g.shape.HugeTxid = displayHex(txid)
		g.shape.HugeCoins = uint64(len(g.coins))
		g.shape.HugeMaxVout = maxVout
		for _, c := range g.coins {
			if c.vout >= 16512 {
				g.shape.HugeVoutsOver++
			}
		}
	}

	// The file's order: Core's coins cursor walks keys 'C' ‖ txid ‖
	// VARINT(vout) bytewise, which differs from numeric order once a vout
	// needs three VARINT bytes (16,512 and up).
	g.order = g.order[:0]
	for i := range g.coins {
		g.order = append(g.order, i)
	}
	if maxVout >= 16512 {
		g.keys = g.keys[:0]
		for _, c := range g.coins {
			g.keys = append(g.keys, appendVarInt(nil, uint64(c.vout)))
		}
		slices.SortFunc(g.order, func(a, b int) int { return bytes.Compare(g.keys[a], g.keys[b]) })
	}
	b := append(g.buf[:0], txid[:]...)
	b = appendCompactSize(b, uint64(len(g.coins)))
	for _, i := range g.order {
		c := &g.coins[i]
		b = appendCompactSize(b, uint64(c.vout))
		b = appendVarInt(b, uint64(code))
		b = appendVarInt(b, compressAmount(c.value))
		b = appendCompressedScript(b, c.script)
	}
	g.buf = b
	_, err := w.Write(b)
	return uint64(len(g.coins)), err
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

func typeOf(name string) ScriptType {
	for k, n := range typeNames {
		if n == name {
			return ScriptType(k)
		}
	}
	panic("mainnetgen: unknown script type " + name)
}

// compressible reports whether Core's ScriptCompression has a special
// form for s.
func compressible(s []byte) bool {
	return len(appendCompressedScript(nil, s)) < len(s)
}

// pickWhale decides whether the next coin pays a whale (selection sampling:
// exactly each whale's coins over the set) and which.
func (g *generator) pickWhale() (int, bool) {
	if g.wtotal == 0 {
		return 0, false
	}
	// coins left to decide: the set's minus those decided; kept implicit
	// through the whale counters and a running count.
	left := g.n - g.decided
	if g.r.below(left) >= g.wtotal {
		return 0, false
	}
	u := g.r.below(g.wtotal)
	for i, l := range g.wleft {
		if u < l {
			g.wleft[i]--
			g.wtotal--
			return i, true
		}
		u -= l
	}
	return 0, false
}

// scriptType draws a type by weights (per 10,000).
func (g *generator) scriptType(w *[numTypes]uint64) ScriptType {
	var sum uint64
	for _, x := range w {
		sum += x
	}
	u := g.r.below(sum)
	for t, x := range w {
		if u < x {
			return ScriptType(t)
		}
		u -= x
	}
	return P2WPKH
}

// value draws an output value: the type's spikes, else log-normal by era,
// a fifth rounded to two significant digits, within [1, 10,000 BTC].
func (g *generator) value(t ScriptType, e *era) uint64 {
	u := g.r.below(10_000)
	for _, s := range spikes[t] {
		if u < s.per10k {
			return s.value
		}
		u -= s.per10k
	}
	v := min(max(g.r.logNormal(e.mu, e.sigma), 1), 1_000_000_000_000)
	if g.r.below(5) == 0 {
		p := uint64(1)
		for v/p >= 100 {
			p *= 10
		}
		v = max(v/p*p, 1)
	}
	return v
}

// coinbaseType is the script of a coinbase output: P2PK with an
// uncompressed key in the first fifth of the chain (Satoshi's era), then
// P2PKH, P2WPKH once segwit is common.
func coinbaseType(e *era, h, base int64) ScriptType {
	switch {
	case h*5 < base:
		return P2PKUncompressed
	case e.name == "recent":
		return P2WPKH
	}
	return P2PKH
}

// subsidy is mainnet's block subsidy at height h.
func subsidy(h int64) uint64 {
	halvings := h / 210_000
	if halvings >= 64 {
		return 0
	}
	return 50 * 100_000_000 >> halvings
}

// makeScript appends a random script of type t to dst.
func makeScript(r *rng, t ScriptType, dst []byte) []byte {
	var k [65]byte
	switch t {
	case P2TR:
		r.fill(k[:32])
		return append(append(dst, 0x51, 0x20), k[:32]...)
	case P2WPKH:
		r.fill(k[:20])
		return append(append(dst, 0x00, 0x14), k[:20]...)
	case P2PKH:
		r.fill(k[:20])
		return append(append(append(dst, 0x76, 0xa9, 0x14), k[:20]...), 0x88, 0xac)
	case P2SH:
		r.fill(k[:20])
		return append(append(append(dst, 0xa9, 0x14), k[:20]...), 0x87)
	case P2WSH:
		r.fill(k[:32])
		return append(append(dst, 0x00, 0x20), k[:32]...)
	case P2PKCompressed:
		compressedKey(r, k[:33])
		return append(append(append(dst, 0x21), k[:33]...), 0xac)
	case P2PKUncompressed:
		uncompressedKey(r, k[:])
		return append(append(append(dst, 0x41), k[:]...), 0xac)
	case Multisig:
		// 1-of-2 or 1-of-3, now and then with an uncompressed key (Counterparty
		// and Stamps style data outputs are 1-of-3).
		n := 2 + r.below(2)
		dst = append(dst, 0x51)
		for i := range n {
			if i == n-1 && r.below(5) == 0 {
				uncompressedKey(r, k[:])
				dst = append(append(dst, 0x41), k[:]...)
			} else {
				compressedKey(r, k[:33])
				dst = append(append(dst, 0x21), k[:33]...)
			}
		}
		return append(dst, 0x50+byte(n), 0xae)
	}
	return nonStandard(r, dst)
}

// compressedKey fills k (33 bytes) with 0x02/0x03 and a random x (Core
// compresses such P2PK without checking the point).
func compressedKey(r *rng, k []byte) {
	k[0] = 0x02 | byte(r.below(2))
	r.fill(k[1:33])
}

// uncompressedKey fills k (65 bytes) with 0x04 and a point of secp256k1.
func uncompressedKey(r *rng, k []byte) {
	k[0] = 0x04
	for {
		r.fill(k[1:33])
		var x, y secp256k1.FieldVal
		if x.SetByteSlice(k[1:33]) {
			continue
		}
		if secp256k1.DecompressY(&x, r.below(2) == 1, &y) {
			y.Normalize().PutBytesUnchecked(k[33:65])
			return
		}
	}
}

// nonStandard appends one of the OP_RETURN-free non-standard scripts seen
// on mainnet (raw in the snapshot).
func nonStandard(r *rng, dst []byte) []byte {
	var b [64]byte
	switch r.below(9) {
	case 0: // OP_TRUE
		return append(dst, 0x51)
	case 1: // a future witness version: OP_2 <32>
		r.fill(b[:32])
		return append(append(dst, 0x52, 0x20), b[:32]...)
	case 2: // a hash puzzle: OP_SHA256 <32> OP_EQUAL
		r.fill(b[:32])
		return append(append(append(dst, 0xa8, 0x20), b[:32]...), 0x87)
	case 3: // P2PK with a hybrid key (0x06/0x07): not compressible
		r.fill(b[:])
		return append(append(append(dst, 0x41, 0x06|byte(r.below(2))), b[:]...), 0xac)
	case 4: // the empty script
		return dst
	case 5: // a data drop, 122 bytes or more (2-byte VARINT length): PUSHDATA2 <n> DROP TRUE
		n := int(r.between(118, 1000))
		dst = append(dst, 0x4d, byte(n), byte(n>>8))
		for range n / 64 {
			r.fill(b[:])
			dst = append(dst, b[:]...)
		}
		r.fill(b[:n%64])
		return append(append(dst, b[:n%64]...), 0x75, 0x51)
	case 6: // P2PK with an uncompressed key off the curve: stored raw
		b[0] = 0x04
		for {
			r.fill(b[1:64])
			var tail [1]byte
			r.fill(tail[:])
			s := append(append([]byte{0x41}, b[:64]...), tail[0], 0xac)
			if !onCurve(s[2:34], s[34:66]) {
				return append(dst, s...)
			}
		}
	case 7: // pay-to-anchor: OP_1 <4e73>
		return append(dst, 0x51, 0x02, 0x4e, 0x73)
	}
	// a witness v1 program of the wrong length (not taproot): OP_1 <20>
	r.fill(b[:20])
	return append(append(dst, 0x51, 0x14), b[:20]...)
}
