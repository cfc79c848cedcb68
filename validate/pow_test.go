package validate

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"utxod/params"
	"utxod/wire"
)

// Vectors from Bitcoin Core's src/test/arith_uint256_tests.cpp
// (BOOST_AUTO_TEST_CASE(bignum_SetCompact)).
func TestCompactToBigCore(t *testing.T) {
	tests := []struct {
		compact   uint32
		hex       string // GetHex of the decoded value, leading zeros dropped
		back      uint32 // GetCompact(negative) of the decoded value
		neg, over bool
	}{
		{0, "0", 0, false, false},
		{0x00123456, "0", 0, false, false},
		{0x01003456, "0", 0, false, false},
		{0x02000056, "0", 0, false, false},
		{0x03000000, "0", 0, false, false},
		{0x04000000, "0", 0, false, false},
		{0x00923456, "0", 0, false, false},
		{0x01803456, "0", 0, false, false},
		{0x02800056, "0", 0, false, false},
		{0x03800000, "0", 0, false, false},
		{0x04800000, "0", 0, false, false},
		{0x01123456, "12", 0x01120000, false, false},
		{0x01fedcba, "7e", 0x01fe0000, true, false},
		{0x02123456, "1234", 0x02123400, false, false},
		{0x03123456, "123456", 0x03123456, false, false},
		{0x04123456, "12345600", 0x04123456, false, false},
		{0x04923456, "12345600", 0x04923456, true, false},
		{0x05009234, "92340000", 0x05009234, false, false},
		{0x20123456, "1234560000000000000000000000000000000000000000000000000000000000", 0x20123456, false, false},
		{0xff123456, "", 0, false, true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%08x", tc.compact), func(t *testing.T) {
			v, neg, over := CompactToBig(tc.compact)
			if neg != tc.neg || over != tc.over {
				t.Fatalf("negative=%v overflow=%v, want %v %v", neg, over, tc.neg, tc.over)
			}
			if tc.over {
				return // Core's test checks only the flags
			}
			if got := v.Text(16); got != tc.hex {
				t.Errorf("value %s, want %s", got, tc.hex)
			}
			enc := v
			if neg {
				enc = new(big.Int).Neg(v)
			}
			if got := BigToCompact(enc); got != tc.back {
				t.Errorf("GetCompact = %08x, want %08x", got, tc.back)
			}
		})
	}
	// "Make sure that we don't generate compacts with the 0x00800000 bit set"
	if got := BigToCompact(big.NewInt(0x80)); got != 0x02008000 {
		t.Errorf("GetCompact(0x80) = %08x, want 02008000", got)
	}
}

func TestCompactOverflowBoundaries(t *testing.T) {
	for _, tc := range []struct {
		compact uint32
		over    bool
	}{
		{0x220000ff, false}, // 0xff << 248 fits
		{0x2200ffff, true},
		{0x2100ffff, false}, // 0xffff << 240 fits
		{0x2101ffff, true},
		{0x23000001, true}, // size 35
		{0x22000001, false},
		{0xff000000, false}, // zero mantissa never overflows
	} {
		v, _, over := CompactToBig(tc.compact)
		if over != tc.over {
			t.Errorf("%08x overflow=%v, want %v", tc.compact, over, tc.over)
		}
		if v.BitLen() > 256 {
			t.Errorf("%08x decoded to %d bits", tc.compact, v.BitLen())
		}
	}
}

// Every network's PowLimitBits must be GetCompact(powLimit).
func TestPowLimitBits(t *testing.T) {
	for _, p := range []*params.Params{params.MainNet(), params.TestNet3(), params.TestNet4(), params.SigNet(), params.RegTest()} {
		if got := BigToCompact(p.PowLimit); got != p.PowLimitBits {
			t.Errorf("%s: GetCompact(powLimit) = %08x, PowLimitBits %08x", p.Name, got, p.PowLimitBits)
		}
	}
}

// Expected chain work values are `chainwork` of the genesis block as
// reported by Core's getblockheader: 0x100010001 on mainnet, 2 on regtest.
func TestCalcWork(t *testing.T) {
	for _, tc := range []struct {
		bits uint32
		want string
	}{
		{0x1d00ffff, "100010001"},
		{0x207fffff, "2"},
		{0x01fedcba, "0"}, // negative
		{0xff123456, "0"}, // overflow
		{0x1d000000, "0"}, // zero
		{0, "0"},
	} {
		if got := CalcWork(tc.bits).Text(16); got != tc.want {
			t.Errorf("CalcWork(%08x) = %s, want %s", tc.bits, got, tc.want)
		}
	}
}

// Cases from Core's src/test/pow_tests.cpp; inputs are real mainnet block
// times and bits (except where Core notes otherwise).
func TestCalculateNextWorkRequiredCore(t *testing.T) {
	p := params.MainNet()
	for _, tc := range []struct {
		name                string
		bits                uint32
		lastTime, firstTime int64
		want                uint32
	}{
		// get_next_work: block 32255 → retarget at 32256 (real: 1d00d86a).
		{"get_next_work", 0x1d00ffff, 1262152739, 1261130161, 0x1d00d86a},
		// get_next_work_pow_limit: blocks 0..2015 took longer than two weeks.
		{"pow_limit", 0x1d00ffff, 1233061996, 1231006505, 0x1d00ffff},
		// get_next_work_lower_limit_actual: blocks 66528..68543.
		{"lower_limit_actual", 0x1c05a3f4, 1279297671, 1279008237, 0x1c0168fd},
		// get_next_work_upper_limit_actual (first time not a real block time).
		{"upper_limit_actual", 0x1c387f6f, 1269211443, 1263163443, 0x1d00e1fd},
	} {
		if got := CalculateNextWorkRequired(tc.bits, tc.lastTime, tc.firstTime, p); got != tc.want {
			t.Errorf("%s: %08x, want %08x", tc.name, got, tc.want)
		}
	}
	if got := CalculateNextWorkRequired(0x1d00ffff, 0, 1<<40, params.RegTest()); got != 0x1d00ffff {
		t.Errorf("regtest retargeted: %08x", got)
	}
}

// Checks mirroring Core's pow_tests CheckProofOfWork_test_* cases.
func TestCheckProofOfWork(t *testing.T) {
	p := params.MainNet()
	genesis, _ := wire.ParseHeader(p.GenesisBlock)
	gh := genesis.BlockHash()
	limitTimes2 := BigToCompact(new(big.Int).Lsh(p.PowLimit, 1))
	var hugeHash wire.Hash // powLimit << 1, little-endian
	be := new(big.Int).Lsh(p.PowLimit, 1).FillBytes(make([]byte, 32))
	for i := range be {
		hugeHash[i] = be[31-i]
	}
	for _, tc := range []struct {
		name string
		hash wire.Hash
		bits uint32
		ok   bool
	}{
		{"genesis", gh, 0x1d00ffff, true},
		{"harder target", gh, 0x1b00ffff, false},
		{"negative target", gh, 0x1d80ffff, false},
		{"overflow target", gh, 0xff7fffff, false},
		{"too easy target", gh, limitTimes2, false},
		{"hash above target", hugeHash, 0x1d00ffff, false},
		{"zero target", gh, 0, false},
	} {
		err := CheckProofOfWork(tc.hash, tc.bits, p)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v", tc.name, err)
		}
		if err != nil && Reason(err) != "high-hash" {
			t.Errorf("%s: reason %q", tc.name, Reason(err))
		}
	}
}

// chainBuilder makes synthetic linked nodes (no proof of work) for
// difficulty tests.
type chainBuilder struct {
	bi  *BlockIndex
	tip *BlockNode
}

func (cb *chainBuilder) add(t testing.TB, bits, time uint32) *BlockNode {
	t.Helper()
	h := wire.Header{Version: 4, PrevBlock: cb.tip.Hash, Time: time, Bits: bits}
	n, err := cb.bi.AddHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	cb.tip = n
	return n
}

// The testnet rules of Core's GetNextWorkRequired: a block more than 20
// minutes after its parent may be minimum difficulty; otherwise the last
// non-minimum bits of the period apply.
func TestNextWorkRequiredTestnet(t *testing.T) {
	p := params.TestNet3()
	bi := NewBlockIndex(p)
	cb := &chainBuilder{bi: bi, tip: bi.Genesis()}
	base := bi.Genesis().Header.Time
	// Heights 1..2015 at min difficulty, then the retarget block 2016 with a
	// real target, then 2017..2020 min-difficulty again.
	for h := uint32(1); h <= 2015; h++ {
		cb.add(t, p.PowLimitBits, base+h*600)
	}
	const real = 0x1c0fffff
	cb.add(t, real, base+2016*600)
	for h := uint32(2017); h <= 2020; h++ {
		cb.add(t, p.PowLimitBits, base+h*600+1300) // each >20 min after its parent
	}
	tip := cb.tip
	for _, tc := range []struct {
		name string
		prev *BlockNode
		time uint32
		want uint32
	}{
		{"20 minutes later: minimum", tip, tip.Header.Time + 1201, p.PowLimitBits},
		{"exactly 20 minutes: walk back", tip, tip.Header.Time + 1200, real},
		{"soon after: walk back to the retarget block", tip, tip.Header.Time + 1, real},
	} {
		h := wire.Header{Time: tc.time}
		if got := NextWorkRequired(tc.prev, &h, p); got != tc.want {
			t.Errorf("%s: %08x, want %08x", tc.name, got, tc.want)
		}
	}
	// Below the first retarget the walk ends at genesis.
	one := tip.Ancestor(5)
	if got := NextWorkRequired(one, &wire.Header{Time: one.Header.Time + 60}, p); got != p.PowLimitBits {
		t.Errorf("early walk: %08x", got)
	}
	if got := NextWorkRequired(nil, nil, p); got != p.PowLimitBits {
		t.Errorf("genesis: %08x", got)
	}
}

// BIP94 (testnet4): the retarget starts from the first block of the period,
// not the last, which may be a minimum-difficulty block.
func TestNextWorkRequiredBIP94(t *testing.T) {
	const real = 0x1c0ffff0
	for _, tc := range []struct {
		p    *params.Params
		want uint32
	}{
		{params.TestNet4(), real},       // base is block 2016's bits; actual timespan == target
		{params.TestNet3(), 0x1d00ffff}, // base is block 4031's (minimum) bits
	} {
		bi := NewBlockIndex(tc.p)
		cb := &chainBuilder{bi: bi, tip: bi.Genesis()}
		start := bi.Genesis().Header.Time
		for h := uint32(1); h < 2016; h++ {
			cb.add(t, tc.p.PowLimitBits, start+h*600)
		}
		first := cb.add(t, real, start+2016*600)
		for h := uint32(2017); h < 4031; h++ {
			cb.add(t, real, start+h*600)
		}
		last := cb.add(t, tc.p.PowLimitBits, first.Header.Time+uint32(14*24*3600))
		if got := NextWorkRequired(last, &wire.Header{Time: last.Header.Time + 600}, tc.p); got != tc.want {
			t.Errorf("%s: %08x, want %08x", tc.p.Name, got, tc.want)
		}
	}
}

// Regtest never retargets and keeps the minimum difficulty.
func TestNextWorkRequiredRegtest(t *testing.T) {
	p := params.RegTest()
	bi := NewBlockIndex(p)
	cb := &chainBuilder{bi: bi, tip: bi.Genesis()}
	for h := uint32(1); h < 300; h++ {
		n := cb.add(t, p.PowLimitBits, bi.Genesis().Header.Time+h)
		if got := NextWorkRequired(n, &wire.Header{Time: n.Header.Time + 1}, p); got != p.PowLimitBits {
			t.Fatalf("height %d: %08x", n.Height+1, got)
		}
	}
}

func BenchmarkCheckProofOfWork(b *testing.B) {
	p := params.MainNet()
	h, _ := wire.ParseHeader(p.GenesisBlock)
	hash := h.BlockHash()
	for b.Loop() {
		if err := CheckProofOfWork(hash, h.Bits, p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCalcWork(b *testing.B) {
	for b.Loop() {
		CalcWork(0x1b0404cb)
	}
}

// CalcWork's single division equals Core's (~target / (target+1)) + 1.
func TestCalcWorkMatchesCoreFormula(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	max256 := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	for range 2000 {
		size := uint32(r.IntN(33) + 1)
		bits := size<<24 | uint32(r.IntN(0x7fffff)+1)
		target, neg, over := CompactToBig(bits)
		if neg || over || target.Sign() == 0 {
			continue
		}
		den := new(big.Int).Add(target, big.NewInt(1))
		core := new(big.Int).Sub(max256, target) // ~target
		core.Quo(core, den)
		core.Add(core, big.NewInt(1))
		if got := CalcWork(bits); got.Cmp(core) != 0 {
			t.Fatalf("CalcWork(%08x) = %s, Core formula %s", bits, got, core)
		}
	}
}
