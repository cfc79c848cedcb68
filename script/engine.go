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

// Error is a failed input script. Code is Core's ScriptError code (its
// Name as script_tests.json spells it, e.g. "NULLFAIL"; its Text is
// ScriptErrorString's, e.g. "Signature must be zero for failed
// CHECK(MULTI)SIG operation"); Err is the engine's own error, kept for
// diagnostics. errors.Is(err, code) matches an *Error by Code.
type Error struct {
	Code  ErrorCode
	Input int
	Err   error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("script: input %d: %s (%v)", e.Input, e.Code.Text(), e.Err)
	}
	return fmt.Sprintf("script: input %d: %s", e.Input, e.Code.Text())
}

// Unwrap returns the engine's own error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the ErrorCode e.Code, so that
// errors.Is(err, ErrEvalFalse) matches a failed input by its code.
func (e *Error) Is(target error) bool {
	c, ok := target.(ErrorCode)
	return ok && c == e.Code
}

// newError builds an *Error for a Core ScriptError code.
func newError(code ErrorCode, input int, err error) *Error {
	return &Error{Code: code, Input: input, Err: err}
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
	code := ErrUnknown
	var se *Error
	if errors.As(err, &se) {
		code = se.Code
	}
	return "block-script-verify-flag-failed (" + code.Text() + ")"
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
