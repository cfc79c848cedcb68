// Package blockgen builds valid (or deliberately invalid) blocks for tests
// and the chain generator: a coinbase with the BIP34 height and a BIP141
// witness commitment, transactions, the merkle root, proof of work ground
// against the header's nBits (trivial on regtest's 0x207fffff) and the
// serialization. Transactions are btcd's wire.MsgTx so that btcd's txscript
// can sign them (see Key).
//
// A Chain remembers every block it built, so blocks can be built on any of
// them (forks, reorgs) with the right height, time and median time past.
package blockgen

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"sort"

	"github.com/btcsuite/btcd/chainhash/v2"
	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/merkle"
	"utxod/params"
	"utxod/script"
	"utxod/wire"
)

// DefaultVersion is the header version Core's regtest miner uses (BIP9
// top bits, no signalling); it satisfies every BIP34/65/66 version rule.
const DefaultVersion = 0x20000000

// DefaultSpacing is the number of seconds between a block and its parent.
const DefaultSpacing = 600

// WitnessCommitmentHeader starts a BIP141 witness commitment output script:
// OP_RETURN, push 36, 0xaa21a9ed.
var WitnessCommitmentHeader = []byte{0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed}

// OpTrue is the anyone-can-spend output script OP_TRUE.
var OpTrue = []byte{0x51}

// HeightScript is `CScript() << height`, the push BIP34 requires at the
// start of the coinbase scriptSig (script.AppendPushInt64).
func HeightScript(height int64) []byte { return script.AppendPushInt64(nil, height) }

// ScriptNum is CScriptNum's minimal little-endian sign-magnitude encoding
// (script.AppendScriptNum).
func ScriptNum(n int64) []byte { return script.AppendScriptNum(nil, n) }

// CoinbaseScript is the BIP34 height push followed by extra (which may be
// nil). Core's miner appends OP_0 when the result would be shorter than
// the two bytes CheckTransaction requires; so does CoinbaseScript.
func CoinbaseScript(height int32, extra []byte) []byte {
	s := append(HeightScript(int64(height)), extra...)
	if len(s) < 2 {
		s = append(s, 0x00)
	}
	return s
}

// NewCoinbase returns a version-2 coinbase for height paying value to
// pkScript, with the null prevout, sequence 0xffffffff and locktime 0.
func NewCoinbase(height int32, value int64, pkScript []byte) *btcwire.MsgTx {
	tx := btcwire.NewMsgTx(2)
	tx.AddTxIn(&btcwire.TxIn{
		PreviousOutPoint: btcwire.OutPoint{Index: 0xffffffff},
		SignatureScript:  CoinbaseScript(height, nil),
		Sequence:         0xffffffff,
	})
	tx.AddTxOut(&btcwire.TxOut{Value: value, PkScript: bytes.Clone(pkScript)})
	return tx
}

// TxID returns tx's txid as a utxod hash.
func TxID(tx *btcwire.MsgTx) wire.Hash { return wire.Hash(tx.TxHash()) }

// WTxID returns tx's wtxid as a utxod hash.
func WTxID(tx *btcwire.MsgTx) wire.Hash { return wire.Hash(tx.WitnessHash()) }

// Outpoint is the btcd outpoint (txid, index) of tx's output i.
func Outpoint(tx *btcwire.MsgTx, i uint32) btcwire.OutPoint {
	return btcwire.OutPoint{Hash: tx.TxHash(), Index: i}
}

// MerkleRoot is the block merkle root of txs (Core's BlockMerkleRoot) and
// whether the tree is mutated (CVE-2012-2459).
func MerkleRoot(txs []*btcwire.MsgTx) (wire.Hash, bool) {
	leaves := make([]wire.Hash, len(txs))
	for i, tx := range txs {
		leaves[i] = TxID(tx)
	}
	return merkle.Root(leaves)
}

// WitnessRoot is Core's BlockWitnessMerkleRoot: the merkle root of the
// wtxids with the coinbase's taken as zero.
func WitnessRoot(txs []*btcwire.MsgTx) wire.Hash {
	leaves := make([]wire.Hash, len(txs))
	for i := 1; i < len(txs); i++ {
		leaves[i] = WTxID(txs[i])
	}
	root, _ := merkle.Root(leaves)
	return root
}

// CommitmentScript is the witness commitment output script for the given
// witness root and reserved value: SHA-256d(root ‖ reserved) after the
// 6-byte header.
func CommitmentScript(root wire.Hash, reserved []byte) []byte {
	h := sha256.New()
	h.Write(root[:])
	h.Write(reserved)
	first := h.Sum(nil)
	commit := sha256.Sum256(first)
	return append(bytes.Clone(WitnessCommitmentHeader), commit[:]...)
}

// HasWitness reports whether any transaction of txs carries witness data.
func HasWitness(txs []*btcwire.MsgTx) bool {
	for _, tx := range txs {
		if tx.HasWitness() {
			return true
		}
	}
	return false
}

// AddWitnessCommitment gives the coinbase of b the 32-byte zero witness
// reserved value and appends the commitment output for b's current
// transactions, replacing an existing commitment output. Call it after the
// last change to a non-coinbase transaction and before the merkle root.
func AddWitnessCommitment(b *btcwire.MsgBlock) {
	cb := b.Transactions[0]
	cb.TxIn[0].Witness = btcwire.TxWitness{make([]byte, 32)}
	outs := cb.TxOut[:0]
	for _, o := range cb.TxOut {
		if len(o.PkScript) >= 38 && bytes.HasPrefix(o.PkScript, WitnessCommitmentHeader) {
			continue
		}
		outs = append(outs, o)
	}
	cb.TxOut = outs
	script := CommitmentScript(WitnessRoot(b.Transactions), cb.TxIn[0].Witness[0])
	cb.AddTxOut(&btcwire.TxOut{Value: 0, PkScript: script})
}

// UpdateMerkleRoot sets b's header merkle root from its transactions.
func UpdateMerkleRoot(b *btcwire.MsgBlock) {
	root, _ := MerkleRoot(b.Transactions)
	b.Header.MerkleRoot = chainhash.Hash(root)
}

// Target expands a compact nBits (without Core's negative/overflow checks).
func Target(bits uint32) *big.Int {
	mant := big.NewInt(int64(bits & 0x007fffff))
	exp := uint(bits >> 24)
	if exp <= 3 {
		return mant.Rsh(mant, 8*(3-exp))
	}
	return mant.Lsh(mant, 8*(exp-3))
}

func hashToBig(h [32]byte) *big.Int {
	var r [32]byte
	for i := range h {
		r[i] = h[31-i]
	}
	return new(big.Int).SetBytes(r[:])
}

// ErrUnsolvable: no nonce gives a hash at or below the target.
var ErrUnsolvable = errors.New("blockgen: no nonce solves the header")

// Solve grinds h.Nonce from its current value until the header hash is at
// or below the target of h.Bits.
func Solve(h *btcwire.BlockHeader) error {
	target := Target(h.Bits)
	start := h.Nonce
	for {
		if hashToBig(h.BlockHash()).Cmp(target) <= 0 {
			return nil
		}
		h.Nonce++
		if h.Nonce == start {
			return ErrUnsolvable
		}
	}
}

// Unsolve grinds h.Nonce until the header hash is above the target of
// h.Bits (for high-hash tests).
func Unsolve(h *btcwire.BlockHeader) {
	target := Target(h.Bits)
	for hashToBig(h.BlockHash()).Cmp(target) <= 0 {
		h.Nonce++
	}
}

// Serialize returns b's serialization (with witness data).
func Serialize(b *btcwire.MsgBlock) []byte {
	var buf bytes.Buffer
	buf.Grow(b.SerializeSize())
	if err := b.Serialize(&buf); err != nil {
		panic(fmt.Sprintf("blockgen: serialize: %v", err))
	}
	return buf.Bytes()
}

// SerializeTx returns tx's serialization (with witness data if it has any).
func SerializeTx(tx *btcwire.MsgTx) []byte {
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		panic(fmt.Sprintf("blockgen: serialize tx: %v", err))
	}
	return buf.Bytes()
}

// BlockHash returns b's header hash as a utxod hash.
func BlockHash(b *btcwire.MsgBlock) wire.Hash { return wire.Hash(b.Header.BlockHash()) }

// Node is a block a Chain knows.
type Node struct {
	Hash   wire.Hash
	Parent *Node
	Height int32
	Block  *btcwire.MsgBlock // nil for genesis
	Raw    []byte
}

// Time is the node's header time.
func (n *Node) Time() uint32 { return uint32(n.Block.Header.Timestamp.Unix()) }

// MedianTimePast is the median of the last 11 block times up to n.
func (n *Node) MedianTimePast() int64 {
	var ts []int64
	for p := n; p != nil && len(ts) < 11; p = p.Parent {
		ts = append(ts, p.Block.Header.Timestamp.Unix())
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts[len(ts)/2]
}

// Chain tracks generated blocks.
type Chain struct {
	Params  *params.Params
	Genesis *Node
	// Spacing is the default time between a block and its parent (seconds).
	Spacing uint32
	// Version is the default header version.
	Version int32
	nodes   map[wire.Hash]*Node
}

// NewChain starts a chain at p's genesis block.
func NewChain(p *params.Params) (*Chain, error) {
	var g btcwire.MsgBlock
	if err := g.Deserialize(bytes.NewReader(p.GenesisBlock)); err != nil {
		return nil, fmt.Errorf("blockgen: genesis: %w", err)
	}
	n := &Node{Hash: BlockHash(&g), Block: &g, Raw: bytes.Clone(p.GenesisBlock)}
	if n.Hash != p.GenesisHash {
		return nil, fmt.Errorf("blockgen: genesis hash %s, params say %s", n.Hash, p.GenesisHash)
	}
	return &Chain{Params: p, Genesis: n, Spacing: DefaultSpacing, Version: DefaultVersion,
		nodes: map[wire.Hash]*Node{n.Hash: n}}, nil
}

// Node returns the block with hash h (nil if unknown).
func (c *Chain) Node(h wire.Hash) *Node { return c.nodes[h] }

// Template is a block under construction on Parent. Change Block freely,
// then call Finish.
type Template struct {
	Parent *Node
	Height int32
	Block  *btcwire.MsgBlock
	chain  *Chain
}

// Template starts a block on parent (nil: genesis): header version
// c.Version, time parent+c.Spacing (at least MTP+1), bits the proof-of-work
// limit, and a coinbase paying the subsidy to payTo (OP_TRUE if nil).
func (c *Chain) Template(parent *Node, payTo []byte) *Template {
	if parent == nil {
		parent = c.Genesis
	}
	if payTo == nil {
		payTo = OpTrue
	}
	height := parent.Height + 1
	t := int64(parent.Time()) + int64(c.Spacing)
	if mtp := parent.MedianTimePast(); t <= mtp {
		t = mtp + 1
	}
	var b btcwire.MsgBlock
	b.Header.Version = c.Version
	b.Header.PrevBlock = [32]byte(parent.Hash)
	b.Header.Bits = c.Params.PowLimitBits
	b.Header.Timestamp = unixTime(t)
	b.AddTransaction(NewCoinbase(height, c.Params.Subsidy(height), payTo))
	return &Template{Parent: parent, Height: height, Block: &b, chain: c}
}

// Coinbase is the template's coinbase transaction.
func (t *Template) Coinbase() *btcwire.MsgTx { return t.Block.Transactions[0] }

// AddTx appends transactions.
func (t *Template) AddTx(txs ...*btcwire.MsgTx) *Template {
	for _, tx := range txs {
		t.Block.AddTransaction(tx)
	}
	return t
}

// SetTime sets the header time (Unix seconds).
func (t *Template) SetTime(unix int64) *Template {
	t.Block.Header.Timestamp = unixTime(unix)
	return t
}

// Finish completes the block — witness commitment when a transaction has a
// witness, merkle root, proof of work — and records it in the chain.
func (t *Template) Finish() *Node {
	if HasWitness(t.Block.Transactions[1:]) {
		AddWitnessCommitment(t.Block)
	}
	UpdateMerkleRoot(t.Block)
	if err := Solve(&t.Block.Header); err != nil {
		panic(err)
	}
	return t.Record()
}

// Record records the block as it is (no commitment, merkle root or proof
// of work is computed): for blocks a test has finished by hand.
func (t *Template) Record() *Node {
	return t.chain.Add(t.Parent, t.Block)
}

// Add records b, a child of parent, and returns its node.
func (c *Chain) Add(parent *Node, b *btcwire.MsgBlock) *Node {
	n := &Node{Hash: BlockHash(b), Parent: parent, Height: parent.Height + 1, Block: b, Raw: Serialize(b)}
	c.nodes[n.Hash] = n
	return n
}
