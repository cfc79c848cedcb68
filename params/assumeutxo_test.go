package params

import (
	"math/big"
	"slices"
	"testing"

	"utxod/wire"
)

// hashNum reads a block hash as the number proof of work compares.
func hashNum(h wire.Hash) *big.Int {
	r := slices.Clone(h[:])
	slices.Reverse(r)
	return new(big.Int).SetBytes(r)
}

// The table's entries are transcribed; these checks catch a byte-order or
// copy slip: each block hash must meet its network's proof-of-work limit
// (mainnet's entries, far above genesis difficulty, start with 19 zero hex
// digits), heights ascend, and a few values are pinned to
// ../shared/reference/interop.md's table (read from Core's
// src/kernel/chainparams.cpp).
func TestAssumeUTXOTable(t *testing.T) {
	counts := map[string]int{"main": 4, "testnet3": 2, "testnet4": 2, "signet": 2, "regtest": 3}
	for _, p := range []*Params{MainNet(), TestNet3(), TestNet4(), SigNet(), RegTest()} {
		data := p.AssumeUTXOData()
		if len(data) != counts[p.Name] {
			t.Errorf("%s: %d entries, want %d", p.Name, len(data), counts[p.Name])
		}
		for i, e := range data {
			if hashNum(e.BlockHash).Cmp(p.PowLimit) > 0 {
				t.Errorf("%s %d: block hash %s above the proof-of-work limit (byte order?)", p.Name, e.Height, e.BlockHash)
			}
			if i > 0 && e.Height <= data[i-1].Height {
				t.Errorf("%s: heights not ascending at %d", p.Name, e.Height)
			}
			if uint64(e.Height) >= e.ChainTxCount {
				t.Errorf("%s %d: chain tx count %d below the block count", p.Name, e.Height, e.ChainTxCount)
			}
			got, ok := p.AssumeUTXOForBlockHash(e.BlockHash)
			if !ok || got != e {
				t.Errorf("%s: lookup by hash of %d", p.Name, e.Height)
			}
			if got, ok := p.AssumeUTXOForHeight(e.Height); !ok || got != e {
				t.Errorf("%s: lookup by height %d", p.Name, e.Height)
			}
		}
	}
	m, ok := MainNet().AssumeUTXOForHeight(840_000)
	if !ok || m.BlockHash.String() != "0000000000000000000320283a032748cef8227873ff4872689bf23f1cda83a5" ||
		m.HashSerialized.String() != "a2a5521b1b5ab65f67818e5e8eccabb7171a517f9e2382208f77687310768f96" || m.ChainTxCount != 991_032_194 {
		t.Errorf("mainnet 840000: %+v", m)
	}
	r, ok := RegTest().AssumeUTXOForHeight(299)
	if !ok || r.BlockHash.String() != "0c552ced4721c249a389eb9b08cb8da261cd46f0e7b5f9d064d48f3113406853" ||
		r.HashSerialized.String() != "106b2c56233e378a824cf0d5ff2be42ed32c72f1605c9be288d00942908a40ac" || r.ChainTxCount != 334 {
		t.Errorf("regtest 299: %+v", r)
	}
	if _, ok := MainNet().AssumeUTXOForHeight(14131); ok {
		t.Error("mainnet 14131 is not in Core's table")
	}
	if d := SigNetWithChallenge([]byte{0x51}).AssumeUTXOData(); d != nil {
		t.Errorf("custom signet has %d entries, want none", len(d))
	}
}

func TestByMagicAndCoreName(t *testing.T) {
	for _, tc := range []struct {
		p    *Params
		core string
	}{{MainNet(), "main"}, {TestNet3(), "test"}, {TestNet4(), "testnet4"}, {SigNet(), "signet"}, {RegTest(), "regtest"}} {
		got, ok := ByMagic(tc.p.Magic)
		if !ok || got.Name != tc.p.Name {
			t.Errorf("ByMagic(%x) = %v, %v", tc.p.Magic, got, ok)
		}
		if tc.p.CoreName() != tc.core {
			t.Errorf("%s: CoreName %q, want %q", tc.p.Name, tc.p.CoreName(), tc.core)
		}
	}
	if _, ok := ByMagic(SigNetWithChallenge([]byte{0x51}).Magic); ok {
		t.Error("a custom signet's magic is not a known network")
	}
	if _, ok := ByMagic([4]byte{1, 2, 3, 4}); ok {
		t.Error("unknown magic recognised")
	}
}
