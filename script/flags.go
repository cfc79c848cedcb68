package script

import (
	"fmt"
	"strings"
)

// Flags is a set of script verification flags. The bit values are Bitcoin
// Core's SCRIPT_VERIFY_* constants (src/script/interpreter.h), so a Flags
// value means the same thing as Core's flags word.
type Flags uint32

// Script verification flags, named and numbered as Core's SCRIPT_VERIFY_*.
const (
	// None: no flags (SCRIPT_VERIFY_NONE).
	None Flags = 0
	// P2SH evaluates pay-to-script-hash subscripts (BIP16).
	P2SH Flags = 1 << 0
	// StrictEnc requires strict signature and public key encodings (policy).
	StrictEnc Flags = 1 << 1
	// DERSig requires strict DER signatures (BIP66).
	DERSig Flags = 1 << 2
	// LowS requires S <= order/2 in ECDSA signatures (policy, BIP62 rule 5).
	LowS Flags = 1 << 3
	// NullDummy requires the CHECKMULTISIG dummy to be empty (BIP147).
	NullDummy Flags = 1 << 4
	// SigPushOnly requires scriptSig to be push-only (BIP62 rule 2).
	SigPushOnly Flags = 1 << 5
	// MinimalData requires minimal pushes and numbers (policy, BIP62 rules 3, 4).
	MinimalData Flags = 1 << 6
	// DiscourageUpgradableNops fails on executed NOP1, NOP4-NOP10 (policy).
	DiscourageUpgradableNops Flags = 1 << 7
	// CleanStack requires exactly one stack element after evaluation (policy).
	CleanStack Flags = 1 << 8
	// CheckLockTimeVerify enables OP_CHECKLOCKTIMEVERIFY (BIP65).
	CheckLockTimeVerify Flags = 1 << 9
	// CheckSequenceVerify enables OP_CHECKSEQUENCEVERIFY (BIP112).
	CheckSequenceVerify Flags = 1 << 10
	// Witness enables segregated witness (BIP141, BIP143).
	Witness Flags = 1 << 11
	// DiscourageUpgradableWitnessProgram fails on unknown witness versions (policy).
	DiscourageUpgradableWitnessProgram Flags = 1 << 12
	// MinimalIf requires minimal OP_IF/NOTIF arguments in segwit v0 (policy).
	MinimalIf Flags = 1 << 13
	// NullFail requires failed signature checks to have empty signatures (policy).
	NullFail Flags = 1 << 14
	// WitnessPubkeyType requires compressed keys in segwit v0 (policy).
	WitnessPubkeyType Flags = 1 << 15
	// ConstScriptcode forbids OP_CODESEPARATOR and FindAndDelete matches in
	// non-segwit scripts (policy).
	ConstScriptcode Flags = 1 << 16
	// Taproot enables taproot and tapscript (BIP341, BIP342).
	Taproot Flags = 1 << 17
	// DiscourageUpgradableTaprootVersion fails on unknown leaf versions (policy).
	DiscourageUpgradableTaprootVersion Flags = 1 << 18
	// DiscourageOpSuccess fails on OP_SUCCESSx in tapscript (policy).
	DiscourageOpSuccess Flags = 1 << 19
	// DiscourageUpgradablePubkeyType fails on unknown tapscript key types (policy).
	DiscourageUpgradablePubkeyType Flags = 1 << 20

	// AllFlags is every flag defined above.
	AllFlags Flags = 1<<21 - 1

	// Mandatory is Core's MANDATORY_SCRIPT_VERIFY_FLAGS (policy/policy.h):
	// the consensus flags of today's chain tip.
	Mandatory = P2SH | DERSig | NullDummy | CheckLockTimeVerify | CheckSequenceVerify | Witness | Taproot

	// Standard is Core's STANDARD_SCRIPT_VERIFY_FLAGS (policy/policy.h).
	Standard = Mandatory | StrictEnc | MinimalData | DiscourageUpgradableNops | CleanStack | MinimalIf |
		NullFail | LowS | DiscourageUpgradableWitnessProgram | WitnessPubkeyType | ConstScriptcode |
		DiscourageUpgradableTaprootVersion | DiscourageOpSuccess | DiscourageUpgradablePubkeyType
)

// flagNames lists the flags in bit order with Core's names (the keys of
// mapFlagNames in src/test/transaction_tests.cpp).
var flagNames = [...]struct {
	f    Flags
	name string
}{
	{P2SH, "P2SH"},
	{StrictEnc, "STRICTENC"},
	{DERSig, "DERSIG"},
	{LowS, "LOW_S"},
	{NullDummy, "NULLDUMMY"},
	{SigPushOnly, "SIGPUSHONLY"},
	{MinimalData, "MINIMALDATA"},
	{DiscourageUpgradableNops, "DISCOURAGE_UPGRADABLE_NOPS"},
	{CleanStack, "CLEANSTACK"},
	{CheckLockTimeVerify, "CHECKLOCKTIMEVERIFY"},
	{CheckSequenceVerify, "CHECKSEQUENCEVERIFY"},
	{Witness, "WITNESS"},
	{DiscourageUpgradableWitnessProgram, "DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM"},
	{MinimalIf, "MINIMALIF"},
	{NullFail, "NULLFAIL"},
	{WitnessPubkeyType, "WITNESS_PUBKEYTYPE"},
	{ConstScriptcode, "CONST_SCRIPTCODE"},
	{Taproot, "TAPROOT"},
	{DiscourageUpgradableTaprootVersion, "DISCOURAGE_UPGRADABLE_TAPROOT_VERSION"},
	{DiscourageOpSuccess, "DISCOURAGE_OP_SUCCESS"},
	{DiscourageUpgradablePubkeyType, "DISCOURAGE_UPGRADABLE_PUBKEYTYPE"},
}

// ParseFlags parses a comma-separated list of Core flag names, as used by
// Core's test vectors ("P2SH,WITNESS"). The empty string and "NONE" are the
// empty set. An unknown name is an error.
func ParseFlags(s string) (Flags, error) {
	var f Flags
	if s == "" || s == "NONE" {
		return None, nil
	}
	for _, word := range strings.Split(s, ",") {
		word = strings.TrimSpace(word)
		found := false
		for _, fn := range flagNames {
			if fn.name == word {
				f |= fn.f
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("script: unknown verification flag %q", word)
		}
	}
	return f, nil
}

// String lists the set flags by Core name in bit order, comma-separated;
// the empty set is "NONE" and bits without a name are shown in hex.
func (f Flags) String() string {
	if f == None {
		return "NONE"
	}
	var b strings.Builder
	for _, fn := range flagNames {
		if f&fn.f != 0 {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(fn.name)
		}
	}
	if rest := f &^ AllFlags; rest != 0 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%#x", uint32(rest))
	}
	return b.String()
}

// Has reports whether every flag in g is set in f.
func (f Flags) Has(g Flags) bool { return f&g == g }

// Valid reports whether f is a combination Core's VerifyScript accepts
// (IsValidFlagCombination in src/script/interpreter.cpp): WITNESS requires
// P2SH, and CLEANSTACK requires both.
func (f Flags) Valid() bool {
	if f&Witness != 0 && f&P2SH == 0 {
		return false
	}
	if f&CleanStack != 0 && (f&Witness == 0 || f&P2SH == 0) {
		return false
	}
	return true
}
