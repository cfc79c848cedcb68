package mainnetgen

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"utxod/params"
	"utxod/validate"
	"utxod/wire"
)

// The shared set of the shape, decode, headers and end-to-end tests.
const (
	sharedCoins  = 200_000
	sharedSeed   = 7
	sharedHeight = 6_000
)

var (
	sharedOnce sync.Once
	sharedDir  string
	sharedExp  *Expect
	sharedErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

// shared generates the 200k-coin set once per test run.
func shared(t *testing.T) (string, *Expect) {
	t.Helper()
	sharedOnce.Do(func() {
		sharedDir, sharedErr = os.MkdirTemp("", "mainnetgen-")
		if sharedErr != nil {
			return
		}
		start := time.Now()
		sharedExp, sharedErr = Generate(Config{Coins: sharedCoins, Seed: sharedSeed, Height: sharedHeight}, sharedDir)
		t.Logf("generated %d coins in %.2fs", sharedCoins, time.Since(start).Seconds())
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedDir, sharedExp
}

func fileSHA(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestDeterministic: the same seed gives the same bytes whatever the number
// of MuHash workers; another seed gives another set.
func TestDeterministic(t *testing.T) {
	base := t.TempDir()
	var exps []*Expect
	for i, c := range []Config{
		{Coins: 50_000, Seed: 3, Height: 3_000, Workers: 1},
		{Coins: 50_000, Seed: 3, Height: 3_000, Workers: 3},
		{Coins: 50_000, Seed: 4, Height: 3_000, Workers: 2},
	} {
		dir := filepath.Join(base, string(rune('a'+i)))
		e, err := Generate(c, dir)
		if err != nil {
			t.Fatal(err)
		}
		exps = append(exps, e)
	}
	a, b, c := filepath.Join(base, "a"), filepath.Join(base, "b"), filepath.Join(base, "c")
	for _, name := range []string{SnapshotFile, HeadersFile} {
		if fileSHA(t, filepath.Join(a, name)) != fileSHA(t, filepath.Join(b, name)) {
			t.Errorf("%s differs between two runs of the same seed", name)
		}
		if fileSHA(t, filepath.Join(a, name)) == fileSHA(t, filepath.Join(c, name)) {
			t.Errorf("%s is the same for seeds 3 and 4", name)
		}
	}
	exps[0].Seconds, exps[1].Seconds = 0, 0
	ja, _ := json.Marshal(exps[0])
	jb, _ := json.Marshal(exps[1])
	if !bytes.Equal(ja, jb) {
		t.Errorf("expect.json differs between two runs of the same seed:\n%s\n%s", ja, jb)
	}
	if exps[0].Snapshot.SHA256 != exps[1].Snapshot.SHA256 || exps[0].HashSerialized3 == exps[2].HashSerialized3 || exps[0].MuHash == exps[2].MuHash {
		t.Error("digests do not follow the seed")
	}
	if exps[0].TxOuts != 50_000 || exps[0].Shape.HugeCoins != HugeCoins {
		t.Errorf("50k set: txouts %d, big txid %d coins", exps[0].TxOuts, exps[0].Shape.HugeCoins)
	}
}

// TestShape checks the 200k-coin set's shape: the script-type mix within
// tolerance of TargetMix, dust, recent-skewed heights, coins per txid, the
// big txid past the VARINT boundary, and every whale tier.
func TestShape(t *testing.T) {
	_, e := shared(t)
	s := e.Shape
	target := TargetMix()
	for name, want := range target {
		got := float64(s.Types[name]) / float64(e.TxOuts)
		if math.Abs(got-want) > 0.02+0.3*want {
			t.Errorf("type %s: %.4f of coins, want %.4f", name, got, want)
		}
		if s.Types[name] == 0 {
			t.Errorf("type %s: no coin", name)
		}
	}
	var sum uint64
	for _, n := range s.Types {
		sum += n
	}
	if sum != e.TxOuts || e.TxOuts != sharedCoins || e.Coins != sharedCoins {
		t.Errorf("coins: types sum %d, txouts %d, want %d", sum, e.TxOuts, sharedCoins)
	}
	if s.Types["p2tr"] < s.Types["p2wpkh"] || s.Types["p2wpkh"] < s.Types["p2sh"] {
		t.Errorf("P2TR should lead, then P2WPKH/P2PKH, then P2SH: %v", s.Types)
	}
	if f := float64(s.DustCoins) / float64(e.TxOuts); f < 0.4 || f > 0.6 {
		t.Errorf("coins under 1,000 sat: %.3f, want about half", f)
	}
	if r := float64(e.TxOuts) / float64(e.Transactions); r < 1.4 || r > 2.3 {
		t.Errorf("coins per txid %.2f, want 1.4–2.3 (mostly one or two, a long tail, one big txid)", r)
	}
	if s.Eras["recent"] < s.Eras["middle"] || s.Eras["middle"] < s.Eras["old"] {
		t.Errorf("heights should skew recent: %v", s.Eras)
	}
	if s.MaxCoinHeight > e.Height {
		t.Errorf("max coin height %d above the base %d", s.MaxCoinHeight, e.Height)
	}
	if s.HugeCoins <= 16_512 || s.HugeVoutsOver == 0 || s.HugeMaxVout < 16_512 || s.MaxGroup != s.HugeCoins {
		t.Errorf("big txid: %d coins, %d vouts ≥ 16512, max vout %d, biggest group %d", s.HugeCoins, s.HugeVoutsOver, s.HugeMaxVout, s.MaxGroup)
	}
	if s.GroupsOver252 < 2 || s.LongScripts == 0 || s.CoinbaseCoins == 0 {
		t.Errorf("groups over 252 coins %d, long scripts %d, coinbase coins %d", s.GroupsOver252, s.LongScripts, s.CoinbaseCoins)
	}
	tiers := map[uint64]int{}
	for _, w := range s.Whales {
		tiers[w.Tier]++
		want := (w.Tier*sharedCoins + MainnetCoins/2) / MainnetCoins
		if w.Coins+w.Coins/10 < want || w.Coins > want {
			t.Errorf("whale %s of tier %d: %d coins, want about %d", w.Script, w.Tier, w.Coins, want)
		}
	}
	if tiers[1_000_000] != 1 || tiers[100_000] != 4 || tiers[10_000] != 40 {
		t.Errorf("whale tiers %v", tiers)
	}
}

// TestWhaleScaling: whales keep the 10k/100k/1M tiers, scaled by the set's
// size, and a set above mainnet's size gets more whales, not bigger ones.
func TestWhaleScaling(t *testing.T) {
	for _, tc := range []struct {
		n                 uint64
		coins1M, count10k uint64
		tiers             int
	}{
		{2_000_000, 10_811, 40, 3},
		{MainnetCoins, 1_000_000, 40, 3},
		{2 * MainnetCoins, 1_000_000, 80, 3},
		{1_000, 5, 0, 1}, // 100k → 1 coin and 10k → 0: no longer whales
	} {
		ws := whaleSpec(tc.n)
		seen := map[uint64]uint64{}
		for _, w := range ws {
			seen[w.Tier]++
			if w.Tier == 1_000_000 && w.Coins != tc.coins1M {
				t.Errorf("n=%d: 1M-tier whale has %d coins, want %d", tc.n, w.Coins, tc.coins1M)
			}
		}
		if len(seen) != tc.tiers || seen[10_000] != tc.count10k {
			t.Errorf("n=%d: tiers %v", tc.n, seen)
		}
	}
}

// TestSnapshotDecodes reads utxo.dat back with an independent decoder: the
// 51-byte header, txids strictly ascending, each group's coins in the
// coins cursor's key order (VARINT(vout) bytewise), the count, and the
// digests recomputed from the decoded coins equal expect.json's.
func TestSnapshotDecodes(t *testing.T) {
	dir, e := shared(t)
	f, err := os.Open(filepath.Join(dir, SnapshotFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sr := &snapReader{r: bufio.NewReader(f)}
	h, err := sr.header()
	if err != nil {
		t.Fatal(err)
	}
	if string(h.magic[:]) != "utxo\xff" || h.version != 2 || h.netMagc != params.RegTest().Magic || h.coins != sharedCoins || wire.Hash(h.base).String() != e.BaseHash {
		t.Fatalf("header %+v", h)
	}
	d := newDigests(2)
	var prev [32]byte
	var n uint64
	sawSwap := false
	for n < h.coins {
		txid, coins, err := sr.group()
		if err != nil {
			t.Fatalf("after %d coins: %v", n, err)
		}
		if n > 0 && bytes.Compare(prev[:], txid[:]) >= 0 {
			t.Fatalf("txid %x after %x", txid, prev)
		}
		prev = txid
		if len(coins) == 0 {
			t.Fatal("empty group")
		}
		for i := 1; i < len(coins); i++ {
			if bytes.Compare(coins[i-1].key, coins[i].key) >= 0 {
				t.Fatalf("txid %x: vout %d after %d (not the cursor's order)", txid, coins[i].vout, coins[i-1].vout)
			}
			if coins[i].vout < coins[i-1].vout {
				sawSwap = true
			}
			if coins[i].code != coins[0].code {
				t.Fatalf("txid %x: coins at different heights", txid)
			}
		}
		if int32(coins[0].code>>1) > e.Height || coins[0].code>>1 == 0 {
			t.Fatalf("txid %x: height %d", txid, coins[0].code>>1)
		}
		// Core's stats walk a txid's coins in numeric vout order.
		sorted := slices.Clone(coins)
		sort.Slice(sorted, func(a, b int) bool { return sorted[a].vout < sorted[b].vout })
		for _, c := range sorted {
			if c.value > 21_000_000*100_000_000 {
				t.Fatalf("value %d out of MoneyRange", c.value)
			}
			d.add(&txid, c.vout, c.code, c.value, c.script)
		}
		d.endTx()
		n += uint64(len(coins))
	}
	if n != h.coins {
		t.Fatalf("groups hold %d coins, header says %d", n, h.coins)
	}
	if _, err := sr.r.ReadByte(); err == nil {
		t.Fatal("bytes left after the last group")
	}
	if !sawSwap {
		t.Error("no group has a vout ≥ 16512 before a smaller one")
	}
	got, _ := d.finish()
	if got != e.Digests {
		t.Errorf("digests of the decoded file %+v, expect.json %+v", got, e.Digests)
	}
}

// TestHeaders: headers.dat is the chain from genesis's child to the base,
// accepted by the consensus header rules on regtest (validate.BlockIndex,
// Core's AcceptBlockHeader: proof of work at regtest's limit, nBits, time
// above the median time past, version).
func TestHeaders(t *testing.T) {
	dir, e := shared(t)
	b, err := os.ReadFile(filepath.Join(dir, HeadersFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != int(e.Height)*wire.HeaderSize || e.Headers.Count != uint64(e.Height) {
		t.Fatalf("headers.dat has %d bytes for height %d", len(b), e.Height)
	}
	p := params.RegTest()
	idx := validate.NewBlockIndex(p)
	prev := p.GenesisHash
	for i := 0; i < len(b); i += wire.HeaderSize {
		h, err := wire.ParseHeader(b[i:])
		if err != nil {
			t.Fatal(err)
		}
		if h.PrevBlock != prev {
			t.Fatalf("header %d does not link", i/wire.HeaderSize+1)
		}
		n, err := idx.AcceptHeader(h, time.Now().Unix())
		if err != nil {
			t.Fatalf("header %d: %v", i/wire.HeaderSize+1, err)
		}
		if int(n.Height) != i/wire.HeaderSize+1 {
			t.Fatalf("height %d at position %d", n.Height, i/wire.HeaderSize+1)
		}
		prev = h.BlockHash()
	}
	if prev.String() != e.BaseHash {
		t.Errorf("last header %s, base %s", prev, e.BaseHash)
	}
}

// TestMainNetwork: --network main writes the snapshot with mainnet's
// message start and no header chain.
func TestMainNetwork(t *testing.T) {
	dir := t.TempDir()
	e, err := Generate(Config{Coins: 1_000, Seed: 1, Network: "main", Height: 880_000}, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, SnapshotFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b[7:11], []byte{0xf9, 0xbe, 0xb4, 0xd9}) || e.Headers != nil {
		t.Errorf("magic %x, headers %v", b[7:11], e.Headers)
	}
	if _, err := os.Stat(filepath.Join(dir, HeadersFile)); err == nil {
		t.Error("headers.dat written for main")
	}
	if e.TxOuts != 1_000 || e.Shape.HugeCoins != 0 {
		t.Errorf("txouts %d, big txid %d", e.TxOuts, e.Shape.HugeCoins)
	}
}
