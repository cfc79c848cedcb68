// Package btcdengine is the differential oracle of utxod's script engine:
// a script.Engine backed by btcd's txscript/v2. Tests and benchmarks run it
// beside the own interpreter (script's differential fuzz and Core-vector
// tests, chainstate's block tests); the service binary never links it.
package btcdengine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/script"
	"utxod/wire"
)

// newError builds a *script.Error for a Core ScriptError code.
func newError(code script.ErrorCode, input int, err error) *script.Error {
	return &script.Error{Code: code, Input: input, Err: err}
}

// BtcdEngine is the reference script.Engine, backed by btcd's txscript/v2.
type BtcdEngine struct {
	sigCache *txscript.SigCache
}

// BtcdOption configures a BtcdEngine.
type BtcdOption func(*BtcdEngine)

// WithSigCache shares a btcd signature cache of at most maxEntries valid
// signatures between all transactions the engine prepares. Zero disables it.
func WithSigCache(maxEntries uint) BtcdOption {
	return func(e *BtcdEngine) {
		if maxEntries > 0 {
			e.sigCache = txscript.NewSigCache(maxEntries)
		} else {
			e.sigCache = nil
		}
	}
}

// New returns the txscript-backed engine.
func New(opts ...BtcdOption) *BtcdEngine {
	e := &BtcdEngine{}
	for _, o := range opts {
		o(e)
	}
	return e
}

// Name implements script.Engine.
func (e *BtcdEngine) Name() string { return "txscript" }

// btcdTx is a prepared transaction: a btcd MsgTx whose scripts and witness
// items alias the caller's buffer, the prevouts, and the sighash midstates.
type btcdTx struct {
	eng      *BtcdEngine
	msg      btcwire.MsgTx
	prevouts []wire.TxOut
	fetch    prevoutFetcher
	hashes   *txscript.TxSigHashes
}

// Prepare implements script.Engine. It builds btcd's view of tx without copying
// scripts or witness data, and computes the BIP143/BIP341 midstates when
// the transaction has witness data (the only case that uses them).
func (e *BtcdEngine) Prepare(tx *wire.Tx, prevouts []wire.TxOut) (script.TxVerifier, error) {
	if tx == nil || len(prevouts) != len(tx.Inputs) {
		return nil, script.ErrPrevoutCount
	}
	p := &btcdTx{eng: e, prevouts: prevouts}
	p.msg.Version = tx.Version
	p.msg.LockTime = tx.LockTime
	ins := make([]btcwire.TxIn, len(tx.Inputs))
	p.msg.TxIn = make([]*btcwire.TxIn, len(tx.Inputs))
	for i := range tx.Inputs {
		in := &tx.Inputs[i]
		ins[i] = btcwire.TxIn{
			PreviousOutPoint: btcwire.OutPoint{Hash: chainhash.Hash(in.PrevHash), Index: in.PrevIndex},
			SignatureScript:  in.Script,
			Witness:          btcwire.TxWitness(in.Witness),
			Sequence:         in.Sequence,
		}
		p.msg.TxIn[i] = &ins[i]
	}
	outs := make([]btcwire.TxOut, len(tx.Outputs))
	p.msg.TxOut = make([]*btcwire.TxOut, len(tx.Outputs))
	for i := range tx.Outputs {
		outs[i] = btcwire.TxOut{Value: tx.Outputs[i].Value, PkScript: tx.Outputs[i].Script}
		p.msg.TxOut[i] = &outs[i]
	}
	p.fetch = newPrevoutFetcher(&p.msg, prevouts)
	if tx.HasWitness {
		p.hashes = txscript.NewTxSigHashes(&p.msg, p.fetch)
	}
	return p, nil
}

// VerifyInput implements script.TxVerifier.
func (p *btcdTx) VerifyInput(i int, flags script.Flags) (err error) {
	if i < 0 || i >= len(p.msg.TxIn) {
		return newError(script.ErrUnknown, i, script.ErrInputIndex)
	}
	if !flags.Valid() {
		return newError(script.ErrUnknown, i, script.ErrBadFlags)
	}
	defer func() {
		if r := recover(); r != nil {
			err = newError(script.ErrUnknown, i, fmt.Errorf("%w: %v", script.ErrEnginePanic, r))
		}
	}()
	prev := &p.prevouts[i]
	bf := btcdFlags(flags)
	err = p.run(i, bf)
	if err != nil && isNopCLTVCSVDiscouraged(err, flags) {
		// Core (since 0.15, PR #10699) runs OP_NOP2/OP_NOP3 as plain NOPs
		// when CHECKLOCKTIMEVERIFY/CHECKSEQUENCEVERIFY is off, even under
		// DISCOURAGE_UPGRADABLE_NOPS; btcd still discourages them. Re-run
		// without the (policy-only) discouragement. Residual difference:
		// a real NOP1/NOP4-10 executed later in the same script then goes
		// unreported. Block validation never sets the flag.
		err = p.run(i, bf&^txscript.ScriptDiscourageUpgradableNops)
	}
	if err != nil {
		return newError(btcdErrorCode(err, isTaprootSpend(prev.Script, flags)), i, err)
	}
	return nil
}

// run executes input i under btcd flags bf.
func (p *btcdTx) run(i int, bf txscript.ScriptFlags) error {
	prev := &p.prevouts[i]
	vm, err := txscript.NewEngine(prev.Script, &p.msg, i, bf, p.eng.sigCache, p.hashes, prev.Value, p.fetch)
	if err != nil {
		return err
	}
	return vm.Execute()
}

// isNopCLTVCSVDiscouraged reports a btcd discouraged-NOP error raised by
// OP_NOP2 with CHECKLOCKTIMEVERIFY off or OP_NOP3 with CHECKSEQUENCEVERIFY
// off, which Core does not raise.
func isNopCLTVCSVDiscouraged(err error, flags script.Flags) bool {
	var te txscript.Error
	if flags&script.DiscourageUpgradableNops == 0 || !errors.As(err, &te) ||
		te.ErrorCode != txscript.ErrDiscourageUpgradableNOPs {
		return false
	}
	return (flags&script.CheckLockTimeVerify == 0 && strings.HasPrefix(te.Description, "OP_NOP2 ")) ||
		(flags&script.CheckSequenceVerify == 0 && strings.HasPrefix(te.Description, "OP_NOP3 "))
}

// isTaprootSpend reports whether an input spending pkScript is verified
// under BIP341 (a native v1 32-byte program with TAPROOT set), so that
// btcd's generic error codes can be mapped to Core's taproot-specific ones.
func isTaprootSpend(pkScript []byte, flags script.Flags) bool {
	v, prog, ok := script.IsWitnessProgram(pkScript)
	return ok && v == 1 && len(prog) == 32 && flags&script.Taproot != 0
}

// btcdFlagMap is btcd's flag for each Core flag bit.
var btcdFlagMap = [...]txscript.ScriptFlags{
	txscript.ScriptBip16,
	txscript.ScriptVerifyStrictEncoding,
	txscript.ScriptVerifyDERSignatures,
	txscript.ScriptVerifyLowS,
	txscript.ScriptStrictMultiSig,
	txscript.ScriptVerifySigPushOnly,
	txscript.ScriptVerifyMinimalData,
	txscript.ScriptDiscourageUpgradableNops,
	txscript.ScriptVerifyCleanStack,
	txscript.ScriptVerifyCheckLockTimeVerify,
	txscript.ScriptVerifyCheckSequenceVerify,
	txscript.ScriptVerifyWitness,
	txscript.ScriptVerifyDiscourageUpgradeableWitnessProgram,
	txscript.ScriptVerifyMinimalIf,
	txscript.ScriptVerifyNullFail,
	txscript.ScriptVerifyWitnessPubKeyType,
	txscript.ScriptVerifyConstScriptCode,
	txscript.ScriptVerifyTaproot,
	txscript.ScriptVerifyDiscourageUpgradeableTaprootVersion,
	txscript.ScriptVerifyDiscourageOpSuccess,
	txscript.ScriptVerifyDiscourageUpgradeablePubkeyType,
}

// btcdFlags translates Core flags to btcd's; unknown bits are ignored.
func btcdFlags(f script.Flags) txscript.ScriptFlags {
	var out txscript.ScriptFlags
	for bit := range btcdFlagMap {
		if f&(1<<bit) != 0 {
			out |= btcdFlagMap[bit]
		}
	}
	return out
}

// btcdErrorCode maps a btcd error to Core's ScriptError code. btcd reports
// some conditions with generic codes or plain errors; taproot tells the
// mapping that the input is a BIP341 spend, where Core uses the SCHNORR_* and
// TAPSCRIPT_* codes. The mapping decides only the reported text, never
// whether the input passes.
func btcdErrorCode(err error, taproot bool) script.ErrorCode {
	var te txscript.Error
	if !errors.As(err, &te) {
		// Outside txscript.Error, a BIP341 spend fails only in btcec's
		// schnorr key or signature parsing. txscript drops the error of a
		// bad taproot sighash type inside its verifier and reports
		// script.ErrTaprootSigInvalid (TestTaprootBadHashTypeNames).
		if taproot {
			return script.ErrSchnorrSig
		}
		return script.ErrUnknown
	}
	switch te.ErrorCode {
	case txscript.ErrEarlyReturn:
		return script.ErrOpReturn
	case txscript.ErrEmptyStack, txscript.ErrEvalFalse:
		return script.ErrEvalFalse
	case txscript.ErrScriptTooBig:
		return script.ErrScriptSize
	case txscript.ErrElementTooBig:
		return script.ErrPushSize
	case txscript.ErrTooManyOperations:
		return script.ErrOpCount
	case txscript.ErrStackOverflow:
		return script.ErrStackSize
	case txscript.ErrInvalidPubKeyCount:
		return script.ErrPubKeyCount
	case txscript.ErrInvalidSignatureCount:
		return script.ErrSigCount
	case txscript.ErrVerify:
		return script.ErrVerify
	case txscript.ErrEqualVerify:
		return script.ErrEqualVerify
	case txscript.ErrNumEqualVerify:
		return script.ErrNumEqualVerify
	case txscript.ErrCheckSigVerify:
		return script.ErrCheckSigVerify
	case txscript.ErrCheckMultiSigVerify:
		return script.ErrCheckMultisigVerify
	case txscript.ErrDisabledOpcode:
		return script.ErrDisabledOpcode
	case txscript.ErrReservedOpcode, txscript.ErrMalformedPush:
		return script.ErrBadOpcode
	case txscript.ErrInvalidStackOperation:
		// btcd does not tell the altstack apart from the main stack.
		return script.ErrInvalidStackOperation
	case txscript.ErrUnbalancedConditional:
		return script.ErrUnbalancedConditional
	case txscript.ErrMinimalData:
		// btcd reports a non-minimal script number (Core: CScriptNum
		// throws scriptnum_error) with the minimal-push code.
		if strings.HasPrefix(te.Description, "numeric value") {
			return script.ErrScriptNum
		}
		return script.ErrMinimalData
	case txscript.ErrNumberTooBig:
		return script.ErrScriptNum
	case txscript.ErrInvalidSigHashType:
		if taproot {
			return script.ErrSchnorrSigHashType
		}
		return script.ErrSigHashType
	case txscript.ErrSigTooShort, txscript.ErrSigTooLong, txscript.ErrSigInvalidSeqID,
		txscript.ErrSigInvalidDataLen, txscript.ErrSigMissingSTypeID, txscript.ErrSigMissingSLen,
		txscript.ErrSigInvalidSLen, txscript.ErrSigInvalidRIntID, txscript.ErrSigZeroRLen,
		txscript.ErrSigNegativeR, txscript.ErrSigTooMuchRPadding, txscript.ErrSigInvalidSIntID,
		txscript.ErrSigZeroSLen, txscript.ErrSigNegativeS, txscript.ErrSigTooMuchSPadding:
		return script.ErrSigDER
	case txscript.ErrSigHighS:
		return script.ErrSigHighS
	case txscript.ErrNotPushOnly:
		return script.ErrSigPushOnly
	case txscript.ErrSigNullDummy:
		return script.ErrSigNullDummy
	case txscript.ErrPubKeyType:
		return script.ErrPubKeyType
	case txscript.ErrCleanStack:
		return script.ErrCleanStack
	case txscript.ErrNullFail:
		return script.ErrNullFail
	case txscript.ErrWitnessMalleated:
		return script.ErrWitnessMalleated
	case txscript.ErrWitnessMalleatedP2SH:
		return script.ErrWitnessMalleatedP2SH
	case txscript.ErrDiscourageUpgradableNOPs:
		return script.ErrDiscourageUpgradableNops
	case txscript.ErrNegativeLockTime:
		return script.ErrNegativeLocktime
	case txscript.ErrUnsatisfiedLockTime:
		return script.ErrUnsatisfiedLocktime
	case txscript.ErrMinimalIf:
		if taproot {
			return script.ErrTapscriptMinimalIf
		}
		return script.ErrMinimalIf
	case txscript.ErrDiscourageUpgradableWitnessProgram:
		return script.ErrDiscourageUpgradableWitnessProgram
	case txscript.ErrWitnessProgramEmpty:
		return script.ErrWitnessProgramWitnessEmpty
	case txscript.ErrWitnessProgramMismatch, txscript.ErrTaprootMerkleProofInvalid,
		txscript.ErrTaprootOutputKeyParityMismatch:
		return script.ErrWitnessProgramMismatch
	case txscript.ErrWitnessProgramWrongLength:
		return script.ErrWitnessProgramWrongLength
	case txscript.ErrWitnessUnexpected:
		return script.ErrWitnessUnexpected
	case txscript.ErrWitnessPubKeyType:
		return script.ErrWitnessPubKeyType
	case txscript.ErrDiscourageOpSuccess:
		return script.ErrDiscourageOpSuccess
	case txscript.ErrDiscourageUpgradeableTaprootVersion:
		return script.ErrDiscourageUpgradableTaprootVersion
	case txscript.ErrTapscriptCheckMultisig:
		return script.ErrTapscriptCheckMultisig
	case txscript.ErrDiscourageUpgradeablePubKeyType:
		return script.ErrDiscourageUpgradablePubKeyType
	case txscript.ErrTaprootSigInvalid:
		return script.ErrSchnorrSig
	case txscript.ErrControlBlockTooSmall, txscript.ErrControlBlockTooLarge,
		txscript.ErrControlBlockInvalidLength:
		return script.ErrTaprootWrongControlSize
	case txscript.ErrInvalidTaprootSigLen:
		return script.ErrSchnorrSigSize
	case txscript.ErrTaprootPubkeyIsEmpty:
		return script.ErrTapscriptEmptyPubKey
	case txscript.ErrTaprootMaxSigOps:
		return script.ErrTapscriptValidationWeight
	case txscript.ErrNonConstScriptCode:
		return script.ErrSigFindAndDelete
	case txscript.ErrCodeSeparator:
		return script.ErrOpCodeSeparator
	}
	// Internal or API-usage codes.
	return script.ErrUnknown
}

// prevoutFetcher implements txscript.PrevOutputFetcher over the prevouts
// slice: outpoints are looked up among the transaction's own inputs, by a
// linear scan for small transactions and a map otherwise.
type prevoutFetcher struct {
	msg   *btcwire.MsgTx
	outs  []btcwire.TxOut
	index map[btcwire.OutPoint]int
}

const fetcherMapThreshold = 16

func newPrevoutFetcher(msg *btcwire.MsgTx, prevouts []wire.TxOut) prevoutFetcher {
	f := prevoutFetcher{msg: msg, outs: make([]btcwire.TxOut, len(prevouts))}
	for i := range prevouts {
		f.outs[i] = btcwire.TxOut{Value: prevouts[i].Value, PkScript: prevouts[i].Script}
	}
	if len(msg.TxIn) > fetcherMapThreshold {
		f.index = make(map[btcwire.OutPoint]int, len(msg.TxIn))
		for i := len(msg.TxIn) - 1; i >= 0; i-- {
			f.index[msg.TxIn[i].PreviousOutPoint] = i // first occurrence wins
		}
	}
	return f
}

// FetchPrevOutput implements txscript.PrevOutputFetcher.
func (f prevoutFetcher) FetchPrevOutput(op btcwire.OutPoint) *btcwire.TxOut {
	if f.index != nil {
		if i, ok := f.index[op]; ok {
			return &f.outs[i]
		}
		return nil
	}
	for i, in := range f.msg.TxIn {
		if in.PreviousOutPoint == op {
			return &f.outs[i]
		}
	}
	return nil
}
