package mainnetgen

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// fromInt is Core's crypto_tests FromInt(i): the 32 bytes {i, 0, …}.
func fromInt(i byte) []byte {
	b := make([]byte, 32)
	b[0] = i
	return b
}

// TestMuHashAnchors checks the MuHash3072 implementation against the
// published values: the empty set, and Bitcoin Core's
// src/test/crypto_tests.cpp muhash_tests (FromInt(0)·FromInt(1)/FromInt(2)
// both ways, and the all-0xff numerator above the modulus).
func TestMuHashAnchors(t *testing.T) {
	if got, want := displayHex(NewMuHash().Finalize()), "dd5ad2a105c2d29495f577245c357409002329b9f4d6182c0af3dc2f462555c8"; got != want {
		t.Errorf("empty set: %s, want %s", got, want)
	}
	const want = "10d312b100cbd32ada024a6646e40d3482fcff103668d2625f10002a607d5863"
	a := NewMuHash()
	a.Insert(fromInt(0))
	a.Insert(fromInt(1))
	a.Remove(fromInt(2))
	if got := displayHex(a.Finalize()); got != want {
		t.Errorf("FromInt(0)*FromInt(1)/FromInt(2): %s, want %s", got, want)
	}
	// The same through Combine of separately built parts.
	b, c, d := NewMuHash(), NewMuHash(), NewMuHash()
	b.Insert(fromInt(1))
	c.Remove(fromInt(2))
	d.Insert(fromInt(0))
	d.Combine(b)
	d.Combine(c)
	if got := displayHex(d.Finalize()); got != want {
		t.Errorf("combined: %s, want %s", got, want)
	}
	// Overflow: numerator 2^3072−1, denominator 1; Core checks HexStr (raw order).
	state := bytes.Repeat([]byte{0xff}, muhashBytes)
	state = append(state, 1)
	state = append(state, make([]byte, muhashBytes-1)...)
	o := NewMuHash()
	o.SetState(state)
	out := o.Finalize()
	if got, want := hex.EncodeToString(out[:]), "3a31e6903aff0de9f62f9a9f7f8b861de76ce2cda09822b90014319ae5dc2271"; got != want {
		t.Errorf("overflow: %s, want %s", got, want)
	}
	// Insert then Remove is the empty set.
	e := NewMuHash()
	e.Insert([]byte("x"))
	e.Remove([]byte("x"))
	if e.Finalize() != NewMuHash().Finalize() {
		t.Error("insert then remove is not the empty set")
	}
}

// TestVarIntAndCompactSize checks the encodings against Core's
// src/serialize.h known answers (interop.md).
func TestVarIntAndCompactSize(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{{0, "00"}, {127, "7f"}, {128, "8000"}, {255, "807f"}, {256, "8100"}, {16383, "fe7f"}, {16511, "ff7f"}, {16512, "808000"}, {2113663, "ffff7f"}, {2113664, "80808000"}} {
		if got := hex.EncodeToString(appendVarInt(nil, tc.n)); got != tc.want {
			t.Errorf("VARINT(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
	for _, tc := range []struct {
		n    uint64
		want string
	}{{0, "00"}, {252, "fc"}, {253, "fdfd00"}, {0xffff, "fdffff"}, {0x10000, "fe00000100"}, {1 << 32, "ff0000000001000000"}} {
		if got := hex.EncodeToString(appendCompactSize(nil, tc.n)); got != tc.want {
			t.Errorf("CompactSize(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
}

// TestCompressAmount checks Core's src/test/compress_tests.cpp known answers.
func TestCompressAmount(t *testing.T) {
	const coin = 100_000_000
	for _, tc := range []struct{ v, want uint64 }{{0, 0}, {1, 1}, {coin / 100, 7}, {coin, 9}, {50 * coin, 0x32}, {21_000_000 * coin, 0x1406f40}} {
		if got := compressAmount(tc.v); got != tc.want {
			t.Errorf("CompressAmount(%d) = %#x, want %#x", tc.v, got, tc.want)
		}
	}
}

// mainnetCoin is a coin of mainnet's first blocks.
type mainnetCoin struct {
	txid   string // display hex
	height uint32
	script string
}

// TestDigestsMainnetHeights1And2 computes hash_serialized_3, MuHash and
// bogosize of mainnet's UTXO set at heights 1 and 2 (each block's coinbase,
// 50 BTC to an uncompressed P2PK) with the generator's digest code and
// compares them with the values of /work/shared/reference/mainnet-digests.jsonl
// (Core's gettxoutsetinfo definitions, computed by an independent reference
// implementation from btcd's blk_0_to_14131.dat; the muhash values at these
// two heights also match subcoin's published gettxoutsetinfo tests).
func TestDigestsMainnetHeights1And2(t *testing.T) {
	coins := []mainnetCoin{
		{"0e3e2357e806b6cdb1f70b54c3a3a17b6714ee1f0e68bebb44a74b1efd512098", 1,
			"410496b538e853519c726a2c91e61ec11600ae1390813a627c66fb8be7947be63c52da7589379515d4e0a604f8141781e62294721166bf621e73a82cbf2342c858eeac"},
		{"9b0fc92260312ce44e74ef369f5c66bbb85848f2eddd5a7a1cde251e54ccfdd5", 2,
			"41047211a824f55b505228e4c3d5194c1fcfaa15a456abdf37f9b9d97a4040afc073dee6c89064984f03385237d92167c13e236446b417ab79a0fcae412ae3316b77ac"},
	}
	wants := []struct{ hs3, muhash string }{
		{"b911fd5864945251985ebc2820ff542df1cebe84255ee476684fa9d026a1b578", "1bd372a3f225dc6f8ce0e10ead6f8b0b00e65a2ff4a4c9ccaa615a69fbeeb2f2"},
		{"31ea488de5992aa5113374cbe2dc8718ec78b96a79a4f70b4124e36a29eb4988", "dfd1c34195baa0a898f04d40097841e1d569e81ce845a21e79c4ab25c725c875"},
	}
	for h := 1; h <= 2; h++ {
		set := append([]mainnetCoin(nil), coins[:h]...)
		// The coins cursor's order: ascending raw txid bytes.
		raw := make([][32]byte, len(set))
		for i, c := range set {
			b, _ := hex.DecodeString(c.txid)
			reverse(raw[i][:], b)
		}
		if len(set) == 2 && bytes.Compare(raw[0][:], raw[1][:]) > 0 {
			raw[0], raw[1] = raw[1], raw[0]
			set[0], set[1] = set[1], set[0]
		}
		d := newDigests(1)
		for i, c := range set {
			script, _ := hex.DecodeString(c.script)
			d.add(&raw[i], 0, c.height<<1|1, 50*100_000_000, script)
			d.endTx()
		}
		r, _ := d.finish()
		if r.HashSerialized3 != wants[h-1].hs3 {
			t.Errorf("height %d: hash_serialized_3 %s, want %s", h, r.HashSerialized3, wants[h-1].hs3)
		}
		if r.MuHash != wants[h-1].muhash {
			t.Errorf("height %d: muhash %s, want %s", h, r.MuHash, wants[h-1].muhash)
		}
		if r.BogoSize != uint64(117*h) || r.TxOuts != uint64(h) || r.Transactions != uint64(h) || r.TotalAmount != uint64(h)*50*100_000_000 {
			t.Errorf("height %d: stats %+v", h, r)
		}
	}
}
