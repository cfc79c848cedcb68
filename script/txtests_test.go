package script

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"utxod/wire"
)

// Core's tx_valid.json / tx_invalid.json through Engine.Prepare +
// VerifyInput, with the flag semantics of Core's current
// src/test/transaction_tests.cpp:
//
//   - tx_valid: the flags field lists flags to EXCLUDE. The transaction
//     must pass CheckTransaction and verify with all other flags; removing
//     any single flag (TrimFlags) or a random set must keep it valid; and
//     re-adding any one excluded flag must make it fail (flags are maximal).
//   - tx_invalid: the flags field lists flags to apply ("BADTX": it must
//     fail CheckTransaction). It must fail with them, with any single flag
//     or random set added (FillFlags), and verify when any one listed flag
//     is removed (flags are minimal).
//
// Vectors: script/testdata/core-vectors/tx_{valid,invalid}.json (Core's
// files as shipped in btcd txscript/v2 v2.0.0). The v0.24.2-era copies in
// testdata/core-vectors/ predate Core 22's exclusion semantics and are run
// with their own (listed flags apply) semantics.

type txCase struct {
	row      int
	tx       *wire.Tx
	prevouts []wire.TxOut
	flags    string
	text     string
}

func parseTxCases(t testing.TB, path string, limit bool) []txCase {
	var out []txCase
	for i, row := range loadJSONArray(t, path) {
		ins, ok := row[0].([]any)
		if !ok {
			continue // comment
		}
		if len(row) != 3 {
			t.Fatalf("row %d: bad test %v", i, row)
		}
		prev := map[[36]byte]wire.TxOut{}
		for _, x := range ins {
			in := x.([]any)
			if len(in) < 3 || len(in) > 4 {
				t.Fatalf("row %d: bad input %v", i, in)
			}
			h, err := hashFromHex(in[0].(string))
			if err != nil {
				t.Fatalf("row %d: %v", i, err)
			}
			var k [36]byte
			copy(k[:], h[:])
			idx := uint32(int32(in[1].(float64)))
			k[32], k[33], k[34], k[35] = byte(idx), byte(idx>>8), byte(idx>>16), byte(idx>>24)
			pk, err := parseScriptRange(in[2].(string), limit)
			if err != nil {
				t.Fatalf("row %d: prevout script: %v", i, err)
			}
			var amt int64
			if len(in) == 4 {
				amt = int64(in[3].(float64))
			}
			prev[k] = wire.TxOut{Value: amt, Script: pk}
		}
		raw, err := hex.DecodeString(row[1].(string))
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		tx, err := wire.ParseTx(raw)
		if err != nil {
			t.Fatalf("row %d: ParseTx: %v", i, err)
		}
		c := txCase{row: i, tx: tx, flags: row[2].(string), text: fmt.Sprint(row)}
		for _, in := range tx.Inputs {
			var k [36]byte
			copy(k[:], in.PrevHash[:])
			idx := in.PrevIndex
			k[32], k[33], k[34], k[35] = byte(idx), byte(idx>>8), byte(idx>>16), byte(idx>>24)
			p, ok := prev[k]
			if !ok {
				t.Fatalf("row %d: missing prevout", i)
			}
			c.prevouts = append(c.prevouts, p)
		}
		out = append(out, c)
	}
	return out
}

// btcdPolicyGaps lists tx_valid maximality checks btcd's engine misses,
// all under policy-only flags that block validation never sets.
var btcdPolicyGaps = map[int]struct {
	flag Flags
	why  string
}{
	// "0x00 CHECKSIG NOT" with a non-empty signature: Core fails NULLFAIL
	// (SCRIPT_ERR_SIG_NULLFAIL after CheckSig returns false); btcd pushes
	// false without the NULLFAIL check when the public key (or, without
	// DERSIG/STRICTENC, the signature) does not parse.
	67: {NullFail, "NULLFAIL not applied when the pubkey does not parse"},
}

// excludeIndividualFlags is transaction_tests.cpp's ExcludeIndividualFlags.
func excludeIndividualFlags(f Flags) []Flags {
	seen := map[Flags]bool{}
	var out []Flags
	for _, fn := range flagNames {
		x := trimFlags(f &^ fn.f)
		if x != f && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// txVerify verifies every input under flags (masked to the known flags, as
// ~flags in Core sets bits no engine reads). badFlags counts refusals of an
// invalid flag combination, which Core's test would not reach.
func txVerify(t *testing.T, e Engine, c txCase, flags Flags, badFlags *int) error {
	t.Helper()
	err := verifyAll(e, c.tx, c.prevouts, flags&AllFlags)
	if err != nil && errors.Is(err, ErrBadFlags) && badFlags != nil {
		*badFlags++
	}
	return err
}

func TestTxValidCurrent(t *testing.T) {
	cases := parseTxCases(t, "testdata/core-vectors/tx_valid.json", true)
	forEachEngine(t, func(t *testing.T, ne namedEngine) { txValidCurrent(t, ne, cases) })
}

func txValidCurrent(t *testing.T, ne namedEngine, cases []txCase) {
	e := ne.e
	rng := rand.New(rand.NewPCG(22, 2021))
	bad := 0
	for _, c := range cases {
		excluded, err := ParseFlags(c.flags)
		if err != nil {
			t.Fatalf("row %d: %v", c.row, err)
		}
		all := ^excluded & AllFlags
		if fillFlags(all) != all {
			t.Errorf("row %d: bad test flags", c.row)
		}
		if r := checkTransaction(c.tx); r != "" {
			t.Errorf("row %d: CheckTransaction: %s", c.row, r)
		}
		if err := txVerify(t, e, c, all, nil); err != nil {
			t.Errorf("row %d: unexpectedly failed: %v\n%s", c.row, err, c.text)
			continue
		}
		for _, fn := range flagNames {
			if err := txVerify(t, e, c, trimFlags(^(excluded|fn.f)&AllFlags), nil); err != nil {
				t.Errorf("row %d: failed with %s unset: %v", c.row, fn.name, err)
			}
			r := Flags(rng.Uint32()) & AllFlags
			if err := txVerify(t, e, c, trimFlags(^(excluded|r)&AllFlags), nil); err != nil {
				t.Errorf("row %d: failed with random flags %v removed: %v", c.row, r, err)
			}
		}
		for _, x := range excludeIndividualFlags(excluded) {
			if gap, ok := btcdPolicyGaps[c.row]; ok && ne.btcd && excluded&^x == gap.flag {
				if txVerify(t, e, c, ^x, &bad) == nil {
					t.Logf("row %d: known btcd policy gap, passes with %v re-added: %s", c.row, gap.flag, gap.why)
				} else {
					t.Errorf("row %d: known gap no longer present; remove it from btcdPolicyGaps", c.row)
				}
				continue
			}
			if txVerify(t, e, c, ^x, &bad) == nil {
				t.Errorf("row %d: too many flags unset: passes with %v", c.row, ^x&AllFlags)
			}
		}
	}
	t.Logf("%d tx_valid cases; %d maximality checks met by an invalid flag combination", len(cases), bad)
	if len(cases) != 121 {
		t.Errorf("expected 121 vectors, parsed %d", len(cases))
	}
}

func TestTxInvalidCurrent(t *testing.T) {
	cases := parseTxCases(t, "testdata/core-vectors/tx_invalid.json", true)
	forEachEngine(t, func(t *testing.T, ne namedEngine) { txInvalidCurrent(t, ne.e, cases) })
}

func txInvalidCurrent(t *testing.T, e Engine, cases []txCase) {
	rng := rand.New(rand.NewPCG(22, 2021))
	nBad := 0
	for _, c := range cases {
		if r := checkTransaction(c.tx); r != "" {
			if c.flags != "BADTX" {
				t.Errorf("row %d: CheckTransaction %s but flags %q", c.row, r, c.flags)
			}
			nBad++
			continue
		}
		if c.flags == "BADTX" {
			t.Errorf("row %d: BADTX passes CheckTransaction\n%s", c.row, c.text)
			continue
		}
		flags, err := ParseFlags(c.flags)
		if err != nil {
			t.Fatalf("row %d: %v", c.row, err)
		}
		if fillFlags(flags) != flags {
			t.Errorf("row %d: bad test flags", c.row)
		}
		if txVerify(t, e, c, flags, nil) == nil {
			t.Errorf("row %d: unexpectedly passed\n%s", c.row, c.text)
			continue
		}
		for _, fn := range flagNames {
			if txVerify(t, e, c, fillFlags(flags|fn.f), nil) == nil {
				t.Errorf("row %d: passes with %s set", c.row, fn.name)
			}
			r := Flags(rng.Uint32()) & AllFlags
			if txVerify(t, e, c, fillFlags(flags|r), nil) == nil {
				t.Errorf("row %d: passes with random flags %v", c.row, r)
			}
		}
		for _, x := range excludeIndividualFlags(flags) {
			if err := txVerify(t, e, c, x, nil); err != nil {
				t.Errorf("row %d: too many flags set: fails with %v: %v", c.row, x, err)
			}
		}
	}
	t.Logf("%d tx_invalid cases, %d of them BADTX", len(cases), nBad)
	if len(cases) != 93 {
		t.Errorf("expected 93 vectors, parsed %d", len(cases))
	}
}

// The v0.24.2-era vectors: listed flags apply to both files; a tx_invalid
// case is invalid if CheckTransaction or any input fails (Core before 22).
func TestTxVectorsV0242(t *testing.T) {
	valid := parseTxCases(t, "../testdata/core-vectors/tx_valid.json", false)
	invalid := parseTxCases(t, "../testdata/core-vectors/tx_invalid.json", false)
	forEachEngine(t, func(t *testing.T, ne namedEngine) { txVectorsV0242(t, ne.e, valid, invalid) })
}

func txVectorsV0242(t *testing.T, e Engine, valid, invalid []txCase) {
	for _, c := range valid {
		flags, err := ParseFlags(c.flags)
		if err != nil {
			t.Fatalf("row %d: %v", c.row, err)
		}
		if r := checkTransaction(c.tx); r != "" {
			t.Errorf("tx_valid row %d: CheckTransaction: %s", c.row, r)
		}
		if err := txVerify(t, e, c, fillFlags(flags), nil); err != nil {
			t.Errorf("tx_valid row %d: %v", c.row, err)
		}
	}
	for _, c := range invalid {
		flags, err := ParseFlags(c.flags)
		if err != nil {
			t.Fatalf("row %d: %v", c.row, err)
		}
		if checkTransaction(c.tx) == "" && txVerify(t, e, c, fillFlags(flags), nil) == nil {
			t.Errorf("tx_invalid row %d: unexpectedly passed\n%s", c.row, c.text)
		}
	}
}
