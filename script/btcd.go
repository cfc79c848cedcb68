package script

import (
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/wire"
)

// ErrEnginePanic wraps a panic recovered inside an engine. It is reported
// as an *Error with Core's "unknown error" code; a validator should treat
// it as an internal fault rather than proof that the block is invalid.
var ErrEnginePanic = errors.New("script: engine panic")

// BtcdEngine is the reference Engine, backed by btcd's txscript/v2.
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

// NewBtcdEngine returns the txscript-backed engine.
func NewBtcdEngine(opts ...BtcdOption) *BtcdEngine {
	e := &BtcdEngine{}
	for _, o := range opts {
		o(e)
	}
	return e
}

// Name implements Engine.
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

// Prepare implements Engine. It builds btcd's view of tx without copying
// scripts or witness data, and computes the BIP143/BIP341 midstates when
// the transaction has witness data (the only case that uses them).
func (e *BtcdEngine) Prepare(tx *wire.Tx, prevouts []wire.TxOut) (TxVerifier, error) {
	if tx == nil || len(prevouts) != len(tx.Inputs) {
		return nil, ErrPrevoutCount
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

// VerifyInput implements TxVerifier.
func (p *btcdTx) VerifyInput(i int, flags Flags) (err error) {
	if i < 0 || i >= len(p.msg.TxIn) {
		return newError(ErrUnknown, i, ErrInputIndex)
	}
	if !flags.Valid() {
		return newError(ErrUnknown, i, ErrBadFlags)
	}
	defer func() {
		if r := recover(); r != nil {
			err = newError(ErrUnknown, i, fmt.Errorf("%w: %v", ErrEnginePanic, r))
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
func isNopCLTVCSVDiscouraged(err error, flags Flags) bool {
	var te txscript.Error
	if flags&DiscourageUpgradableNops == 0 || !errors.As(err, &te) ||
		te.ErrorCode != txscript.ErrDiscourageUpgradableNOPs {
		return false
	}
	return (flags&CheckLockTimeVerify == 0 && strings.HasPrefix(te.Description, "OP_NOP2 ")) ||
		(flags&CheckSequenceVerify == 0 && strings.HasPrefix(te.Description, "OP_NOP3 "))
}

// isTaprootSpend reports whether an input spending pkScript is verified
// under BIP341 (a native v1 32-byte program with TAPROOT set), so that
// btcd's generic error codes can be mapped to Core's taproot-specific ones.
func isTaprootSpend(pkScript []byte, flags Flags) bool {
	v, prog, ok := IsWitnessProgram(pkScript)
	return ok && v == 1 && len(prog) == 32 && flags&Taproot != 0
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
func btcdFlags(f Flags) txscript.ScriptFlags {
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
func btcdErrorCode(err error, taproot bool) ErrorCode {
	var te txscript.Error
	if !errors.As(err, &te) {
		// Outside txscript.Error, a BIP341 spend fails only in btcec's
		// schnorr key or signature parsing. txscript drops the error of a
		// bad taproot sighash type inside its verifier and reports
		// ErrTaprootSigInvalid (TestTaprootBadHashTypeNames).
		if taproot {
			return ErrSchnorrSig
		}
		return ErrUnknown
	}
	switch te.ErrorCode {
	case txscript.ErrEarlyReturn:
		return ErrOpReturn
	case txscript.ErrEmptyStack, txscript.ErrEvalFalse:
		return ErrEvalFalse
	case txscript.ErrScriptTooBig:
		return ErrScriptSize
	case txscript.ErrElementTooBig:
		return ErrPushSize
	case txscript.ErrTooManyOperations:
		return ErrOpCount
	case txscript.ErrStackOverflow:
		return ErrStackSize
	case txscript.ErrInvalidPubKeyCount:
		return ErrPubKeyCount
	case txscript.ErrInvalidSignatureCount:
		return ErrSigCount
	case txscript.ErrVerify:
		return ErrVerify
	case txscript.ErrEqualVerify:
		return ErrEqualVerify
	case txscript.ErrNumEqualVerify:
		return ErrNumEqualVerify
	case txscript.ErrCheckSigVerify:
		return ErrCheckSigVerify
	case txscript.ErrCheckMultiSigVerify:
		return ErrCheckMultisigVerify
	case txscript.ErrDisabledOpcode:
		return ErrDisabledOpcode
	case txscript.ErrReservedOpcode, txscript.ErrMalformedPush:
		return ErrBadOpcode
	case txscript.ErrInvalidStackOperation:
		// btcd does not tell the altstack apart from the main stack.
		return ErrInvalidStackOperation
	case txscript.ErrUnbalancedConditional:
		return ErrUnbalancedConditional
	case txscript.ErrMinimalData:
		// btcd reports a non-minimal script number (Core: CScriptNum
		// throws scriptnum_error) with the minimal-push code.
		if strings.HasPrefix(te.Description, "numeric value") {
			return ErrScriptNum
		}
		return ErrMinimalData
	case txscript.ErrNumberTooBig:
		return ErrScriptNum
	case txscript.ErrInvalidSigHashType:
		if taproot {
			return ErrSchnorrSigHashType
		}
		return ErrSigHashType
	case txscript.ErrSigTooShort, txscript.ErrSigTooLong, txscript.ErrSigInvalidSeqID,
		txscript.ErrSigInvalidDataLen, txscript.ErrSigMissingSTypeID, txscript.ErrSigMissingSLen,
		txscript.ErrSigInvalidSLen, txscript.ErrSigInvalidRIntID, txscript.ErrSigZeroRLen,
		txscript.ErrSigNegativeR, txscript.ErrSigTooMuchRPadding, txscript.ErrSigInvalidSIntID,
		txscript.ErrSigZeroSLen, txscript.ErrSigNegativeS, txscript.ErrSigTooMuchSPadding:
		return ErrSigDER
	case txscript.ErrSigHighS:
		return ErrSigHighS
	case txscript.ErrNotPushOnly:
		return ErrSigPushOnly
	case txscript.ErrSigNullDummy:
		return ErrSigNullDummy
	case txscript.ErrPubKeyType:
		return ErrPubKeyType
	case txscript.ErrCleanStack:
		return ErrCleanStack
	case txscript.ErrNullFail:
		return ErrNullFail
	case txscript.ErrWitnessMalleated:
		return ErrWitnessMalleated
	case txscript.ErrWitnessMalleatedP2SH:
		return ErrWitnessMalleatedP2SH
	case txscript.ErrDiscourageUpgradableNOPs:
		return ErrDiscourageUpgradableNops
	case txscript.ErrNegativeLockTime:
		return ErrNegativeLocktime
	case txscript.ErrUnsatisfiedLockTime:
		return ErrUnsatisfiedLocktime
	case txscript.ErrMinimalIf:
		if taproot {
			return ErrTapscriptMinimalIf
		}
		return ErrMinimalIf
	case txscript.ErrDiscourageUpgradableWitnessProgram:
		return ErrDiscourageUpgradableWitnessProgram
	case txscript.ErrWitnessProgramEmpty:
		return ErrWitnessProgramWitnessEmpty
	case txscript.ErrWitnessProgramMismatch, txscript.ErrTaprootMerkleProofInvalid,
		txscript.ErrTaprootOutputKeyParityMismatch:
		return ErrWitnessProgramMismatch
	case txscript.ErrWitnessProgramWrongLength:
		return ErrWitnessProgramWrongLength
	case txscript.ErrWitnessUnexpected:
		return ErrWitnessUnexpected
	case txscript.ErrWitnessPubKeyType:
		return ErrWitnessPubKeyType
	case txscript.ErrDiscourageOpSuccess:
		return ErrDiscourageOpSuccess
	case txscript.ErrDiscourageUpgradeableTaprootVersion:
		return ErrDiscourageUpgradableTaprootVersion
	case txscript.ErrTapscriptCheckMultisig:
		return ErrTapscriptCheckMultisig
	case txscript.ErrDiscourageUpgradeablePubKeyType:
		return ErrDiscourageUpgradablePubKeyType
	case txscript.ErrTaprootSigInvalid:
		return ErrSchnorrSig
	case txscript.ErrControlBlockTooSmall, txscript.ErrControlBlockTooLarge,
		txscript.ErrControlBlockInvalidLength:
		return ErrTaprootWrongControlSize
	case txscript.ErrInvalidTaprootSigLen:
		return ErrSchnorrSigSize
	case txscript.ErrTaprootPubkeyIsEmpty:
		return ErrTapscriptEmptyPubKey
	case txscript.ErrTaprootMaxSigOps:
		return ErrTapscriptValidationWeight
	case txscript.ErrNonConstScriptCode:
		return ErrSigFindAndDelete
	case txscript.ErrCodeSeparator:
		return ErrOpCodeSeparator
	}
	// Internal or API-usage codes.
	return ErrUnknown
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
