package script

// ErrorCode is Core's ScriptError_t (src/script/script_error.h): why an
// input script failed. The zero value ErrOK is success. Each code has one
// row in errorCodes giving its name (as Core's script_tests.json and the
// script_errors[] table of src/test/script_tests.cpp spell it, e.g.
// "EVAL_FALSE" for SCRIPT_ERR_EVAL_FALSE) and its ScriptErrorString text
// (src/script/script_error.cpp).
//
// ErrorCode implements error, so a failed VerifyInput can be matched with
// errors.Is(err, script.ErrNullFail); *Error's Is method compares codes.
type ErrorCode uint8

// The codes, in Core's ScriptError_t order.
const (
	ErrOK                                 ErrorCode = iota // SCRIPT_ERR_OK
	ErrUnknown                                             // SCRIPT_ERR_UNKNOWN_ERROR
	ErrEvalFalse                                           // SCRIPT_ERR_EVAL_FALSE
	ErrOpReturn                                            // SCRIPT_ERR_OP_RETURN
	ErrScriptSize                                          // SCRIPT_ERR_SCRIPT_SIZE
	ErrPushSize                                            // SCRIPT_ERR_PUSH_SIZE
	ErrOpCount                                             // SCRIPT_ERR_OP_COUNT
	ErrStackSize                                           // SCRIPT_ERR_STACK_SIZE
	ErrSigCount                                            // SCRIPT_ERR_SIG_COUNT
	ErrPubKeyCount                                         // SCRIPT_ERR_PUBKEY_COUNT
	ErrVerify                                              // SCRIPT_ERR_VERIFY
	ErrEqualVerify                                         // SCRIPT_ERR_EQUALVERIFY
	ErrCheckMultisigVerify                                 // SCRIPT_ERR_CHECKMULTISIGVERIFY
	ErrCheckSigVerify                                      // SCRIPT_ERR_CHECKSIGVERIFY
	ErrNumEqualVerify                                      // SCRIPT_ERR_NUMEQUALVERIFY
	ErrBadOpcode                                           // SCRIPT_ERR_BAD_OPCODE
	ErrDisabledOpcode                                      // SCRIPT_ERR_DISABLED_OPCODE
	ErrInvalidStackOperation                               // SCRIPT_ERR_INVALID_STACK_OPERATION
	ErrInvalidAltstackOperation                            // SCRIPT_ERR_INVALID_ALTSTACK_OPERATION
	ErrUnbalancedConditional                               // SCRIPT_ERR_UNBALANCED_CONDITIONAL
	ErrNegativeLocktime                                    // SCRIPT_ERR_NEGATIVE_LOCKTIME
	ErrUnsatisfiedLocktime                                 // SCRIPT_ERR_UNSATISFIED_LOCKTIME
	ErrSigHashType                                         // SCRIPT_ERR_SIG_HASHTYPE
	ErrSigDER                                              // SCRIPT_ERR_SIG_DER
	ErrMinimalData                                         // SCRIPT_ERR_MINIMALDATA
	ErrSigPushOnly                                         // SCRIPT_ERR_SIG_PUSHONLY
	ErrSigHighS                                            // SCRIPT_ERR_SIG_HIGH_S
	ErrSigNullDummy                                        // SCRIPT_ERR_SIG_NULLDUMMY
	ErrPubKeyType                                          // SCRIPT_ERR_PUBKEYTYPE
	ErrCleanStack                                          // SCRIPT_ERR_CLEANSTACK
	ErrMinimalIf                                           // SCRIPT_ERR_MINIMALIF
	ErrNullFail                                            // SCRIPT_ERR_SIG_NULLFAIL
	ErrDiscourageUpgradableNops                            // SCRIPT_ERR_DISCOURAGE_UPGRADABLE_NOPS
	ErrDiscourageUpgradableWitnessProgram                  // SCRIPT_ERR_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM
	ErrDiscourageUpgradableTaprootVersion                  // SCRIPT_ERR_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION
	ErrDiscourageOpSuccess                                 // SCRIPT_ERR_DISCOURAGE_OP_SUCCESS
	ErrDiscourageUpgradablePubKeyType                      // SCRIPT_ERR_DISCOURAGE_UPGRADABLE_PUBKEYTYPE
	ErrWitnessProgramWrongLength                           // SCRIPT_ERR_WITNESS_PROGRAM_WRONG_LENGTH
	ErrWitnessProgramWitnessEmpty                          // SCRIPT_ERR_WITNESS_PROGRAM_WITNESS_EMPTY
	ErrWitnessProgramMismatch                              // SCRIPT_ERR_WITNESS_PROGRAM_MISMATCH
	ErrWitnessMalleated                                    // SCRIPT_ERR_WITNESS_MALLEATED
	ErrWitnessMalleatedP2SH                                // SCRIPT_ERR_WITNESS_MALLEATED_P2SH
	ErrWitnessUnexpected                                   // SCRIPT_ERR_WITNESS_UNEXPECTED
	ErrWitnessPubKeyType                                   // SCRIPT_ERR_WITNESS_PUBKEYTYPE
	ErrSchnorrSigSize                                      // SCRIPT_ERR_SCHNORR_SIG_SIZE
	ErrSchnorrSigHashType                                  // SCRIPT_ERR_SCHNORR_SIG_HASHTYPE
	ErrSchnorrSig                                          // SCRIPT_ERR_SCHNORR_SIG
	ErrTaprootWrongControlSize                             // SCRIPT_ERR_TAPROOT_WRONG_CONTROL_SIZE
	ErrTapscriptValidationWeight                           // SCRIPT_ERR_TAPSCRIPT_VALIDATION_WEIGHT
	ErrTapscriptCheckMultisig                              // SCRIPT_ERR_TAPSCRIPT_CHECKMULTISIG
	ErrTapscriptMinimalIf                                  // SCRIPT_ERR_TAPSCRIPT_MINIMALIF
	ErrTapscriptEmptyPubKey                                // SCRIPT_ERR_TAPSCRIPT_EMPTY_PUBKEY
	ErrOpCodeSeparator                                     // SCRIPT_ERR_OP_CODESEPARATOR
	ErrSigFindAndDelete                                    // SCRIPT_ERR_SIG_FINDANDDELETE
	ErrScriptNum                                           // SCRIPT_ERR_SCRIPTNUM

	numErrorCodes // SCRIPT_ERR_ERROR_COUNT
)

// errorCodes is the one table of code → name and ScriptErrorString text.
var errorCodes = [numErrorCodes]struct{ name, text string }{
	ErrOK:                                 {"OK", "No error"},
	ErrUnknown:                            {"UNKNOWN_ERROR", "unknown error"},
	ErrEvalFalse:                          {"EVAL_FALSE", "Script evaluated without error but finished with a false/empty top stack element"},
	ErrOpReturn:                           {"OP_RETURN", "OP_RETURN was encountered"},
	ErrScriptSize:                         {"SCRIPT_SIZE", "Script is too big"},
	ErrPushSize:                           {"PUSH_SIZE", "Push value size limit exceeded"},
	ErrOpCount:                            {"OP_COUNT", "Operation limit exceeded"},
	ErrStackSize:                          {"STACK_SIZE", "Stack size limit exceeded"},
	ErrSigCount:                           {"SIG_COUNT", "Signature count negative or greater than pubkey count"},
	ErrPubKeyCount:                        {"PUBKEY_COUNT", "Pubkey count negative or limit exceeded"},
	ErrVerify:                             {"VERIFY", "Script failed an OP_VERIFY operation"},
	ErrEqualVerify:                        {"EQUALVERIFY", "Script failed an OP_EQUALVERIFY operation"},
	ErrCheckMultisigVerify:                {"CHECKMULTISIGVERIFY", "Script failed an OP_CHECKMULTISIGVERIFY operation"},
	ErrCheckSigVerify:                     {"CHECKSIGVERIFY", "Script failed an OP_CHECKSIGVERIFY operation"},
	ErrNumEqualVerify:                     {"NUMEQUALVERIFY", "Script failed an OP_NUMEQUALVERIFY operation"},
	ErrBadOpcode:                          {"BAD_OPCODE", "Opcode missing or not understood"},
	ErrDisabledOpcode:                     {"DISABLED_OPCODE", "Attempted to use a disabled opcode"},
	ErrInvalidStackOperation:              {"INVALID_STACK_OPERATION", "Operation not valid with the current stack size"},
	ErrInvalidAltstackOperation:           {"INVALID_ALTSTACK_OPERATION", "Operation not valid with the current altstack size"},
	ErrUnbalancedConditional:              {"UNBALANCED_CONDITIONAL", "Invalid OP_IF construction"},
	ErrNegativeLocktime:                   {"NEGATIVE_LOCKTIME", "Negative locktime"},
	ErrUnsatisfiedLocktime:                {"UNSATISFIED_LOCKTIME", "Locktime requirement not satisfied"},
	ErrSigHashType:                        {"SIG_HASHTYPE", "Signature hash type missing or not understood"},
	ErrSigDER:                             {"SIG_DER", "Non-canonical DER signature"},
	ErrMinimalData:                        {"MINIMALDATA", "Data push larger than necessary"},
	ErrSigPushOnly:                        {"SIG_PUSHONLY", "Only push operators allowed in signatures"},
	ErrSigHighS:                           {"SIG_HIGH_S", "Non-canonical signature: S value is unnecessarily high"},
	ErrSigNullDummy:                       {"SIG_NULLDUMMY", "Dummy CHECKMULTISIG argument must be zero"},
	ErrPubKeyType:                         {"PUBKEYTYPE", "Public key is neither compressed or uncompressed"},
	ErrCleanStack:                         {"CLEANSTACK", "Stack size must be exactly one after execution"},
	ErrMinimalIf:                          {"MINIMALIF", "OP_IF/NOTIF argument must be minimal"},
	ErrNullFail:                           {"NULLFAIL", "Signature must be zero for failed CHECK(MULTI)SIG operation"},
	ErrDiscourageUpgradableNops:           {"DISCOURAGE_UPGRADABLE_NOPS", "NOPx reserved for soft-fork upgrades"},
	ErrDiscourageUpgradableWitnessProgram: {"DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM", "Witness version reserved for soft-fork upgrades"},
	ErrDiscourageUpgradableTaprootVersion: {"DISCOURAGE_UPGRADABLE_TAPROOT_VERSION", "Taproot version reserved for soft-fork upgrades"},
	ErrDiscourageOpSuccess:                {"DISCOURAGE_OP_SUCCESS", "OP_SUCCESSx reserved for soft-fork upgrades"},
	ErrDiscourageUpgradablePubKeyType:     {"DISCOURAGE_UPGRADABLE_PUBKEYTYPE", "Public key version reserved for soft-fork upgrades"},
	ErrWitnessProgramWrongLength:          {"WITNESS_PROGRAM_WRONG_LENGTH", "Witness program has incorrect length"},
	ErrWitnessProgramWitnessEmpty:         {"WITNESS_PROGRAM_WITNESS_EMPTY", "Witness program was passed an empty witness"},
	ErrWitnessProgramMismatch:             {"WITNESS_PROGRAM_MISMATCH", "Witness program hash mismatch"},
	ErrWitnessMalleated:                   {"WITNESS_MALLEATED", "Witness requires empty scriptSig"},
	ErrWitnessMalleatedP2SH:               {"WITNESS_MALLEATED_P2SH", "Witness requires only-redeemscript scriptSig"},
	ErrWitnessUnexpected:                  {"WITNESS_UNEXPECTED", "Witness provided for non-witness script"},
	ErrWitnessPubKeyType:                  {"WITNESS_PUBKEYTYPE", "Using non-compressed keys in segwit"},
	ErrSchnorrSigSize:                     {"SCHNORR_SIG_SIZE", "Invalid Schnorr signature size"},
	ErrSchnorrSigHashType:                 {"SCHNORR_SIG_HASHTYPE", "Invalid Schnorr signature hash type"},
	ErrSchnorrSig:                         {"SCHNORR_SIG", "Invalid Schnorr signature"},
	ErrTaprootWrongControlSize:            {"TAPROOT_WRONG_CONTROL_SIZE", "Invalid Taproot control block size"},
	ErrTapscriptValidationWeight:          {"TAPSCRIPT_VALIDATION_WEIGHT", "Too much signature validation relative to witness weight"},
	ErrTapscriptCheckMultisig:             {"TAPSCRIPT_CHECKMULTISIG", "OP_CHECKMULTISIG(VERIFY) is not available in tapscript"},
	ErrTapscriptMinimalIf:                 {"TAPSCRIPT_MINIMALIF", "OP_IF/NOTIF argument must be minimal in tapscript"},
	ErrTapscriptEmptyPubKey:               {"TAPSCRIPT_EMPTY_PUBKEY", "Empty public key in tapscript"},
	ErrOpCodeSeparator:                    {"OP_CODESEPARATOR", "Using OP_CODESEPARATOR in non-witness script"},
	ErrSigFindAndDelete:                   {"SIG_FINDANDDELETE", "Signature is found in scriptCode"},
	// SCRIPT_ERR_SCRIPTNUM is EvalScript's catch of scriptnum_error (Core
	// before it used SCRIPT_ERR_UNKNOWN_ERROR). Its ScriptErrorString text
	// could not be confirmed from Core's source here; until it is, the text
	// is ScriptErrorString's default, the one text shared by two codes.
	ErrScriptNum: {"SCRIPTNUM", "unknown error"},
}

// Name is the code's name as script_tests.json spells it ("EVAL_FALSE");
// a value outside the table gives "UNKNOWN_ERROR".
func (c ErrorCode) Name() string {
	if c >= numErrorCodes {
		c = ErrUnknown
	}
	return errorCodes[c].name
}

// Text is Core's ScriptErrorString text ("Script evaluated without error
// but finished with a false/empty top stack element"); a value outside the
// table gives "unknown error", as ScriptErrorString's default case does.
func (c ErrorCode) Text() string {
	if c >= numErrorCodes {
		c = ErrUnknown
	}
	return errorCodes[c].text
}

// String returns Name.
func (c ErrorCode) String() string { return c.Name() }

// Error returns Text.
func (c ErrorCode) Error() string { return c.Text() }

// ErrorCodeByName returns the code with the script_tests.json name
// ("NULLFAIL" → ErrNullFail).
func ErrorCodeByName(name string) (ErrorCode, bool) {
	for c := range numErrorCodes {
		if errorCodes[c].name == name {
			return c, true
		}
	}
	return ErrUnknown, false
}
