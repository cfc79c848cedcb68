package utxo

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"utxod/wire"
)

// referenceRow is one line of testdata/mainnet/reference-digests.jsonl (origin:
// testdata/README.md — an independent reference implementation; muhash at
// heights 1 and 2 matches subcoin's published gettxoutsetinfo values).
type referenceRow struct {
	Height          uint32    `json:"height"`
	BestBlock       wire.Hash `json:"bestblock"`
	TxOuts          uint64    `json:"txouts"`
	BogoSize        uint64    `json:"bogosize"`
	HashSerialized3 wire.Hash `json:"hash_serialized_3"`
	MuHash          wire.Hash `json:"muhash"`
	TotalAmount     Amount    `json:"total_amount"`
	TotalAmountSat  int64     `json:"total_amount_sat"`
	Transactions    uint64    `json:"transactions"`
}

func loadReference(t *testing.T) map[uint32]referenceRow {
	t.Helper()
	f, err := os.Open("../testdata/mainnet/reference-digests.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[uint32]referenceRow{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r referenceRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows[r.Height] = r
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func mustHash(t testing.TB, s string) wire.Hash {
	t.Helper()
	h, err := wire.ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// mainnetCoinbase builds the coinbase output of mainnet block 1 or 2 from the
// published block contents (txid display order, 50 BTC, P2PK script
// 0x41 <65-byte key> OP_CHECKSIG).
func mainnetCoinbase(t *testing.T, height uint32) (Outpoint, Coin) {
	var txid, key string
	switch height {
	case 1:
		txid = "0e3e2357e806b6cdb1f70b54c3a3a17b6714ee1f0e68bebb44a74b1efd512098"
		key = "0496b538e853519c726a2c91e61ec11600ae1390813a627c66fb8be7947be63c52da7589379515d4e0a604f8141781e62294721166bf621e73a82cbf2342c858ee"
	case 2:
		txid = "9b0fc92260312ce44e74ef369f5c66bbb85848f2eddd5a7a1cde251e54ccfdd5"
		key = "047211a824f55b505228e4c3d5194c1fcfaa15a456abdf37f9b9d97a4040afc073dee6c89064984f03385237d92167c13e236446b417ab79a0fcae412ae3316b77"
	}
	script := append([]byte{0x41}, mustHex(t, key)...)
	script = append(script, 0xac)
	return Outpoint{Hash: mustHash(t, txid)}, Coin{Value: 50_0000_0000, Height: height, Coinbase: true, Script: script}
}

func TestStatsMainnetHeights1And2(t *testing.T) {
	ref := loadReference(t)
	var s Stats
	var coins []testCoin
	for h := uint32(1); h <= 2; h++ {
		want, ok := ref[h]
		if !ok {
			t.Fatalf("reference has no height %d", h)
		}
		op, c := mainnetCoinbase(t, h)
		if err := s.AddCoin(op, c, true); err != nil {
			t.Fatal(err)
		}
		s.SetTip(h, want.BestBlock)
		coins = append(coins, testCoin{op, c})

		// hash_serialized_3 over the set: the two txids sort by raw bytes.
		var hs HashSerialized3
		sorted := append([]testCoin(nil), coins...)
		sortTestCoins(sorted)
		for _, e := range sorted {
			if err := hs.Add(e.op, e.c); err != nil {
				t.Fatal(err)
			}
		}
		info := s.Info()
		hsum := hs.Sum()
		info.HashSerialized3 = &hsum

		if *info.MuHash != want.MuHash {
			t.Errorf("height %d muhash %s, want %s", h, info.MuHash, want.MuHash)
		}
		if hsum != want.HashSerialized3 {
			t.Errorf("height %d hash_serialized_3 %s, want %s", h, hsum, want.HashSerialized3)
		}
		if info.TxOuts != want.TxOuts || info.Transactions != want.Transactions ||
			info.BogoSize != want.BogoSize || info.TotalAmount != want.TotalAmount ||
			info.TotalAmountSat != want.TotalAmountSat || info.BestBlock != want.BestBlock {
			t.Errorf("height %d stats %+v, want %+v", h, info, want)
		}

		// The JSON object: same fields and values as the reference line.
		js, err := json.Marshal(info)
		if err != nil {
			t.Fatal(err)
		}
		var back referenceRow
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatal(err)
		}
		if back != want {
			t.Errorf("height %d JSON %s decodes to %+v, want %+v", h, js, back, want)
		}
		if !strings.Contains(string(js), `"total_amount":`+want.TotalAmount.String()+`,`) {
			t.Errorf("total_amount not a bare 8-decimal number in %s", js)
		}

		// Persist and restore.
		bin, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var s2 Stats
		if err := s2.UnmarshalBinary(bin); err != nil {
			t.Fatal(err)
		}
		if i2 := s2.Info(); *i2.MuHash != want.MuHash || i2.TxOuts != want.TxOuts || i2.Height != h {
			t.Errorf("height %d: restored stats differ: %+v", h, i2)
		}
	}

	// Spending block 2's coinbase returns to the height-1 digests.
	op, c := mainnetCoinbase(t, 2)
	if err := s.RemoveCoin(op, c, true); err != nil {
		t.Fatal(err)
	}
	if got := s.MuHash.Finalize(); got != ref[1].MuHash {
		t.Errorf("after removal muhash %s, want height-1 %s", got, ref[1].MuHash)
	}
	if s.TxOuts != 1 || s.Transactions != 1 || s.BogoSize != ref[1].BogoSize || s.TotalAmount != ref[1].TotalAmountSat {
		t.Errorf("after removal %+v", s)
	}
}

// testCoin is a local (outpoint, coin) pair for tests.
type testCoin struct {
	op Outpoint
	c  Coin
}

// sortTestCoins sorts by (txid raw bytes, vout), Core's coins-DB order.
func sortTestCoins(es []testCoin) {
	slices.SortFunc(es, func(a, b testCoin) int {
		if c := bytes.Compare(a.op.Hash[:], b.op.Hash[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.op.Index, b.op.Index)
	})
}

func TestStatsErrors(t *testing.T) {
	var s Stats
	op, c := Outpoint{}, Coin{Value: 5}
	if err := s.RemoveCoin(op, c, true); !errors.Is(err, ErrStats) {
		t.Errorf("remove from empty: %v", err)
	}
	if err := s.AddCoin(op, Coin{Value: -1}, true); !errors.Is(err, ErrStats) {
		t.Errorf("negative value: %v", err)
	}
	if err := s.AddCoin(op, Coin{Value: MaxMoney + 1}, true); !errors.Is(err, ErrStats) {
		t.Errorf("value above MAX_MONEY: %v", err)
	}
	if s != (Stats{}) {
		t.Errorf("failed updates changed the state: %+v", s)
	}
	for _, n := range []int{0, StatsStateSize - 1, StatsStateSize + 1} {
		if err := s.UnmarshalBinary(make([]byte, n)); !errors.Is(err, ErrStatsState) {
			t.Errorf("len %d: %v", n, err)
		}
	}
	b, _ := s.MarshalBinary()
	b[0] = 9
	if err := s.UnmarshalBinary(b); !errors.Is(err, ErrStatsState) {
		t.Errorf("bad version: %v", err)
	}
}

// Amount formatting follows Core's ValueFromAmount: sign, integer BTC, '.',
// exactly eight digits (expected strings written by hand from that rule).
func TestAmountJSON(t *testing.T) {
	for _, tc := range []struct {
		sat  int64
		want string
	}{
		{0, "0.00000000"},
		{1, "0.00000001"},
		{50_0000_0000, "50.00000000"},
		{100_0000_0000, "100.00000000"},
		{MaxMoney, "21000000.00000000"},
		{-1_2345_6789, "-1.23456789"},
	} {
		got, err := json.Marshal(Amount(tc.sat))
		if err != nil || string(got) != tc.want {
			t.Errorf("%d: %s %v, want %s", tc.sat, got, err, tc.want)
		}
		var back Amount
		if err := json.Unmarshal(got, &back); err != nil || int64(back) != tc.sat {
			t.Errorf("%s: parsed %d %v", got, back, err)
		}
	}
	for _, bad := range []string{`""`, `"1."`, `"1.123456789"`, `"abc"`, `"1e8"`, `".5"`} {
		var a Amount
		if err := json.Unmarshal([]byte(bad), &a); !errors.Is(err, ErrAmountSyntax) {
			t.Errorf("%s: err %v", bad, err)
		}
	}
}

func FuzzStatsUnmarshal(f *testing.F) {
	var s Stats
	_ = s.AddCoin(Outpoint{}, Coin{Value: 7, Script: []byte{1}}, true)
	b, _ := s.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Stats
		if s.UnmarshalBinary(b) != nil {
			return
		}
		out, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var s2 Stats
		if err := s2.UnmarshalBinary(out); err != nil {
			t.Fatal(err)
		}
		if s.MuHash.Finalize() != s2.MuHash.Finalize() || s.TxOuts != s2.TxOuts || s.TotalAmount != s2.TotalAmount {
			t.Fatal("round trip changes the statistics")
		}
	})
}
