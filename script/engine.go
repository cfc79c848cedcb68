package script

import (
	"errors"
	"fmt"

	"utxod/wire"
)

// Engine verifies input scripts. Implementations are interchangeable so a
// faster engine can be measured against a reference one on the same inputs.
type Engine interface {
	// Name identifies the engine in logs and benchmarks.
	Name() string
	// Prepare does the per-transaction work (sighash midstates etc.) once.
	// prevouts[i] is the output spent by tx.Inputs[i] (value + script). The
	// returned TxVerifier must be safe for concurrent VerifyInput calls. tx
	// and prevouts must stay unmodified while the TxVerifier is in use.
	Prepare(tx *wire.Tx, prevouts []wire.TxOut) (TxVerifier, error)
}

// TxVerifier verifies the inputs of one prepared transaction.
type TxVerifier interface {
	// VerifyInput runs Core's VerifyScript for input i under flags. It
	// returns nil or an *Error.
	VerifyInput(i int, flags Flags) error
}

// Error is a failed input script. Code is Core's ScriptErrorString text
// (src/script/script_error.cpp), e.g. "Signature must be zero for failed
// CHECK(MULTI)SIG operation"; Name is the matching ScriptError name as
// Core's script_tests.json spells it (e.g. "NULLFAIL"); Err is the
// engine's own error, kept for diagnostics.
type Error struct {
	Code  string
	Name  string
	Input int
	Err   error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("script: input %d: %s (%v)", e.Input, e.Code, e.Err)
	}
	return fmt.Sprintf("script: input %d: %s", e.Input, e.Code)
}

// Unwrap returns the engine's own error.
func (e *Error) Unwrap() error { return e.Err }

// newError builds an *Error for the Core ScriptError name.
func newError(name string, input int, err error) *Error {
	return &Error{Code: ErrorString(name), Name: name, Input: input, Err: err}
}

// RejectReason is the reject reason Core's ConnectBlock gives a block with
// a failing input script:
//
//	block-script-verify-flag-failed (<ScriptErrorString>)
//
// following Core master's src/validation.cpp, ConnectBlock:
// strprintf("block-script-verify-flag-failed (%s)", ScriptErrorString(...))
// (also CheckInputScripts for the non-parallel path when no policy flag is
// set). Core before v30 used "mandatory-script-verify-flag-failed (%s)".
// An error that is not an *Error maps to ScriptErrorString's "unknown error".
func RejectReason(err error) string {
	var se *Error
	code := ErrorString("UNKNOWN_ERROR")
	if errors.As(err, &se) {
		code = se.Code
	}
	return "block-script-verify-flag-failed (" + code + ")"
}

// scriptErrors maps Core's ScriptError names (as used in script_tests.json,
// see script_errors[] in src/test/script_tests.cpp) to ScriptErrorString.
var scriptErrors = map[string]string{
	"OK":                                    "No error",
	"UNKNOWN_ERROR":                         "unknown error",
	"EVAL_FALSE":                            "Script evaluated without error but finished with a false/empty top stack element",
	"OP_RETURN":                             "OP_RETURN was encountered",
	"SCRIPT_SIZE":                           "Script is too big",
	"PUSH_SIZE":                             "Push value size limit exceeded",
	"OP_COUNT":                              "Operation limit exceeded",
	"STACK_SIZE":                            "Stack size limit exceeded",
	"SIG_COUNT":                             "Signature count negative or greater than pubkey count",
	"PUBKEY_COUNT":                          "Pubkey count negative or limit exceeded",
	"VERIFY":                                "Script failed an OP_VERIFY operation",
	"EQUALVERIFY":                           "Script failed an OP_EQUALVERIFY operation",
	"CHECKMULTISIGVERIFY":                   "Script failed an OP_CHECKMULTISIGVERIFY operation",
	"CHECKSIGVERIFY":                        "Script failed an OP_CHECKSIGVERIFY operation",
	"NUMEQUALVERIFY":                        "Script failed an OP_NUMEQUALVERIFY operation",
	"BAD_OPCODE":                            "Opcode missing or not understood",
	"DISABLED_OPCODE":                       "Attempted to use a disabled opcode",
	"INVALID_STACK_OPERATION":               "Operation not valid with the current stack size",
	"INVALID_ALTSTACK_OPERATION":            "Operation not valid with the current altstack size",
	"UNBALANCED_CONDITIONAL":                "Invalid OP_IF construction",
	"NEGATIVE_LOCKTIME":                     "Negative locktime",
	"UNSATISFIED_LOCKTIME":                  "Locktime requirement not satisfied",
	"SIG_HASHTYPE":                          "Signature hash type missing or not understood",
	"SIG_DER":                               "Non-canonical DER signature",
	"MINIMALDATA":                           "Data push larger than necessary",
	"SIG_PUSHONLY":                          "Only push operators allowed in signatures",
	"SIG_HIGH_S":                            "Non-canonical signature: S value is unnecessarily high",
	"SIG_NULLDUMMY":                         "Dummy CHECKMULTISIG argument must be zero",
	"PUBKEYTYPE":                            "Public key is neither compressed or uncompressed",
	"CLEANSTACK":                            "Stack size must be exactly one after execution",
	"MINIMALIF":                             "OP_IF/NOTIF argument must be minimal",
	"NULLFAIL":                              "Signature must be zero for failed CHECK(MULTI)SIG operation",
	"DISCOURAGE_UPGRADABLE_NOPS":            "NOPx reserved for soft-fork upgrades",
	"DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM": "Witness version reserved for soft-fork upgrades",
	"DISCOURAGE_UPGRADABLE_TAPROOT_VERSION": "Taproot version reserved for soft-fork upgrades",
	"DISCOURAGE_OP_SUCCESS":                 "OP_SUCCESSx reserved for soft-fork upgrades",
	"DISCOURAGE_UPGRADABLE_PUBKEYTYPE":      "Public key version reserved for soft-fork upgrades",
	"WITNESS_PROGRAM_WRONG_LENGTH":          "Witness program has incorrect length",
	"WITNESS_PROGRAM_WITNESS_EMPTY":         "Witness program was passed an empty witness",
	"WITNESS_PROGRAM_MISMATCH":              "Witness program hash mismatch",
	"WITNESS_MALLEATED":                     "Witness requires empty scriptSig",
	"WITNESS_MALLEATED_P2SH":                "Witness requires only-redeemscript scriptSig",
	"WITNESS_UNEXPECTED":                    "Witness provided for non-witness script",
	"WITNESS_PUBKEYTYPE":                    "Using non-compressed keys in segwit",
	"SCHNORR_SIG_SIZE":                      "Invalid Schnorr signature size",
	"SCHNORR_SIG_HASHTYPE":                  "Invalid Schnorr signature hash type",
	"SCHNORR_SIG":                           "Invalid Schnorr signature",
	"TAPROOT_WRONG_CONTROL_SIZE":            "Invalid Taproot control block size",
	"TAPSCRIPT_VALIDATION_WEIGHT":           "Too much signature validation relative to witness weight",
	"TAPSCRIPT_CHECKMULTISIG":               "OP_CHECKMULTISIG(VERIFY) is not available in tapscript",
	"TAPSCRIPT_MINIMALIF":                   "OP_IF/NOTIF argument must be minimal in tapscript",
	"TAPSCRIPT_EMPTY_PUBKEY":                "Empty public key in tapscript",
	"OP_CODESEPARATOR":                      "Using OP_CODESEPARATOR in non-witness script",
	"SIG_FINDANDDELETE":                     "Signature is found in scriptCode",
	// SCRIPT_ERR_SCRIPTNUM (EvalScript's catch of scriptnum_error; Core
	// before it used SCRIPT_ERR_UNKNOWN_ERROR). Its ScriptErrorString text
	// could not be confirmed from Core's source here; until it is, the
	// text is ScriptErrorString's default.
	"SCRIPTNUM": "unknown error",
}

// ErrorString returns Core's ScriptErrorString text for a ScriptError name
// ("EVAL_FALSE" → "Script evaluated without error but finished with a
// false/empty top stack element"); unknown names give "unknown error", as
// ScriptErrorString's default case does.
func ErrorString(name string) string {
	if s, ok := scriptErrors[name]; ok {
		return s
	}
	return "unknown error"
}

// Engine-independent errors returned by Prepare and VerifyInput for misuse.
var (
	// ErrPrevoutCount: len(prevouts) != len(tx.Inputs).
	ErrPrevoutCount = errors.New("script: prevout count does not match input count")
	// ErrInputIndex: VerifyInput index out of range.
	ErrInputIndex = errors.New("script: input index out of range")
	// ErrBadFlags: a flag combination Core's VerifyScript refuses (see Flags.Valid).
	ErrBadFlags = errors.New("script: invalid flag combination")
)
