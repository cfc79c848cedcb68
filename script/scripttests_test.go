package script

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/txscript/v2"

	"utxod/wire"
)

// Core's script_tests.json through Engine.Prepare + VerifyInput.
//
// Vectors: script/testdata/core-vectors/script_tests.json — Bitcoin Core's
// src/test/data/script_tests.json as shipped in btcd txscript/v2 v2.0.0
// (data/), which carries Core's TAPSCRIPT placeholder cases; and
// testdata/core-vectors/script_tests.json, the older copy from btcd v0.24.2.
// See script/testdata/README.md.

// scriptCase is one parsed script_tests.json entry.
type scriptCase struct {
	name      string
	witness   [][]byte
	amount    int64
	scriptSig []byte
	pkScript  []byte
	flags     Flags
	expect    string
}

// numsX is BIP341's NUMS point H (x-only), used as the internal key for the
// TAPSCRIPT placeholder cases. Core uses a fixed test key instead; none of
// the cases spends the key path, so no vector can tell them apart.
const numsX = "50929b74c1a04954b78b4b6035e97a5e078a5a0f28ec96d547bfee9ace803ac0"

// expandTaproot resolves Core's #SCRIPT#, #CONTROLBLOCK# and
// #TAPROOTOUTPUT# placeholders (script_tests.cpp) for a one-leaf tree.
func expandTaproot(items []string, pk string) ([][]byte, string, error) {
	var wit [][]byte
	var outputKey []byte
	for _, it := range items {
		switch {
		case strings.HasPrefix(it, "#SCRIPT#"):
			s, err := parseScript(it[len("#SCRIPT#"):])
			if err != nil {
				return nil, "", err
			}
			wit = append(wit, s)
		case it == "#CONTROLBLOCK#":
			if len(wit) == 0 {
				return nil, "", fmt.Errorf("#CONTROLBLOCK# without script")
			}
			xb, _ := hex.DecodeString(numsX)
			internal, err := schnorr.ParsePubKey(xb)
			if err != nil {
				return nil, "", err
			}
			leaf := txscript.NewBaseTapLeaf(wit[len(wit)-1]).TapHash()
			q := txscript.ComputeTaprootOutputKey(internal, leaf[:])
			qc := q.SerializeCompressed()
			cb := append([]byte{byte(txscript.BaseLeafVersion) | qc[0]&1}, xb...)
			wit = append(wit, cb)
			outputKey = qc[1:]
		default:
			b, err := hex.DecodeString(it)
			if err != nil {
				return nil, "", err
			}
			wit = append(wit, b)
		}
	}
	if strings.Contains(pk, "#TAPROOTOUTPUT#") {
		if outputKey == nil {
			return nil, "", fmt.Errorf("#TAPROOTOUTPUT# without #CONTROLBLOCK#")
		}
		pk = strings.ReplaceAll(pk, "#TAPROOTOUTPUT#", "0x"+hex.EncodeToString(outputKey))
	}
	return wit, pk, nil
}

// parseScriptCases parses script_tests.json entries; one-element rows are
// comments.
func parseScriptCases(t testing.TB, path string, limit bool) []scriptCase {
	var out []scriptCase
	for i, row := range loadJSONArray(t, path) {
		if len(row) == 1 {
			continue
		}
		c := scriptCase{}
		pos := 0
		var witItems []string
		if arr, ok := row[0].([]any); ok {
			if len(arr) == 0 {
				t.Fatalf("row %d: empty witness array", i)
			}
			for _, w := range arr[:len(arr)-1] {
				witItems = append(witItems, w.(string))
			}
			c.amount = amountFromBTC(arr[len(arr)-1].(float64))
			pos = 1
		}
		if len(row) < pos+4 {
			t.Fatalf("row %d: short test %v", i, row)
		}
		sigStr, pkStr := row[pos].(string), row[pos+1].(string)
		flagStr, expect := row[pos+2].(string), row[pos+3].(string)
		var err error
		if c.witness, pkStr, err = expandTaproot(witItems, pkStr); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		if c.scriptSig, err = parseScriptRange(sigStr, limit); err != nil {
			t.Fatalf("row %d scriptSig: %v", i, err)
		}
		if c.pkScript, err = parseScriptRange(pkStr, limit); err != nil {
			t.Fatalf("row %d scriptPubKey: %v", i, err)
		}
		if c.flags, err = ParseFlags(flagStr); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		// DoTest in script_tests.cpp: CLEANSTACK implies P2SH and WITNESS.
		if c.flags&CleanStack != 0 {
			c.flags |= P2SH | Witness
		}
		if _, ok := ErrorCodeByName(expect); !ok {
			t.Fatalf("row %d: expected error %q is not an ErrorCode name", i, expect)
		}
		c.expect = expect
		c.name = fmt.Sprintf("row%d[%s|%s|%s|%s]", i, sigStr, pkStr, flagStr, expect)
		if len(row) > pos+4 {
			c.name += " " + fmt.Sprint(row[pos+4])
		}
		out = append(out, c)
	}
	return out
}

// sameErrorClass reports whether the engine's error name matches Core's
// expected one. Where btcd checks in a different order or does not separate
// two of Core's codes, the pairs are listed here; each is a message-level
// difference only (both sides fail).
func sameErrorClass(got, want string) bool {
	if got == want {
		return true
	}
	equiv := map[string][]string{
		// btcd has one stack-underflow code for both stacks.
		"INVALID_ALTSTACK_OPERATION": {"INVALID_STACK_OPERATION"},
	}
	for _, alt := range equiv[want] {
		if got == alt {
			return true
		}
	}
	return false
}

// runScriptCases checks every case with its flags; for a passing case each
// single flag removed (TrimFlags) must still pass, for a failing case each
// single flag added (FillFlags) must still fail — the soft-fork property
// script_tests.cpp's DoTest checks with random flag sets.
func runScriptCases(t *testing.T, e Engine, cases []scriptCase, skip func(scriptCase) bool) (classMismatch []string) {
	for _, c := range cases {
		if skip != nil && skip(c) {
			continue
		}
		tx, prev := creditSpend(t, c.scriptSig, c.pkScript, c.witness, c.amount)
		v, err := e.Prepare(tx, []wire.TxOut{prev})
		if err != nil {
			t.Fatalf("%s: Prepare: %v", c.name, err)
		}
		err = v.VerifyInput(0, c.flags)
		if c.expect == "OK" {
			if err != nil {
				t.Errorf("%s: want OK, got %v", c.name, err)
				continue
			}
		} else {
			se, ok := err.(*Error)
			if !ok {
				t.Errorf("%s: want %s, got %v", c.name, c.expect, err)
				continue
			}
			if !sameErrorClass(se.Code.Name(), c.expect) {
				classMismatch = append(classMismatch, fmt.Sprintf("%s: got %s (%v)", c.name, se.Code.Name(), se.Err))
			}
		}
		for _, fn := range flagNames {
			var f Flags
			if c.expect == "OK" {
				f = trimFlags(c.flags &^ fn.f)
			} else {
				f = fillFlags(c.flags | fn.f)
			}
			if f == c.flags {
				continue
			}
			if err2 := v.VerifyInput(0, f); (err2 == nil) != (c.expect == "OK") {
				t.Errorf("%s: with flags %v: got %v", c.name, f, err2)
			}
		}
	}
	return classMismatch
}

// trimFlags and fillFlags are transaction_tests.cpp's TrimFlags/FillFlags.
func trimFlags(f Flags) Flags {
	if f&P2SH == 0 {
		f &^= Witness
	}
	if f&Witness == 0 {
		f &^= CleanStack
	}
	return f
}

func fillFlags(f Flags) Flags {
	if f&CleanStack != 0 {
		f |= Witness
	}
	if f&Witness != 0 {
		f |= P2SH
	}
	return f
}

func TestScriptTestsCurrent(t *testing.T) {
	cases := parseScriptCases(t, "testdata/core-vectors/script_tests.json", true)
	if len(cases) != 1222 {
		t.Errorf("expected 1222 vectors, parsed %d", len(cases))
	}
	forEachEngine(t, func(t *testing.T, ne namedEngine) {
		mism := runScriptCases(t, ne.e, cases, nil)
		t.Logf("%d cases; %d fail with a different Core error code than expected", len(cases), len(mism))
		for _, m := range mism {
			t.Log(m)
		}
		if !ne.btcd {
			// The native engine must give Core's exact error name.
			if len(mism) != 0 {
				t.Errorf("unexpected error-code differences: %d", len(mism))
			}
			return
		}
		// btcd's one known difference: a 70-byte signature whose DER
		// length covers all 70 bytes. Core's IsValidSignatureEncoding
		// refuses it (SIG_DER) before looking at the hash type; btcd
		// checks the hash type byte (0x2f) first. Both fail.
		if len(mism) > 1 || (len(mism) == 1 && !strings.Contains(mism[0], "SIG_DER] 2-of-3 with one valid and one invalid signature due to parse error")) {
			t.Errorf("unexpected error-code differences: %d", len(mism))
		}
	})
}

func TestScriptTestsV0242(t *testing.T) {
	cases := parseScriptCases(t, "../testdata/core-vectors/script_tests.json", false)
	// Superseded by Core PR #10699 (0.15): OP_NOP2/OP_NOP3 with CLTV/CSV
	// off are plain NOPs even under DISCOURAGE_UPGRADABLE_NOPS; the older
	// file still expects DISCOURAGE_UPGRADABLE_NOPS for them.
	superseded := func(c scriptCase) bool {
		return c.expect == "DISCOURAGE_UPGRADABLE_NOPS" &&
			((c.flags&CheckLockTimeVerify == 0 && bytes.IndexByte(c.pkScript, 0xb1) >= 0) ||
				(c.flags&CheckSequenceVerify == 0 && bytes.IndexByte(c.pkScript, 0xb2) >= 0))
	}
	n := 0
	for _, c := range cases {
		if superseded(c) {
			n++
		}
	}
	forEachEngine(t, func(t *testing.T, ne namedEngine) {
		mism := runScriptCases(t, ne.e, cases, superseded)
		t.Logf("%d cases, %d superseded; %d fail with a different error code (mostly UNKNOWN_ERROR, now SCRIPTNUM)", len(cases), n, len(mism))
	})
}
