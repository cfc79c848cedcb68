package script

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"

	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // hash160 for P2SH test scripts

	"utxod/wire"
)

func hash160(b []byte) []byte {
	s := sha256.Sum256(b)
	r := ripemd160.New()
	r.Write(s[:])
	return r.Sum(nil)
}

func p2sh(redeem []byte) []byte {
	return append(append([]byte{opHash160, 0x14}, hash160(redeem)...), opEqual)
}

func p2wsh(ws []byte) []byte {
	h := sha256.Sum256(ws)
	return append([]byte{0x00, 0x20}, h[:]...)
}

func mustScript(t *testing.T, s string) []byte {
	t.Helper()
	b, err := parseScript(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Cases after Core's src/test/sigopcount_tests.cpp (GetSigOpCount and
// GetTxSigOpCost), plus parse-failure edges of CScript::GetSigOpCount.
func TestLegacySigOpCount(t *testing.T) {
	dummy := "0x14 0x0000000000000000000000000000000000000000"
	pk := "0x21 0x02" + string(bytes.Repeat([]byte("11"), 32))
	s1 := "1 " + dummy + " " + dummy + " 2 CHECKMULTISIG"
	tests := []struct {
		name              string
		script            string
		accurate, inexact int
	}{
		{"empty", "", 0, 0},
		{"sigopcount_tests s1", s1, 2, 20},
		{"s1 IF CHECKSIG ENDIF", s1 + " IF CHECKSIG ENDIF", 3, 21},
		{"1-of-3 multisig", "1 " + pk + " " + pk + " " + pk + " 3 CHECKMULTISIG", 3, 20},
		{"CHECKSIGVERIFY", "CHECKSIGVERIFY CHECKSIG", 2, 2},
		{"CHECKMULTISIGVERIFY 16", "16 CHECKMULTISIGVERIFY", 16, 20},
		{"CHECKMULTISIG after push", "0x01 0x05 CHECKMULTISIG", 20, 20},
		{"CHECKMULTISIG first", "CHECKMULTISIG", 20, 20},
		{"OP_0 before CHECKMULTISIG", "0 CHECKMULTISIG", 20, 20},
		{"stops at truncated push", "CHECKSIG 0x4c", 1, 1},
		{"truncated push hides later ops", "CHECKSIG 0x05 0xac 0xac", 1, 1},
		{"pushed CHECKSIG bytes don't count", "0x02 0xacac", 0, 0},
		{"PUSHDATA2 truncated", "CHECKSIG 0x4d 0x01", 1, 1},
	}
	for _, tc := range tests {
		s := mustScript(t, tc.script)
		if got := LegacySigOpCount(s, true); got != tc.accurate {
			t.Errorf("%s: accurate %d, want %d", tc.name, got, tc.accurate)
		}
		if got := LegacySigOpCount(s, false); got != tc.inexact {
			t.Errorf("%s: inexact %d, want %d", tc.name, got, tc.inexact)
		}
	}
}

func TestP2SHSigOpCount(t *testing.T) {
	dummy := "0x14 0x0000000000000000000000000000000000000000"
	s1 := mustScript(t, "1 "+dummy+" "+dummy+" 2 CHECKMULTISIG IF CHECKSIG ENDIF")
	s2 := mustScript(t, "1 0x21 0x02"+string(bytes.Repeat([]byte("22"), 32))+" 0x21 0x03"+
		string(bytes.Repeat([]byte("33"), 32))+" 0x21 0x02"+string(bytes.Repeat([]byte("44"), 32))+" 3 CHECKMULTISIG")
	tests := []struct {
		name      string
		scriptSig []byte
		prev      []byte
		want      int
	}{
		{"sigopcount_tests s1", pushData([]byte{0}, s1), p2sh(s1), 3},
		{"sigopcount_tests s2", pushData(mustScript(t, "1 "+dummy+" "+dummy), s2), p2sh(s2), 3},
		{"not P2SH", pushData(nil, s1), s1, 0},
		{"non-push scriptSig", append(pushData(nil, s1), 0x61), p2sh(s1), 0},
		{"OP_RESERVED is push-only", append([]byte{0x50}, pushData(nil, s1)...), p2sh(s1), 3},
		{"unparsable scriptSig", append(pushData(nil, s1), 0x4c), p2sh(s1), 0},
		{"empty scriptSig", nil, p2sh(s1), 0},
		{"last push is OP_1", append(pushData(nil, s1), 0x51), p2sh(s1), 0},
	}
	for _, tc := range tests {
		if got := P2SHSigOpCount(tc.scriptSig, tc.prev); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestWitnessSigOpCount(t *testing.T) {
	pk := mustScript(t, "0x21 0x02"+string(bytes.Repeat([]byte("11"), 32)))
	ws := mustScript(t, "1 0x21 0x02"+string(bytes.Repeat([]byte("11"), 32))+
		" 0x21 0x02"+string(bytes.Repeat([]byte("11"), 32))+" 2 CHECKMULTISIGVERIFY")
	p2wpkh := append([]byte{0, 0x14}, hash160(pk[1:])...)
	all := P2SH | Witness
	tests := []struct {
		name      string
		scriptSig []byte
		prev      []byte
		witness   [][]byte
		flags     Flags
		want      int
	}{
		{"P2WPKH", nil, p2wpkh, [][]byte{{1}, pk[1:]}, all, 1},
		{"P2WPKH, no WITNESS flag", nil, p2wpkh, [][]byte{{1}, pk[1:]}, P2SH, 0},
		{"P2WPKH, empty witness", nil, p2wpkh, nil, all, 1},
		{"P2SH-P2WPKH", pushData(nil, p2wpkh), p2sh(p2wpkh), [][]byte{{1}, pk[1:]}, all, 1},
		{"P2SH-P2WPKH, non-push scriptSig", append(pushData(nil, p2wpkh), 0x61), p2sh(p2wpkh), nil, all, 0},
		{"P2WSH multisig", nil, p2wsh(ws), [][]byte{{}, {1}, ws}, all, 2},
		{"P2WSH, empty witness", nil, p2wsh(ws), nil, all, 0},
		{"P2SH-P2WSH", pushData(nil, p2wsh(ws)), p2sh(p2wsh(ws)), [][]byte{{}, {1}, ws}, all, 2},
		{"P2WSH wrong program size", nil, append([]byte{0, 0x1f}, make([]byte, 31)...), [][]byte{ws}, all, 0},
		{"witness v1", nil, append([]byte{0x51, 0x20}, make([]byte, 32)...), [][]byte{ws}, all, 0},
		{"P2SH non-witness redeem", pushData(nil, ws), p2sh(ws), nil, all, 0},
		{"legacy", nil, pk, nil, all, 0},
	}
	for _, tc := range tests {
		if got := WitnessSigOpCount(tc.scriptSig, tc.prev, tc.witness, tc.flags); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestScriptPredicates(t *testing.T) {
	h := make([]byte, 20)
	tests := []struct {
		name       string
		script     []byte
		p2sh, push bool
		unspend    bool
		wv         int
		wok        bool
	}{
		{"empty", nil, false, true, false, 0, false},
		{"P2SH", p2sh(nil), true, false, false, 0, false},
		{"P2SH with PUSHDATA1", append(append([]byte{opHash160, 0x4c, 0x14}, h...), opEqual), false, false, false, 0, false},
		{"OP_RETURN", []byte{opReturn, 1, 2}, false, false, true, 0, false},
		{"oversize", make([]byte, MaxScriptSize+1), false, true, true, 0, false},
		{"max size", make([]byte, MaxScriptSize), false, true, false, 0, false},
		{"v0 20", append([]byte{0, 20}, h...), false, true, false, 0, true},
		{"v16 2", []byte{0x60, 2, 0, 0}, false, true, false, 16, true},
		{"P2A", []byte{0x51, 2, 0x4e, 0x73}, false, true, false, 1, true},
		{"v1 40", append([]byte{0x51, 40}, make([]byte, 40)...), false, true, false, 1, true},
		{"v1 41 too long", append([]byte{0x51, 41}, make([]byte, 41)...), false, true, false, 0, false},
		{"v0 1 too short", []byte{0, 1, 0}, false, true, false, 0, false},
		{"OP_1NEGATE version", []byte{0x4f, 2, 0, 0}, false, true, false, 0, false},
		{"length mismatch", []byte{0, 3, 0, 0}, false, false, false, 0, false},
		{"OP_RESERVED push-only", []byte{0x50}, false, true, false, 0, false},
		{"NOP not push-only", []byte{0x61}, false, false, false, 0, false},
	}
	for _, tc := range tests {
		if got := IsPayToScriptHash(tc.script); got != tc.p2sh {
			t.Errorf("%s: IsPayToScriptHash %v", tc.name, got)
		}
		if got := IsPushOnly(tc.script); got != tc.push {
			t.Errorf("%s: IsPushOnly %v", tc.name, got)
		}
		if got := IsUnspendable(tc.script); got != tc.unspend {
			t.Errorf("%s: IsUnspendable %v", tc.name, got)
		}
		v, prog, ok := IsWitnessProgram(tc.script)
		if ok != tc.wok || v != tc.wv || (ok && !bytes.Equal(prog, tc.script[2:])) {
			t.Errorf("%s: IsWitnessProgram %d %x %v", tc.name, v, prog, ok)
		}
	}
}

func TestTxSigOpCost(t *testing.T) {
	pk := mustScript(t, "0x21 0x02"+string(bytes.Repeat([]byte("11"), 32)))
	ms := mustScript(t, "1 0x21 0x02"+string(bytes.Repeat([]byte("11"), 32))+
		" 0x21 0x02"+string(bytes.Repeat([]byte("11"), 32))+" 2 CHECKMULTISIGVERIFY")
	// Spends a P2SH multisig (2 sigops ×4), a P2WSH multisig (2) and a
	// P2WPKH (1); creates one bare multisig output (20 ×4, inexact).
	p2wpkh := append([]byte{0, 0x14}, hash160(pk[1:])...)
	tx := mustParse(t, &rawTx{
		version: 2,
		ins: []wire.TxIn{
			{PrevIndex: 0, Script: pushData([]byte{0}, ms)},
			{PrevIndex: 1, Witness: [][]byte{{}, {1}, ms}},
			{PrevIndex: 2, Witness: [][]byte{{1}, pk[1:]}},
		},
		outs: []wire.TxOut{{Value: 1, Script: ms}},
	})
	prev := []wire.TxOut{{Script: p2sh(ms)}, {Script: p2wsh(ms)}, {Script: p2wpkh}}
	if got, want := TxSigOpCost(tx, prev, P2SH|Witness), int64(20*4+2*4+2+1); got != want {
		t.Errorf("cost %d, want %d", got, want)
	}
	if got, want := TxSigOpCost(tx, prev, None), int64(20*4); got != want {
		t.Errorf("cost without P2SH/WITNESS %d, want %d", got, want)
	}
	if got := LegacyTxSigOpCount(tx); got != 20 {
		t.Errorf("legacy %d", got)
	}
}

func TestFlags(t *testing.T) {
	f, err := ParseFlags("P2SH,WITNESS")
	if err != nil || f != P2SH|Witness {
		t.Fatalf("%v %v", f, err)
	}
	if s := (P2SH | Witness | Taproot).String(); s != "P2SH,WITNESS,TAPROOT" {
		t.Errorf("String %q", s)
	}
	for _, fn := range flagNames {
		g, err := ParseFlags(fn.f.String())
		if err != nil || g != fn.f {
			t.Errorf("%s round trip: %v %v", fn.name, g, err)
		}
	}
	if g, _ := ParseFlags(AllFlags.String()); g != AllFlags {
		t.Error("AllFlags round trip")
	}
	if _, err := ParseFlags("P2SH,BOGUS"); err == nil {
		t.Error("unknown flag accepted")
	}
	if g, err := ParseFlags("NONE"); err != nil || g != None || None.String() != "NONE" {
		t.Error("NONE")
	}
	if !Standard.Valid() || !Mandatory.Valid() || (Witness).Valid() || (CleanStack | P2SH).Valid() {
		t.Error("Valid")
	}
	if s := Flags(1 << 30).String(); s != "0x40000000" {
		t.Errorf("unknown bit %q", s)
	}
}

func TestRejectReason(t *testing.T) {
	tx, prev := creditSpend(t, nil, []byte{0x00}, nil, 0)
	v, err := NewBtcdEngine().Prepare(tx, []wire.TxOut{prev})
	if err != nil {
		t.Fatal(err)
	}
	err = v.VerifyInput(0, Mandatory)
	want := "block-script-verify-flag-failed (Script evaluated without error but finished with a false/empty top stack element)"
	if got := RejectReason(err); got != want {
		t.Errorf("RejectReason %q", got)
	}
	var se *Error
	if !errors.As(err, &se) || se.Code != ErrEvalFalse || se.Input != 0 || !errors.Is(err, ErrEvalFalse) || errors.Is(err, ErrVerify) {
		t.Errorf("error %#v", err)
	}
	if got := RejectReason(errors.New("x")); got != "block-script-verify-flag-failed (unknown error)" {
		t.Errorf("%q", got)
	}
	// Misuse is an error, never a panic.
	if err := v.VerifyInput(5, Mandatory); !errors.Is(err, ErrInputIndex) {
		t.Errorf("index: %v", err)
	}
	if err := v.VerifyInput(0, Witness); !errors.Is(err, ErrBadFlags) {
		t.Errorf("flags: %v", err)
	}
	if _, err := NewBtcdEngine().Prepare(tx, nil); !errors.Is(err, ErrPrevoutCount) {
		t.Errorf("prevouts: %v", err)
	}
	if ErrNullFail.Text() != "Signature must be zero for failed CHECK(MULTI)SIG operation" || ErrNullFail.Name() != "NULLFAIL" {
		t.Error("ErrNullFail")
	}
}
