package mainnetgen

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/params"
	"utxod/testkit/blockgen"
	"utxod/wire"
)

// BlockConfig says which blocks to build on the snapshot's base block:
// first Old blocks spending random old coins of the snapshot (uniform over
// the txid space, so a node's reads are random), then Recent blocks
// spending mostly the outputs of the blocks before them (a tenth of their
// inputs are old coins). Every transaction spends InputsPerTx coins into
// two outputs paying pool keys.
type BlockConfig struct {
	Old    int
	Recent int
	// Txs is the number of transactions per block besides the coinbase
	// (default DefaultBlockTxs). A set with too few spendable coins for
	// every block gets fewer.
	Txs int
	// badSig (tests) is the 1-based number of a block whose first
	// transaction carries a corrupted signature.
	badSig int
}

// Block defaults: the blocks of 2,000 transactions and 4,000 inputs.
const (
	DefaultOldBlocks    = 20
	DefaultRecentBlocks = 20
	DefaultBlockTxs     = 2000
	InputsPerTx         = 2
	// RecentOldPerMille of a recent block's inputs are old coins.
	RecentOldPerMille = 100
	// BlockSpacing is the seconds between a generated block and its parent.
	BlockSpacing = 600
)

func (c BlockConfig) total() int { return c.Old + c.Recent }

// BlocksExpect is expect.json's "blocks": DIR/blocks.dat and the set
// after its last block, from the generator's own computation.
type BlocksExpect struct {
	File        File        `json:"file"` // count: blocks
	Format      string      `json:"format"`
	TxsPerBlock int         `json:"txs_per_block"`
	List        []BlockInfo `json:"list"`
	TipHash     string      `json:"tip_hash"`
	TipHeight   int32       `json:"tip_height"`
	// After is gettxoutsetinfo of the set once every block is connected.
	After   Digests `json:"after"`
	Seconds float64 `json:"seconds"`
}

// BlockInfo is one block of blocks.dat.
type BlockInfo struct {
	Height    int32  `json:"height"`
	Hash      string `json:"hash"`
	Kind      string `json:"kind"` // old or recent
	Txs       int    `json:"txs"`  // with the coinbase
	Inputs    int    `json:"inputs"`
	OldInputs int    `json:"old_inputs"` // inputs spending snapshot coins
	Offset    int64  `json:"offset"`     // of the block in blocks.dat (after magic and length)
	Bytes     int    `json:"bytes"`
}

// spendRec is a coin paying a pool key: 57 bytes in the side file.
type spendRec struct {
	txid  [32]byte
	vout  uint32
	code  uint32 // height << 1 | coinbase
	value uint64
	key   uint32
	typ   ScriptType
}

const spendRecSize = 32 + 4 + 4 + 8 + 4 + 1

func (r *spendRec) append(b []byte) []byte {
	b = append(b, r.txid[:]...)
	b = binary.LittleEndian.AppendUint32(b, r.vout)
	b = binary.LittleEndian.AppendUint32(b, r.code)
	b = binary.LittleEndian.AppendUint64(b, r.value)
	b = binary.LittleEndian.AppendUint32(b, r.key)
	return append(b, byte(r.typ))
}

func (r *spendRec) parse(b []byte) {
	copy(r.txid[:], b)
	r.vout = binary.LittleEndian.Uint32(b[32:])
	r.code = binary.LittleEndian.Uint32(b[36:])
	r.value = binary.LittleEndian.Uint64(b[40:])
	r.key = binary.LittleEndian.Uint32(b[48:])
	r.typ = ScriptType(b[52])
}

// newCoin is an output of a generated block still unspent.
type newCoin struct {
	txid   [32]byte
	vout   uint32
	code   uint32
	value  uint64
	script []byte
}

type outpoint struct {
	txid [32]byte
	vout uint32
}

// blockSet builds the blocks of one generated set.
type blockSet struct {
	cfg       Config
	p         *params.Params
	pool      *keyPool
	base      wire.Hash
	baseMu    *MuHash
	spendable uint64
	sidePath  string

	r      *rng
	old    []spendRec            // the snapshot coins to spend, in spending order
	recent []spendRec            // spendable outputs of the generated blocks, newest last
	added  map[outpoint]*newCoin // outputs of the generated blocks still unspent
	spent  map[outpoint]struct{} // snapshot coins spent
	ser    []byte
	signer map[uint32]*signKey
}

// signKey is a pool key ready to sign: its secret, its compressed public
// key and its BIP86-tweaked secret (each a point multiplication saved per
// signature).
type signKey struct {
	priv, tweaked *btcec.PrivateKey
	pub           []byte
}

// txsPerBlock is the transactions per block the spendable coins allow, and
// the old coins the blocks spend.
func (bs *blockSet) txsPerBlock() (txs int, need uint64) {
	c := bs.cfg.Blocks
	txs = c.Txs
	if txs <= 0 {
		txs = DefaultBlockTxs
	}
	needFor := func(txs int) uint64 {
		in := uint64(txs * InputsPerTx)
		n := uint64(c.Old)*in + uint64(c.Recent)*(in*RecentOldPerMille/1000)
		if c.Old == 0 && c.Recent > 0 {
			n += in // the first recent block has no recent coins
		}
		return n
	}
	for txs > 1 && needFor(txs) > bs.spendable {
		txs = max(1, txs*int(bs.spendable)/int(needFor(txs)))
		if needFor(txs) > bs.spendable {
			txs--
		}
	}
	return txs, min(needFor(txs), bs.spendable)
}

// pickOld reads the side file and keeps need of its coins, each subset of
// that size equally likely (selection sampling), in random order.
func (bs *blockSet) pickOld(need uint64) error {
	f, err := os.Open(bs.sidePath)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var buf [spendRecSize]byte
	bs.old = make([]spendRec, 0, need)
	left := bs.spendable
	for ; left > 0 && uint64(len(bs.old)) < need; left-- {
		if _, err := io.ReadFull(br, buf[:]); err != nil {
			return fmt.Errorf("mainnetgen: spendable coins: %w", err)
		}
		if bs.r.below(left) < need-uint64(len(bs.old)) {
			var rec spendRec
			rec.parse(buf[:])
			bs.old = append(bs.old, rec)
		}
	}
	for i := len(bs.old) - 1; i > 0; i-- {
		j := bs.r.below(uint64(i + 1))
		bs.old[i], bs.old[j] = bs.old[j], bs.old[i]
	}
	return nil
}

// build writes DIR/blocks.dat and returns what expect.json says of it.
func (bs *blockSet) build(dir string) (*BlocksExpect, error) {
	start := time.Now()
	bs.r = newRNG(bs.cfg.Seed, 4)
	txs, need := bs.txsPerBlock()
	if need == 0 {
		return nil, errors.New("mainnetgen: the set has no spendable coin for the blocks: ask for none (--old-blocks 0 --recent-blocks 0)")
	}
	if err := bs.pickOld(need); err != nil {
		return nil, err
	}
	bs.added = make(map[outpoint]*newCoin)
	bs.signer = make(map[uint32]*signKey)
	bs.spent = make(map[outpoint]struct{}, len(bs.old))
	be := &BlocksExpect{TxsPerBlock: txs,
		Format: "Core's block files: per block the network magic, its length (LE32) and the block"}

	f, err := os.Create(filepath.Join(dir, BlocksFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fh := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, fh)}
	w := bufio.NewWriterSize(cw, 1<<20)
	prev := bs.base
	t, err := baseTime(bs.p, bs.cfg.Height)
	if err != nil {
		return nil, err
	}
	for i := range bs.cfg.Blocks.total() {
		height := bs.cfg.Height + int32(i) + 1
		kind := "old"
		if i >= bs.cfg.Blocks.Old {
			kind = "recent"
		}
		t += BlockSpacing
		b, info, err := bs.block(prev, height, t, kind, txs, i+1 == bs.cfg.Blocks.badSig)
		if err != nil {
			return nil, err
		}
		raw := blockgen.Serialize(b)
		var frame [8]byte
		copy(frame[:4], bs.p.Magic[:])
		binary.LittleEndian.PutUint32(frame[4:], uint32(len(raw)))
		w.Write(frame[:])
		info.Offset, info.Bytes = cw.n+int64(w.Buffered()), len(raw)
		if _, err := w.Write(raw); err != nil {
			return nil, err
		}
		prev = blockgen.BlockHash(b)
		info.Hash = prev.String()
		be.List = append(be.List, info)
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	be.File = File{Name: BlocksFile, Bytes: cw.n, SHA256: hex.EncodeToString(fh.Sum(nil)), Count: uint64(len(be.List))}
	be.TipHash, be.TipHeight = prev.String(), bs.cfg.Height+int32(len(be.List))
	if be.After, err = bs.after(); err != nil {
		return nil, err
	}
	be.Seconds = time.Since(start).Seconds()
	return be, nil
}

// baseTime is the base header's time (writeHeaders' schedule).
func baseTime(p *params.Params, height int32) (int64, error) {
	genesis, err := wire.ParseHeader(p.GenesisBlock)
	if err != nil {
		return 0, err
	}
	step := max(1, (HeadersEndTime-int64(genesis.Time))/int64(height))
	return int64(genesis.Time) + int64(height)*step, nil
}

// input is a coin a transaction spends.
type input struct {
	rec spendRec
	old bool
}

// block builds, signs and solves one block and applies it to the set.
func (bs *blockSet) block(prev wire.Hash, height int32, t int64, kind string, txs int, badSig bool) (*btcwire.MsgBlock, BlockInfo, error) {
	info := BlockInfo{Height: height, Kind: kind}
	all := bs.pickInputs(kind, txs, &info)
	if len(all) == 0 {
		return nil, info, fmt.Errorf("mainnetgen: block %d: no coin left to spend (%d spendable in the set): ask for fewer blocks", height, bs.spendable)
	}
	b, outs, err := bs.assemble(prev, height, t, all, badSig)
	if err != nil {
		return nil, info, err
	}
	info.Txs = len(b.Transactions)
	bs.apply(b, height, all, outs)
	return b, info, nil
}

// pickInputs takes the coins of txs transactions: old coins for an old
// block; for a recent one the newest outputs of the blocks before, a
// RecentOldPerMille share old coins.
func (bs *blockSet) pickInputs(kind string, txs int, info *BlockInfo) [][]input {
	var all [][]input
	for range txs {
		var ins []input
		for range InputsPerTx {
			old := kind == "old" || len(bs.recent) == 0 || bs.r.below(1000) < RecentOldPerMille
			if old && len(bs.old) == 0 {
				old = false
			}
			if !old && len(bs.recent) == 0 {
				break
			}
			var in input
			if old {
				in = input{rec: bs.old[len(bs.old)-1], old: true}
				bs.old = bs.old[:len(bs.old)-1]
				info.OldInputs++
			} else {
				in = input{rec: bs.recent[len(bs.recent)-1]}
				bs.recent = bs.recent[:len(bs.recent)-1]
			}
			ins = append(ins, in)
		}
		if len(ins) == 0 {
			break
		}
		info.Inputs += len(ins)
		all = append(all, ins)
	}
	return all
}

// assemble builds the block spending all: per transaction two outputs
// paying pool keys and a fee of a thousandth of its inputs, signed; a
// coinbase paying the subsidy and the fees; the witness commitment, the
// merkle root and the proof of work. outs[j] are transaction j+1's outputs.
func (bs *blockSet) assemble(prev wire.Hash, height int32, t int64, all [][]input, badSig bool) (*btcwire.MsgBlock, [][2]spendRec, error) {
	var fees uint64
	body := make([]*btcwire.MsgTx, len(all))
	outs := make([][2]spendRec, len(all))
	for j, ins := range all {
		tx := btcwire.NewMsgTx(2)
		var sum uint64
		for _, in := range ins {
			tx.AddTxIn(&btcwire.TxIn{PreviousOutPoint: btcwire.OutPoint{Hash: chainhash.Hash(in.rec.txid), Index: in.rec.vout}, Sequence: 0xffffffff})
			sum += in.rec.value
		}
		fee := sum / 1000
		fees += fee
		v := [2]uint64{(sum - fee) / 2, sum - fee - (sum-fee)/2}
		for k := range 2 {
			o := spendRec{code: uint32(height) << 1, value: v[k], key: uint32(bs.r.below(uint64(len(bs.pool.keys)))), typ: bs.outType()}
			tx.AddTxOut(&btcwire.TxOut{Value: int64(o.value), PkScript: bs.pool.appendScript(nil, o.typ, o.key)})
			outs[j][k] = o
		}
		body[j] = tx
	}
	for _, ins := range all {
		for _, in := range ins {
			if bs.signer[in.rec.key] == nil {
				priv := bs.pool.secret(in.rec.key)
				bs.signer[in.rec.key] = &signKey{priv: priv, tweaked: txscript.TweakTaprootPrivKey(*priv, nil), pub: priv.PubKey().SerializeCompressed()}
			}
		}
	}
	if err := bs.signAll(body, all); err != nil {
		return nil, nil, err
	}
	if badSig {
		corrupt(body[0])
	}
	cbKey := uint32(bs.r.below(uint64(len(bs.pool.keys))))
	cb := blockgen.NewCoinbase(height, bs.p.Subsidy(height)+int64(fees), bs.pool.appendScript(nil, P2WPKH, cbKey))
	var b btcwire.MsgBlock
	b.Header = btcwire.BlockHeader{Version: HeaderVersion, PrevBlock: chainhash.Hash(prev), Timestamp: time.Unix(t, 0), Bits: bs.p.PowLimitBits}
	b.AddTransaction(cb)
	for _, tx := range body {
		b.AddTransaction(tx)
	}
	if blockgen.HasWitness(body) {
		blockgen.AddWitnessCommitment(&b)
	}
	blockgen.UpdateMerkleRoot(&b)
	if err := blockgen.Solve(&b.Header); err != nil {
		return nil, nil, err
	}
	return &b, outs, nil
}

// apply records b's changes to the set: spent coins out, new outputs in
// (the coinbase's too, but not its witness commitment, unspendable), and
// its outputs as the next block's recent coins.
func (bs *blockSet) apply(b *btcwire.MsgBlock, height int32, all [][]input, outs [][2]spendRec) {
	for _, ins := range all {
		for _, in := range ins {
			op := outpoint{in.rec.txid, in.rec.vout}
			if in.old {
				bs.spent[op] = struct{}{}
				bs.ser = appendTxOutSer(bs.ser[:0], &in.rec.txid, in.rec.vout, in.rec.code, in.rec.value, bs.pool.appendScript(nil, in.rec.typ, in.rec.key))
				bs.baseMu.Remove(bs.ser)
			} else {
				delete(bs.added, op)
			}
		}
	}
	var fresh []spendRec
	for j, tx := range b.Transactions {
		txid := [32]byte(tx.TxHash())
		for k, o := range tx.TxOut {
			if len(o.PkScript) > 0 && o.PkScript[0] == 0x6a {
				continue
			}
			code := uint32(height) << 1
			if j == 0 {
				code |= 1
			}
			bs.added[outpoint{txid, uint32(k)}] = &newCoin{txid: txid, vout: uint32(k), code: code, value: uint64(o.Value), script: o.PkScript}
			if j > 0 {
				r := outs[j-1][k]
				r.txid, r.vout = txid, uint32(k)
				fresh = append(fresh, r)
			}
		}
	}
	// The next block spends this one's outputs first, in random order.
	for i := len(fresh) - 1; i > 0; i-- {
		k := bs.r.below(uint64(i + 1))
		fresh[i], fresh[k] = fresh[k], fresh[i]
	}
	bs.recent = append(bs.recent, fresh...)
}

// outType draws a block output's type: P2TR 40 %, P2WPKH 45 %, P2PKH 15 %.
func (bs *blockSet) outType() ScriptType {
	switch u := bs.r.below(100); {
	case u < 40:
		return P2TR
	case u < 85:
		return P2WPKH
	}
	return P2PKH
}

// corrupt flips a bit inside the first input's signature.
func corrupt(tx *btcwire.MsgTx) {
	in := tx.TxIn[0]
	if len(in.Witness) > 0 {
		in.Witness[0][10] ^= 1
		return
	}
	in.SignatureScript[10] ^= 1 // after the push opcode and the DER header
}

// signAll signs the transactions on cfg.Workers goroutines.
func (bs *blockSet) signAll(txs []*btcwire.MsgTx, ins [][]input) error {
	var wg sync.WaitGroup
	errs := make([]error, bs.cfg.Workers)
	for wk := range bs.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := wk; j < len(txs); j += bs.cfg.Workers {
				if err := bs.sign(txs[j], ins[j]); err != nil {
					errs[wk] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// sign fills tx's scriptSigs and witnesses: SIGHASH_ALL ECDSA for P2PKH
// (compressed key) and P2WPKH (BIP143), SIGHASH_DEFAULT BIP340 for P2TR
// key paths (BIP341, the BIP86 tweak). Reads only the derived pool keys
// and bs.signer.
func (bs *blockSet) sign(tx *btcwire.MsgTx, ins []input) error {
	prev := make(map[btcwire.OutPoint]*btcwire.TxOut, len(ins))
	scripts := make([][]byte, len(ins))
	for i, in := range ins {
		scripts[i] = bs.pool.appendScript(nil, in.rec.typ, in.rec.key)
		prev[tx.TxIn[i].PreviousOutPoint] = &btcwire.TxOut{Value: int64(in.rec.value), PkScript: scripts[i]}
	}
	fetcher := txscript.NewMultiPrevOutFetcher(prev)
	hashes := txscript.NewTxSigHashes(tx, fetcher)
	for i, in := range ins {
		k := bs.signer[in.rec.key]
		priv, pub := k.priv, k.pub
		switch in.rec.typ {
		case P2PKH:
			h, err := txscript.CalcSignatureHash(scripts[i], txscript.SigHashAll, tx, i)
			if err != nil {
				return err
			}
			sig := append(ecdsa.Sign(priv, h).Serialize(), byte(txscript.SigHashAll))
			tx.TxIn[i].SignatureScript = append(append(append([]byte{byte(len(sig))}, sig...), byte(len(pub))), pub...)
		case P2WPKH:
			h, err := txscript.CalcWitnessSigHash(scripts[i], hashes, txscript.SigHashAll, tx, i, int64(in.rec.value))
			if err != nil {
				return err
			}
			tx.TxIn[i].Witness = btcwire.TxWitness{append(ecdsa.Sign(priv, h).Serialize(), byte(txscript.SigHashAll)), pub}
		case P2TR:
			h, err := txscript.CalcTaprootSignatureHash(hashes, txscript.SigHashDefault, tx, i, fetcher)
			if err != nil {
				return err
			}
			sig, err := schnorr.Sign(k.tweaked, h, schnorr.FastSign())
			if err != nil {
				return err
			}
			tx.TxIn[i].Witness = btcwire.TxWitness{sig.Serialize()}
		default:
			return fmt.Errorf("mainnetgen: cannot sign a %s coin", in.rec.typ)
		}
	}
	return nil
}

// after is gettxoutsetinfo of the set after the blocks: the snapshot's
// coins drawn again (the generator is deterministic) with the spent ones
// left out and the blocks' outputs merged in txid order for
// hash_serialized_3 and the counts; MuHash is the snapshot's with the
// spent coins divided out and the new ones multiplied in.
func (bs *blockSet) after() (Digests, error) {
	s := &afterSink{hs3: sha256.New(), spent: bs.spent}
	for _, c := range bs.added {
		s.adds = append(s.adds, c)
		bs.ser = appendTxOutSer(bs.ser[:0], &c.txid, c.vout, c.code, c.value, c.script)
		bs.baseMu.Insert(bs.ser)
	}
	slices.SortFunc(s.adds, func(a, b *newCoin) int {
		if c := bytes.Compare(a.txid[:], b.txid[:]); c != 0 {
			return c
		}
		return int(a.vout) - int(b.vout)
	})
	cfg := bs.cfg
	cfg.Progress = nil
	g := newGenerator(cfg, bs.pool)
	if err := g.run(nil, s, bs.p.Magic, bs.base); err != nil {
		return Digests{}, err
	}
	d := s.finish()
	if s.skipped != len(bs.spent) {
		return d, fmt.Errorf("mainnetgen: %d spent coins met again, %d spent", s.skipped, len(bs.spent))
	}
	d.MuHash = displayHex(bs.baseMu.Finalize())
	return d, nil
}

// afterSink is a sink computing hash_serialized_3 and the counts of the
// coins given minus spent plus adds (sorted by txid then vout).
type afterSink struct {
	tally
	hs3     hash.Hash
	ser     []byte
	adds    []*newCoin
	next    int
	spent   map[outpoint]struct{}
	skipped int
}

func (s *afterSink) add(txid *[32]byte, vout, code uint32, value uint64, script []byte) {
	s.flushBefore(txid[:])
	if _, ok := s.spent[outpoint{*txid, vout}]; ok {
		s.skipped++
		return
	}
	s.coin(txid, vout, code, value, script)
}

func (s *afterSink) coin(txid *[32]byte, vout, code uint32, value uint64, script []byte) {
	s.ser = appendTxOutSer(s.ser[:0], txid, vout, code, value, script)
	s.hs3.Write(s.ser)
	s.count(value, script)
}

// flushBefore accounts the adds whose txid sorts before txid (all when
// txid is nil), a txid at a time.
func (s *afterSink) flushBefore(txid []byte) {
	for s.next < len(s.adds) && (txid == nil || bytes.Compare(s.adds[s.next].txid[:], txid) < 0) {
		c := s.adds[s.next]
		s.coin(&c.txid, c.vout, c.code, c.value, c.script)
		s.next++
		if s.next == len(s.adds) || s.adds[s.next].txid != c.txid {
			s.endTx()
		}
	}
}

func (s *afterSink) finish() Digests {
	s.endTx()
	s.flushBefore(nil)
	first := s.hs3.Sum(nil)
	s.d.HashSerialized3 = displayHex(sha256.Sum256(first))
	return s.d
}
