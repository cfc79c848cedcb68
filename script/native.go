package script

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"sync"

	"utxod/wire"
)

// ErrEnginePanic wraps a panic recovered inside an engine. It is reported
// as an *Error with Core's "unknown error" code; a validator should treat
// it as an internal fault rather than proof that the block is invalid.
var ErrEnginePanic = errors.New("script: engine panic")

// NativeEngine is the package's own Engine: a port of Bitcoin Core's
// interpreter (src/script/interpreter.cpp: VerifyScript, EvalScript,
// VerifyWitnessProgram, ExecuteWitnessScript, the three signature hashes)
// with a pluggable SigVerifier and a shared signature cache.
//
// Per-transaction work (the BIP143 and BIP341 midstates) is done once per
// Prepare, lazily, on first use. Script execution runs on a pooled
// per-goroutine arena: stack items alias the script, witness and arena
// bytes, so the P2PKH, P2WPKH and P2TR key-path paths do not allocate.
type NativeEngine struct {
	verifier SigVerifier
	cache    *SigCache
	cacheSet bool
	// noStore: look signatures up but never insert (WithSigCacheStore).
	noStore bool
}

// Option configures a NativeEngine.
type Option func(*NativeEngine)

// WithSigVerifier selects the elliptic-curve back end (default:
// DefaultSigVerifier()).
func WithSigVerifier(v SigVerifier) Option {
	return func(e *NativeEngine) {
		if v != nil {
			e.verifier = v
		}
	}
}

// WithSignatureCache shares c between engines; nil disables caching. The
// default is a private cache of DefaultSigCacheEntries.
func WithSignatureCache(c *SigCache) Option {
	return func(e *NativeEngine) { e.cache, e.cacheSet = c, true }
}

// WithSigCacheEntries gives the engine its own cache of n entries (0
// disables caching).
func WithSigCacheEntries(n int) Option {
	return func(e *NativeEngine) {
		e.cacheSet = true
		if n <= 0 {
			e.cache = nil
		} else {
			e.cache = NewSigCache(n)
		}
	}
}

// WithSigCacheStore(false) makes the engine look valid signatures up in its
// cache without ever inserting them, as Core's ConnectBlock does
// (CachingTransactionSignatureChecker with store = fCacheResults =
// fJustCheck, validation.cpp): an import meets each signature once, so
// inserting only costs. While the cache holds no entry at all, the lookup
// itself (a key hash and a random read of the table) is skipped. The
// default is true.
func WithSigCacheStore(store bool) Option {
	return func(e *NativeEngine) { e.noStore = !store }
}

// defaultCache is created on first use by an engine without an explicit
// cache choice and shared by all of them, so that every engine in the
// process remembers the same signatures (a block verified through one
// engine is not re-verified through another).
var (
	defaultCacheOnce sync.Once
	defaultCache     *SigCache
)

// NewEngine returns the native engine ("utxod"). Without options it uses
// DefaultSigVerifier() and the process-wide signature cache
// (DefaultSigCacheEntries entries, created on first use).
func NewEngine(opts ...Option) *NativeEngine {
	e := &NativeEngine{verifier: DefaultSigVerifier(), cache: nil}
	e.cacheSet = false
	for _, o := range opts {
		o(e)
	}
	if !e.cacheSet {
		defaultCacheOnce.Do(func() { defaultCache = NewSigCache(DefaultSigCacheEntries) })
		e.cache = defaultCache
	}
	return e
}

// Name implements Engine.
func (e *NativeEngine) Name() string { return "utxod" }

// Verifier returns the engine's SigVerifier.
func (e *NativeEngine) Verifier() SigVerifier { return e.verifier }

// Cache returns the engine's signature cache (nil when disabled).
func (e *NativeEngine) Cache() *SigCache { return e.cache }

// nativeTx is a prepared transaction with its lazily computed midstates
// (Core's PrecomputedTransactionData).
type nativeTx struct {
	eng      *NativeEngine
	tx       *wire.Tx
	prevouts []wire.TxOut

	onceShared sync.Once
	// single SHA-256 (BIP341) and double (BIP143) of the prevouts,
	// sequences and outputs.
	shaPrevouts, shaSequences, shaOutputs   [32]byte
	hashPrevouts, hashSequence, hashOutputs [32]byte
	onceTaproot                             sync.Once
	shaAmounts, shaScriptPubKeys            [32]byte
}

// Prepare implements Engine. It copies nothing: the midstates are
// computed on first use.
func (e *NativeEngine) Prepare(tx *wire.Tx, prevouts []wire.TxOut) (TxVerifier, error) {
	if tx == nil || len(prevouts) != len(tx.Inputs) {
		return nil, ErrPrevoutCount
	}
	return &nativeTx{eng: e, tx: tx, prevouts: prevouts}, nil
}

var zero32 [32]byte

func (p *nativeTx) initShared() {
	p.onceShared.Do(func() {
		h := sha256.New()
		var b [17]byte
		for i := range p.tx.Inputs {
			in := &p.tx.Inputs[i]
			h.Write(in.PrevHash[:])
			binary.LittleEndian.PutUint32(b[:4], in.PrevIndex)
			h.Write(b[:4])
		}
		h.Sum(p.shaPrevouts[:0])
		h.Reset()
		for i := range p.tx.Inputs {
			binary.LittleEndian.PutUint32(b[:4], p.tx.Inputs[i].Sequence)
			h.Write(b[:4])
		}
		h.Sum(p.shaSequences[:0])
		h.Reset()
		for i := range p.tx.Outputs {
			writeTxOut(h, b[:], &p.tx.Outputs[i])
		}
		h.Sum(p.shaOutputs[:0])
		p.hashPrevouts = sha256.Sum256(p.shaPrevouts[:])
		p.hashSequence = sha256.Sum256(p.shaSequences[:])
		p.hashOutputs = sha256.Sum256(p.shaOutputs[:])
	})
}

func (p *nativeTx) initTaproot() {
	p.onceTaproot.Do(func() {
		h := sha256.New()
		var b [17]byte
		for i := range p.prevouts {
			binary.LittleEndian.PutUint64(b[:8], uint64(p.prevouts[i].Value))
			h.Write(b[:8])
		}
		h.Sum(p.shaAmounts[:0])
		h.Reset()
		for i := range p.prevouts {
			s := p.prevouts[i].Script
			h.Write(wire.AppendCompactSize(b[:0], uint64(len(s))))
			h.Write(s)
		}
		h.Sum(p.shaScriptPubKeys[:0])
	})
}

// writeTxOut writes a CTxOut's serialization (appendTxOut) to h; b is
// scratch with room for 17 bytes.
func writeTxOut(h hash.Hash, b []byte, o *wire.TxOut) {
	h.Write(appendTxOutHead(b[:0], o))
	h.Write(o.Script)
}

// VerifyInput implements TxVerifier.
func (p *nativeTx) VerifyInput(i int, flags Flags) (err error) {
	if i < 0 || i >= len(p.tx.Inputs) {
		return newError(ErrUnknown, i, ErrInputIndex)
	}
	if !flags.Valid() {
		return newError(ErrUnknown, i, ErrBadFlags)
	}
	m := vmPool.Get().(*vm)
	defer func() {
		if r := recover(); r != nil {
			err = newError(ErrUnknown, i, fmt.Errorf("%w: %v", ErrEnginePanic, r))
		}
		m.release()
		vmPool.Put(m)
	}()
	m.p, m.idx, m.flags = p, i, flags
	in := &p.tx.Inputs[i]
	if code := m.verifyScript(in.Script, p.prevouts[i].Script, in.Witness); code != ErrOK {
		return newError(code, i, nil)
	}
	return nil
}

// StoresSignatures reports whether verified signatures go into the cache
// (false with WithSigCacheStore(false) or without a cache).
func (e *NativeEngine) StoresSignatures() bool { return e.cache != nil && !e.noStore }
