// Package script verifies transaction input scripts behind a small Engine
// interface so that engines can be measured against each other.
//
// Engine.Prepare does the per-transaction work once; the returned
// TxVerifier's VerifyInput runs Core's VerifyScript for one input under a
// set of Flags (Core's SCRIPT_VERIFY_* bits) and returns an *Error carrying
// an ErrorCode, Core's ScriptError_t, whose one table gives each code its
// script_tests.json name and ScriptErrorString text; match codes with
// errors.Is(err, ErrNullFail). RejectReason turns such an error into the
// reject reason Core's ConnectBlock reports. The reference engine on btcd's
// txscript/v2, the differential oracle of the tests, is testkit/btcdengine.
//
// The package also has Core-exact script analysis used by block validation:
// sigop counting (LegacySigOpCount, P2SHSigOpCount, WitnessSigOpCount,
// TxSigOpCost), IsPayToScriptHash, IsWitnessProgram, IsPushOnly,
// IsUnspendable, and a streaming legacy signature hash (LegacySigHash).
package script
