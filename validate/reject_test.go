package validate_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/btcsuite/btcd/chainhash/v2"
	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/testkit/blockgen"
	"utxod/utxo"
	"utxod/validate"
	"utxod/wire"
)

// Every reject reason Core's block validation gives, each provoked by one
// block on the regtest base chain (testutil_test.go) submitted through
// Chainstate.ProcessBlock. Each test asserts the exact reason and that the
// tip, Stats and gettxoutsetinfo (hash_serialized_3 and MuHash) are the
// same before and after. Most also submit the unbroken twin of the block
// afterwards to show the failure came from the mutation alone.

const scriptEvalFalse = "block-script-verify-flag-failed (Script evaluated without error but finished with a false/empty top stack element)"

// spendCB returns a signed tx spending the coinbase of base height h to a
// single OP_TRUE output of value 50 BTC - fee.
func (e *env) spendCB(h int, fee int64) *btcwire.MsgTx {
	op, prev := e.coinbaseOut(h)
	return e.spendP2PKH([]btcwire.OutPoint{op}, []blockgen.Prevout{prev}, blockgen.Out(prev.Value-fee, blockgen.OpTrue))
}

// withFee adds fee to the template's coinbase.
func withFee(t *blockgen.Template, fee int64) *blockgen.Template {
	t.Coinbase().TxOut[0].Value += fee
	return t
}

// finishRaw finishes the template and returns the serialized block.
func finishRaw(t *blockgen.Template) []byte { return t.Finish().Raw }

// resolve recomputes the merkle root and proof of work after a hand edit.
func resolve(b *btcwire.MsgBlock) []byte {
	blockgen.UpdateMerkleRoot(b)
	if err := blockgen.Solve(&b.Header); err != nil {
		panic(err)
	}
	return blockgen.Serialize(b)
}

func TestBaseTemplateAccepted(t *testing.T) {
	e := newEnv(t)
	tpl := withFee(e.template(), 1000)
	tpl.AddTx(e.spendCB(2, 1000))
	e.accept(finishRaw(tpl))
}

// ---- CheckBlockHeader / ContextualCheckBlockHeader ----

func TestRejectHighHash(t *testing.T) {
	e := newEnv(t)
	n := e.template().Finish()
	b := n.Block
	blockgen.Unsolve(&b.Header)
	if b.Header.Nonce == 0 {
		t.Fatal("unsolve did nothing")
	}
	e.reject(blockgen.Serialize(b), "high-hash")
}

func TestRejectBadDiffbits(t *testing.T) {
	e := newEnv(t)
	tpl := e.template()
	tpl.Block.Header.Bits = 0x207ffffe // valid target, not regtest's required bits
	e.reject(finishRaw(tpl), "bad-diffbits")
}

func TestRejectTimeTooOld(t *testing.T) {
	e := newEnv(t)
	mtp := e.tip().MedianTimePast()
	e.reject(finishRaw(e.template().SetTime(mtp)), "time-too-old")
	e.accept(finishRaw(e.template().SetTime(mtp + 1)))
}

func TestRejectTimeTooNew(t *testing.T) {
	e := newEnv(t)
	e.reject(finishRaw(e.template().SetTime(clockUnix+validate.MaxFutureBlockTime+1)), "time-too-new")
	e.accept(finishRaw(e.template().SetTime(clockUnix + validate.MaxFutureBlockTime)))

	// A block from the future is not cached as invalid (Core:
	// BLOCK_TIME_FUTURE): once the clock catches up it is accepted.
	e = newEnv(t)
	raw := finishRaw(e.template().SetTime(clockUnix + validate.MaxFutureBlockTime + 1))
	e.reject(raw, "time-too-new")
	e.clock++
	e.accept(raw)
}

func TestRejectBadVersion(t *testing.T) {
	// Core: strprintf("bad-version(0x%08x)", block.nVersion) once BIP65
	// (version 4) is active, which on regtest is from height 1.
	for _, c := range []struct {
		version int32
		reason  string
	}{{1, "bad-version(0x00000001)"}, {2, "bad-version(0x00000002)"}, {3, "bad-version(0x00000003)"}} {
		e := newEnv(t)
		tpl := e.template()
		tpl.Block.Header.Version = c.version
		e.reject(finishRaw(tpl), c.reason)
	}
	e := newEnv(t)
	tpl := e.template()
	tpl.Block.Header.Version = 4
	e.accept(finishRaw(tpl))
}

// ---- CheckBlock ----

func TestRejectBadMerkleRoot(t *testing.T) {
	e := newEnv(t)
	tpl := withFee(e.template(), 1000)
	tpl.AddTx(e.spendCB(2, 1000))
	n := tpl.Finish()
	good := n.Raw
	b := n.Block
	b.Header.MerkleRoot[0] ^= 1
	if err := blockgen.Solve(&b.Header); err != nil {
		t.Fatal(err)
	}
	e.reject(blockgen.Serialize(b), "bad-txnmrklroot")

	// Same header, different transactions (a mutated body): the header
	// stays acceptable, so the genuine block is accepted afterwards.
	var mut btcwire.MsgBlock
	if err := mut.Deserialize(bytes.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	mut.Transactions[1].TxOut[0].Value--
	e.reject(blockgen.Serialize(&mut), "bad-txnmrklroot")
	e.accept(good)
}

func TestRejectEmptyBlock(t *testing.T) {
	// No transactions: the merkle root of nothing is zero in Core
	// (ComputeMerkleRoot), so a zero root passes CheckMerkleRoot and the
	// size check says "bad-blk-length"; any other root fails first with
	// "bad-txnmrklroot" (CheckMerkleRoot runs before the size limits).
	e := newEnv(t)
	tpl := e.template()
	tpl.Block.Transactions = nil
	tpl.Block.Header.MerkleRoot = chainhash.Hash{}
	if err := blockgen.Solve(&tpl.Block.Header); err != nil {
		t.Fatal(err)
	}
	e.reject(blockgen.Serialize(tpl.Block), "bad-blk-length")

	tpl.Block.Header.MerkleRoot[5] = 1
	if err := blockgen.Solve(&tpl.Block.Header); err != nil {
		t.Fatal(err)
	}
	e.reject(blockgen.Serialize(tpl.Block), "bad-txnmrklroot")
}

func TestRejectDuplicateTxsCVE20122459(t *testing.T) {
	// Six transactions: [cb t1 t2 t3 t4 t5]. Level 1 is h(cb,t1) h(t2,t3)
	// h(t4,t5), odd, so h(t4,t5) is paired with itself. Appending t4 t5
	// again gives eight leaves with the same root and the same block hash.
	e := newEnv(t)
	tpl := e.template()
	prev := e.spendCB(2, 1000)
	txs := []*btcwire.MsgTx{prev}
	for i := 0; i < 4; i++ {
		next := blockgen.Spend([]btcwire.OutPoint{blockgen.Outpoint(prev, 0)}, blockgen.Out(prev.TxOut[0].Value-1000, blockgen.OpTrue))
		txs = append(txs, next)
		prev = next
	}
	tpl.AddTx(txs...)
	withFee(tpl, 5*1000)
	n := tpl.Finish()
	if len(n.Block.Transactions) != 6 {
		t.Fatalf("%d txs", len(n.Block.Transactions))
	}
	good := n.Raw

	var mut btcwire.MsgBlock
	if err := mut.Deserialize(bytes.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	mut.AddTransaction(mut.Transactions[4])
	mut.AddTransaction(mut.Transactions[5])
	if root, mutated := blockgen.MerkleRoot(mut.Transactions); !mutated || root != wire.Hash(mut.Header.MerkleRoot) {
		t.Fatalf("mutated tree: root %s mutated %v", root, mutated)
	}
	if blockgen.BlockHash(&mut) != n.Hash {
		t.Fatal("hash changed")
	}
	e.reject(blockgen.Serialize(&mut), "bad-txns-duplicate")
	// The mutated copy must not poison the hash (Core: BLOCK_MUTATED is
	// not cached as invalid).
	e.accept(good)
}

func TestRejectBlockTooLong(t *testing.T) {
	// Serialized size without witness above MAX_BLOCK_WEIGHT/4 = 1,000,000
	// bytes; exactly the limit is fine. The padding is an OP_RETURN output
	// of a spend of fund's OP_TRUE output (no signature to resize).
	const limit = validate.MaxBlockWeight / validate.WitnessScaleFactor
	build := func(e *env, size int) []byte {
		op, prev := e.fundOut(4)
		tx := blockgen.Spend([]btcwire.OutPoint{op}, blockgen.Out(prev.Value, blockgen.OpTrue), blockgen.Out(0, make([]byte, 100_000)))
		tpl := e.template()
		tpl.AddTx(tx)
		pad := tx.TxOut[1].PkScript
		tx.TxOut[1].PkScript = make([]byte, len(pad)+size-tpl.Block.SerializeSizeStripped())
		tx.TxOut[1].PkScript[0] = 0x6a
		if got := tpl.Block.SerializeSizeStripped(); got != size {
			t.Fatalf("size %d, want %d", got, size)
		}
		return finishRaw(tpl)
	}
	e := newEnv(t)
	e.reject(build(e, limit+1), "bad-blk-length")
	e.accept(build(e, limit))
}

func TestRejectBlockWeight(t *testing.T) {
	// Base size under 1 MB but weight over 4M: a P2WPKH spend carrying a
	// large extra witness item. ContextualCheckBlock checks the weight
	// after the witness commitment, so the commitment must be right.
	e := newEnv(t)
	op, prev := e.fundOut(0)
	tx := e.spendP2WPKH([]btcwire.OutPoint{op}, []blockgen.Prevout{prev}, blockgen.Out(prev.Value-1000, blockgen.OpTrue))
	tx.AddTxOut(blockgen.Out(0, append([]byte{0x6a}, make([]byte, 700_000)...)))
	if err := e.base.key.SignP2WPKH(tx, 0, []blockgen.Prevout{prev}); err != nil {
		t.Fatal(err)
	}
	tx.TxIn[0].Witness = append(btcwire.TxWitness{make([]byte, 2_000_000)}, tx.TxIn[0].Witness...)
	tpl := withFee(e.template(), 1000)
	tpl.AddTx(tx)
	n := tpl.Finish()
	b, err := wire.ParseBlock(n.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if b.BaseSize()*4 > validate.MaxBlockWeight || b.Weight() <= validate.MaxBlockWeight {
		t.Fatalf("base %d weight %d", b.BaseSize(), b.Weight())
	}
	e.reject(n.Raw, "bad-blk-weight")
}

func TestRejectCoinbaseMissing(t *testing.T) {
	e := newEnv(t)
	tpl := e.template()
	tpl.Block.Transactions[0] = e.spendCB(2, 0)
	e.reject(finishRaw(tpl), "bad-cb-missing")
}

func TestRejectCoinbaseMultiple(t *testing.T) {
	e := newEnv(t)
	tpl := e.template()
	tpl.AddTx(blockgen.NewCoinbase(tpl.Height, 1, blockgen.OpTrue))
	raw := finishRaw(tpl)
	e.reject(raw, "bad-cb-multiple")
	// CheckBlock failures are never cached (Core's ProcessNewBlock skips
	// AcceptBlock for them): the same block fails the same way again.
	e.reject(raw, "bad-cb-multiple")
}

func TestRejectCoinbaseLength(t *testing.T) {
	for _, n := range []int{1, 101} {
		e := newEnv(t)
		tpl := e.template()
		s := blockgen.CoinbaseScript(tpl.Height, nil)
		if n == 1 {
			s = []byte{0x51}
		} else {
			s = append(s, bytes.Repeat([]byte{0}, n-len(s))...)
		}
		tpl.Coinbase().TxIn[0].SignatureScript = s
		e.reject(finishRaw(tpl), "bad-cb-length")
	}
	// 2 and 100 bytes are fine.
	for _, n := range []int{2, 100} {
		e := newEnv(t)
		tpl := e.template()
		s := blockgen.CoinbaseScript(tpl.Height, nil)
		s = append(s, bytes.Repeat([]byte{0}, n-len(s))...)
		tpl.Coinbase().TxIn[0].SignatureScript = s
		e.accept(finishRaw(tpl))
	}
}

func TestRejectCheckTransaction(t *testing.T) {
	cases := []struct {
		name   string
		reason string
		tx     func(e *env) *btcwire.MsgTx
	}{
		{"vin-empty", "bad-txns-vin-empty", func(e *env) *btcwire.MsgTx {
			// No inputs and no outputs: the only no-input serialization
			// Core's deserializer reads back (vin=0, flags=0).
			return btcwire.NewMsgTx(2)
		}},
		{"vout-empty", "bad-txns-vout-empty", func(e *env) *btcwire.MsgTx {
			tx := e.spendCB(2, 0)
			tx.TxOut = nil
			return tx
		}},
		{"vout-negative", "bad-txns-vout-negative", func(e *env) *btcwire.MsgTx {
			tx := e.spendCB(2, 0)
			tx.TxOut[0].Value = -1
			return tx
		}},
		{"vout-toolarge", "bad-txns-vout-toolarge", func(e *env) *btcwire.MsgTx {
			tx := e.spendCB(2, 0)
			tx.TxOut[0].Value = validate.MaxMoney + 1
			return tx
		}},
		{"txouttotal-toolarge", "bad-txns-txouttotal-toolarge", func(e *env) *btcwire.MsgTx {
			tx := e.spendCB(2, 0)
			tx.TxOut[0].Value = validate.MaxMoney
			tx.AddTxOut(blockgen.Out(1, blockgen.OpTrue))
			return tx
		}},
		{"inputs-duplicate", "bad-txns-inputs-duplicate", func(e *env) *btcwire.MsgTx {
			op, prev := e.coinbaseOut(2)
			return e.spendP2PKH([]btcwire.OutPoint{op, op}, []blockgen.Prevout{prev, prev}, blockgen.Out(prev.Value, blockgen.OpTrue))
		}},
		{"inputs-duplicate-many", "bad-txns-inputs-duplicate", func(e *env) *btcwire.MsgTx {
			// More than 16 inputs (the set-based path).
			var ops []btcwire.OutPoint
			for i := 0; i < 20; i++ {
				ops = append(ops, btcwire.OutPoint{Hash: chainhash.Hash{byte(i), 1}, Index: uint32(i)})
			}
			ops = append(ops, ops[3])
			return blockgen.Spend(ops, blockgen.Out(1, blockgen.OpTrue))
		}},
		{"prevout-null", "bad-txns-prevout-null", func(e *env) *btcwire.MsgTx {
			op, _ := e.coinbaseOut(2)
			return blockgen.Spend([]btcwire.OutPoint{op, {Index: 0xffffffff}}, blockgen.Out(1, blockgen.OpTrue))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			tx := c.tx(e)
			tpl := e.template()
			tpl.AddTx(tx)
			e.reject(finishRaw(tpl), c.reason)
		})
	}
}

func TestRejectLegacySigops(t *testing.T) {
	// CheckBlock: legacy sigops × 4 > 80000. 20000 OP_CHECKSIG in outputs
	// are fine, one more is not.
	e := newEnv(t)
	tx := e.spendCB(2, 1000)
	tx.TxOut[0].PkScript = bytes.Repeat([]byte{0xac}, 20_000)
	op, prev := e.coinbaseOut(2)
	_ = op
	if err := e.base.key.SignP2PKH(tx, 0, prev.Script); err != nil {
		t.Fatal(err)
	}
	// The P2PKH scriptPubKey of the spent coin is not counted (legacy
	// counts scriptSigs and outputs of the block only); the scriptSig has
	// no sigops.
	tpl := withFee(e.template(), 1000)
	tpl.AddTx(tx)
	over := tx.Copy()
	over.TxOut[0].PkScript = bytes.Repeat([]byte{0xac}, 20_001)
	if err := e.base.key.SignP2PKH(over, 0, prev.Script); err != nil {
		t.Fatal(err)
	}
	tpl2 := withFee(e.template(), 1000)
	tpl2.AddTx(over)
	e.reject(finishRaw(tpl2), "bad-blk-sigops")
	e.accept(finishRaw(tpl))
}

func TestRejectP2SHSigops(t *testing.T) {
	// ConnectBlock's sigop cost counts P2SH redeem scripts: 20 sigops per
	// CHECKMULTISIG with a non-small key count. Fund P2SH outputs in one
	// block, then spend enough of them in the next to pass 80000.
	e := newEnv(t)
	// Redeem script OP_0 OP_IF 15×CHECKMULTISIG OP_ENDIF OP_1: true when
	// run, and 15 × 20 = 300 sigops when counted (a CHECKMULTISIG not
	// preceded by OP_1..OP_16 counts 20).
	redeem := append([]byte{0x00, 0x63}, bytes.Repeat([]byte{0xae}, 15)...)
	redeem = append(redeem, 0x68, 0x51)
	p2sh := append([]byte{0xa9, 0x14}, blockgen.Hash160(redeem)...)
	p2sh = append(p2sh, 0x87)
	// 300 × 4 = 1200 cost per input; 67 inputs = 80400 > 80000.
	const nOut = 67
	op, prev := e.coinbaseOut(2)
	outs := make([]*btcwire.TxOut, nOut)
	for i := range outs {
		outs[i] = blockgen.Out(1000, p2sh)
	}
	fund := e.spendP2PKH([]btcwire.OutPoint{op}, []blockgen.Prevout{prev}, append(outs, blockgen.Out(prev.Value-nOut*1000-10_000, blockgen.OpTrue))...)
	tpl := withFee(e.template(), 10_000)
	tpl.AddTx(fund)
	n := tpl.Finish()
	e.accept(n.Raw)

	spend := func(k int) *btcwire.MsgTx {
		var ops []btcwire.OutPoint
		for i := 0; i < k; i++ {
			ops = append(ops, blockgen.Outpoint(fund, uint32(i)))
		}
		tx := blockgen.Spend(ops, blockgen.Out(int64(k)*1000, blockgen.OpTrue))
		for i := range tx.TxIn {
			tx.TxIn[i].SignatureScript = append([]byte{byte(len(redeem))}, redeem...)
		}
		return tx
	}
	bad := e.base.chain.Template(n, nil)
	bad.AddTx(spend(nOut))
	e.reject(finishRaw(bad), "bad-blk-sigops")
	good := e.base.chain.Template(n, nil)
	good.AddTx(spend(66)) // 79200 + coinbase output 0
	e.accept(finishRaw(good))
}

// ---- ContextualCheckBlock ----

func TestRejectCoinbaseHeight(t *testing.T) {
	e := newEnv(t)
	tpl := e.template()
	tpl.Coinbase().TxIn[0].SignatureScript = blockgen.CoinbaseScript(tpl.Height+1, []byte{0})
	e.reject(finishRaw(tpl), "bad-cb-height")
	// The height push must be minimal (CScript() << height): 111 pushed as
	// two bytes is a different prefix.
	tpl = e.template()
	tpl.Coinbase().TxIn[0].SignatureScript = []byte{0x02, byte(tpl.Height), 0x00}
	e.reject(finishRaw(tpl), "bad-cb-height")
}

func TestRejectNonFinalLocktime(t *testing.T) {
	e := newEnv(t)
	height := int32(baseTip + 1)
	mtp := e.tip().MedianTimePast()
	for _, c := range []struct {
		name     string
		lockTime uint32
		seq      uint32
		ok       bool
	}{
		{"height=block", uint32(height), 0, false},
		{"height=block-1", uint32(height - 1), 0, true},
		{"height=block, final sequence", uint32(height), 0xffffffff, true},
		// BIP113: time locks compare against the parent's median time past.
		{"time=mtp", uint32(mtp), 0, false},
		{"time=mtp-1", uint32(mtp - 1), 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			op, prev := e.coinbaseOut(2)
			tx := blockgen.Spend([]btcwire.OutPoint{op}, blockgen.Out(prev.Value-1000, blockgen.OpTrue))
			tx.LockTime = c.lockTime
			tx.TxIn[0].Sequence = c.seq
			if err := e.base.key.SignP2PKH(tx, 0, prev.Script); err != nil {
				t.Fatal(err)
			}
			tpl := withFee(e.template(), 1000)
			tpl.AddTx(tx)
			if c.ok {
				e.accept(finishRaw(tpl))
			} else {
				e.reject(finishRaw(tpl), "bad-txns-nonfinal")
			}
		})
	}
	// A non-final coinbase is non-final too.
	tpl := e.template()
	tpl.Coinbase().LockTime = uint32(height)
	tpl.Coinbase().TxIn[0].Sequence = 0
	e.reject(finishRaw(tpl), "bad-txns-nonfinal")
}

func TestRejectNonFinalBIP68(t *testing.T) {
	// fund was mined at height 102; the block is at 111. A relative height
	// lock of n needs 102 + n - 1 < 111, so 9 is the most allowed.
	for _, c := range []struct {
		name    string
		version int32
		seq     uint32
		ok      bool
	}{
		{"height 10", 2, 10, false},
		{"height 9", 2, 9, true},
		{"height 10, version 1", 1, 10, true},
		{"height 10, disabled", 2, 10 | 1<<31, true},
		// Time lock: units of 512 s from the MTP of the block before the
		// coin's (height 101). Blocks are 600 s apart; MTP(110) - MTP(101)
		// is 9×600 = 5400 s: 10 units (5120 s) pass, 11 (5632 s) do not.
		{"time 11 units", 2, 1<<22 | 11, false},
		{"time 10 units", 2, 1<<22 | 10, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			op, prev := e.fundOut(2) // P2PKH, height 102
			tx := blockgen.Spend([]btcwire.OutPoint{op}, blockgen.Out(prev.Value-1000, blockgen.OpTrue))
			tx.Version = c.version
			tx.TxIn[0].Sequence = c.seq
			if err := e.base.key.SignP2PKH(tx, 0, prev.Script); err != nil {
				t.Fatal(err)
			}
			tpl := withFee(e.template(), 1000)
			tpl.AddTx(tx)
			if c.ok {
				e.accept(finishRaw(tpl))
			} else {
				e.reject(finishRaw(tpl), "bad-txns-nonfinal")
			}
		})
	}
}

func TestRejectWitnessCommitment(t *testing.T) {
	segwitSpend := func(e *env) *btcwire.MsgTx {
		op, prev := e.fundOut(0)
		return e.spendP2WPKH([]btcwire.OutPoint{op}, []blockgen.Prevout{prev}, blockgen.Out(prev.Value-1000, blockgen.OpTrue))
	}
	t.Run("good", func(t *testing.T) {
		e := newEnv(t)
		tpl := withFee(e.template(), 1000)
		tpl.AddTx(segwitSpend(e))
		e.accept(finishRaw(tpl))
	})
	t.Run("bad-witness-merkle-match", func(t *testing.T) {
		e := newEnv(t)
		tpl := withFee(e.template(), 1000)
		tpl.AddTx(segwitSpend(e))
		blockgen.AddWitnessCommitment(tpl.Block)
		cb := tpl.Coinbase()
		cb.TxOut[len(cb.TxOut)-1].PkScript[10] ^= 1
		e.reject(resolve(tpl.Block), "bad-witness-merkle-match")
	})
	t.Run("bad-witness-merkle-match, witness changed after commitment", func(t *testing.T) {
		e := newEnv(t)
		tpl := withFee(e.template(), 1000)
		tx := segwitSpend(e)
		tpl.AddTx(tx)
		blockgen.AddWitnessCommitment(tpl.Block)
		tx.TxIn[0].Witness[0][5] ^= 1 // txid and merkle root unchanged
		e.reject(resolve(tpl.Block), "bad-witness-merkle-match")
	})
	t.Run("bad-witness-nonce-size", func(t *testing.T) {
		e := newEnv(t)
		tpl := withFee(e.template(), 1000)
		tpl.AddTx(segwitSpend(e))
		blockgen.AddWitnessCommitment(tpl.Block)
		cb := tpl.Coinbase()
		reserved := make([]byte, 31)
		cb.TxIn[0].Witness = btcwire.TxWitness{reserved}
		cb.TxOut[len(cb.TxOut)-1].PkScript = blockgen.CommitmentScript(blockgen.WitnessRoot(tpl.Block.Transactions), reserved)
		e.reject(resolve(tpl.Block), "bad-witness-nonce-size")
	})
	t.Run("bad-witness-nonce-size, two items", func(t *testing.T) {
		e := newEnv(t)
		tpl := withFee(e.template(), 1000)
		tpl.AddTx(segwitSpend(e))
		blockgen.AddWitnessCommitment(tpl.Block)
		cb := tpl.Coinbase()
		cb.TxIn[0].Witness = append(cb.TxIn[0].Witness, []byte{1})
		e.reject(resolve(tpl.Block), "bad-witness-nonce-size")
	})
	t.Run("unexpected-witness", func(t *testing.T) {
		e := newEnv(t)
		tpl := withFee(e.template(), 1000)
		tpl.AddTx(segwitSpend(e))
		e.reject(resolve(tpl.Block), "unexpected-witness") // no commitment
	})
	t.Run("unexpected-witness, P2PKH spend with witness", func(t *testing.T) {
		// A witness on a legacy input, committed: the commitment is fine;
		// the script check fails (WITNESS_UNEXPECTED).
		e := newEnv(t)
		tx := e.spendCB(2, 1000)
		tx.TxIn[0].Witness = btcwire.TxWitness{{1}}
		tpl := withFee(e.template(), 1000)
		tpl.AddTx(tx)
		e.reject(finishRaw(tpl), "block-script-verify-flag-failed (Witness provided for non-witness script)")
	})
	t.Run("unexpected-witness, coinbase only", func(t *testing.T) {
		e := newEnv(t)
		tpl := e.template()
		tpl.Coinbase().TxIn[0].Witness = btcwire.TxWitness{make([]byte, 32)}
		e.reject(resolve(tpl.Block), "unexpected-witness")
	})
}

// ---- ConnectBlock ----

func TestRejectMissingOrSpent(t *testing.T) {
	t.Run("unknown", func(t *testing.T) {
		e := newEnv(t)
		tx := blockgen.Spend([]btcwire.OutPoint{{Hash: chainhash.Hash{1, 2, 3}, Index: 0}}, blockgen.Out(1, blockgen.OpTrue))
		tpl := e.template()
		tpl.AddTx(tx)
		e.reject(finishRaw(tpl), "bad-txns-inputs-missingorspent")
	})
	t.Run("spent", func(t *testing.T) {
		e := newEnv(t)
		tpl := e.template()
		tpl.AddTx(e.spendCB(1, 1000)) // spent by fund at 102
		e.reject(finishRaw(tpl), "bad-txns-inputs-missingorspent")
	})
	t.Run("index out of range", func(t *testing.T) {
		e := newEnv(t)
		tx := blockgen.Spend([]btcwire.OutPoint{blockgen.Outpoint(e.base.fund, 5)}, blockgen.Out(1, blockgen.OpTrue))
		tpl := e.template()
		tpl.AddTx(tx)
		e.reject(finishRaw(tpl), "bad-txns-inputs-missingorspent")
	})
	t.Run("double spend in block", func(t *testing.T) {
		e := newEnv(t)
		op, _ := e.fundOut(4)
		a := blockgen.Spend([]btcwire.OutPoint{op}, blockgen.Out(1, blockgen.OpTrue))
		b := blockgen.Spend([]btcwire.OutPoint{op}, blockgen.Out(2, blockgen.OpTrue))
		tpl := e.template()
		tpl.AddTx(a, b)
		e.reject(finishRaw(tpl), "bad-txns-inputs-missingorspent")
	})
	t.Run("spends later tx in block", func(t *testing.T) {
		e := newEnv(t)
		op, prev := e.fundOut(4)
		a := blockgen.Spend([]btcwire.OutPoint{op}, blockgen.Out(prev.Value, blockgen.OpTrue))
		b := blockgen.Spend([]btcwire.OutPoint{blockgen.Outpoint(a, 0)}, blockgen.Out(prev.Value, blockgen.OpTrue))
		tpl := e.template()
		tpl.AddTx(b, a)
		e.reject(finishRaw(tpl), "bad-txns-inputs-missingorspent")
		tpl = e.template()
		tpl.AddTx(a, b)
		e.accept(finishRaw(tpl))
	})
	t.Run("after a transaction whose script fails", func(t *testing.T) {
		// The failing input is already on the workers when the missing one
		// is found; Core's ConnectBlock returns at the missing input
		// (CheckTxInputs) and discards its queued script checks.
		e := newEnv(t)
		bad := e.spendCB(2, 1000)
		bad.TxIn[0].Witness = btcwire.TxWitness{{1}}
		missing := blockgen.Spend([]btcwire.OutPoint{{Hash: chainhash.Hash{1, 2, 3}, Index: 0}}, blockgen.Out(1, blockgen.OpTrue))
		tpl := withFee(e.template(), 1000)
		tpl.AddTx(bad, missing)
		e.reject(finishRaw(tpl), "bad-txns-inputs-missingorspent")
		tpl = withFee(e.template(), 1000)
		tpl.AddTx(bad)
		e.reject(finishRaw(tpl), "block-script-verify-flag-failed (Witness provided for non-witness script)")
	})
	t.Run("OP_RETURN output", func(t *testing.T) {
		e := newEnv(t)
		op, prev := e.fundOut(4)
		a := blockgen.Spend([]btcwire.OutPoint{op}, blockgen.Out(prev.Value, blockgen.OpTrue), blockgen.Out(0, []byte{0x6a, 0x01, 0x01}))
		b := blockgen.Spend([]btcwire.OutPoint{blockgen.Outpoint(a, 1)}, blockgen.Out(0, blockgen.OpTrue))
		tpl := e.template()
		tpl.AddTx(a, b)
		e.reject(finishRaw(tpl), "bad-txns-inputs-missingorspent")
	})
}

func TestRejectPrematureCoinbaseSpend(t *testing.T) {
	// Block 111 may spend coinbases of height ≤ 11 (111 - h ≥ 100).
	e := newEnv(t)
	tpl := withFee(e.template(), 1000)
	tpl.AddTx(e.spendCB(12, 1000))
	e.reject(finishRaw(tpl), "bad-txns-premature-spend-of-coinbase")
	tpl = withFee(e.template(), 1000)
	tpl.AddTx(e.spendCB(11, 1000))
	e.accept(finishRaw(tpl))
}

func TestRejectInBelowOut(t *testing.T) {
	e := newEnv(t)
	tpl := e.template()
	tpl.AddTx(e.spendCB(2, -1))
	e.reject(finishRaw(tpl), "bad-txns-in-belowout")
}

func TestRejectCoinbaseAmount(t *testing.T) {
	e := newEnv(t)
	tpl := withFee(e.template(), 1001)
	tpl.AddTx(e.spendCB(2, 1000))
	bad := tpl.Finish()
	e.reject(bad.Raw, "bad-cb-amount")
	// A ConnectBlock failure is cached: the same block again is refused as
	// known-invalid (Core's submitblock: "duplicate-invalid"), a child
	// "bad-prevblk".
	e.reject(bad.Raw, "duplicate-invalid")
	e.reject(finishRaw(e.base.chain.Template(bad, nil)), "bad-prevblk")
	// Paying less than allowed is fine.
	tpl = withFee(e.template(), 999)
	tpl.AddTx(e.spendCB(2, 1000))
	e.accept(finishRaw(tpl))
}

func TestRejectInputValuesOutOfRange(t *testing.T) {
	// No chain can hold coins summing past MAX_MONEY, so this runs
	// ConnectBlock directly over a view that claims two MAX_MONEY coins
	// (Core's CheckTxInputs: !MoneyRange(coin.out.nValue) ||
	// !MoneyRange(nValueIn) → "bad-txns-inputvalues-outofrange").
	e := newEnv(t)
	a := utxo.Outpoint{Hash: wire.Hash{0xaa}, Index: 0}
	b := utxo.Outpoint{Hash: wire.Hash{0xbb}, Index: 1}
	for _, c := range []struct {
		name  string
		view  mapView
		inOps []utxo.Outpoint
	}{
		{"sum", mapView{a: {Value: validate.MaxMoney, Height: 1, Script: blockgen.OpTrue}, b: {Value: 1, Height: 1, Script: blockgen.OpTrue}}, []utxo.Outpoint{a, b}},
		{"single", mapView{a: {Value: validate.MaxMoney + 1, Height: 1, Script: blockgen.OpTrue}}, []utxo.Outpoint{a}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ops []btcwire.OutPoint
			for _, op := range c.inOps {
				ops = append(ops, btcwire.OutPoint{Hash: chainhash.Hash(op.Hash), Index: op.Index})
			}
			tpl := e.template()
			tpl.AddTx(blockgen.Spend(ops, blockgen.Out(1, blockgen.OpTrue)))
			blk, err := wire.ParseBlock(finishRaw(tpl))
			if err != nil {
				t.Fatal(err)
			}
			d, err := e.v.ConnectBlock(blk, e.tipNode(), c.view)
			if got := validate.Reason(err); got != "bad-txns-inputvalues-outofrange" {
				t.Fatalf("reason %q (%v), want bad-txns-inputvalues-outofrange", got, err)
			}
			if d != nil {
				t.Fatal("delta returned with error")
			}
		})
	}
}

func TestRejectBIP30(t *testing.T) {
	// Re-including fund (mined at 102, outputs unspent) would overwrite its
	// coins: Core enforces BIP30 on regtest (BIP34Hash is not set, so the
	// BIP34 shortcut never applies). BIP30 is checked before the inputs, so
	// the reason is bad-txns-BIP30 although fund's input is spent.
	e := newEnv(t)
	tpl := e.template()
	tpl.AddTx(e.base.fund.Copy())
	e.reject(finishRaw(tpl), "bad-txns-BIP30")
}

func TestRejectBadSignature(t *testing.T) {
	t.Run("P2PKH corrupted signature", func(t *testing.T) {
		e := newEnv(t)
		tx := e.spendCB(2, 1000)
		// scriptSig: <sig> <pubkey>; flip a bit of s inside the DER.
		tx.TxIn[0].SignatureScript[10] ^= 1
		tpl := withFee(e.template(), 1000)
		tpl.AddTx(tx)
		e.reject(finishRaw(tpl), scriptEvalFalse)
	})
	t.Run("P2PKH wrong key", func(t *testing.T) {
		e := newEnv(t)
		op, prev := e.coinbaseOut(2)
		tx := blockgen.Spend([]btcwire.OutPoint{op}, blockgen.Out(prev.Value-1000, blockgen.OpTrue))
		if err := e.base.other.SignP2PKH(tx, 0, prev.Script); err != nil {
			t.Fatal(err)
		}
		tpl := withFee(e.template(), 1000)
		tpl.AddTx(tx)
		e.reject(finishRaw(tpl), "block-script-verify-flag-failed (Script failed an OP_EQUALVERIFY operation)")
	})
	t.Run("P2PKH signature for other outputs", func(t *testing.T) {
		e := newEnv(t)
		tx := e.spendCB(2, 1000)
		tx.TxOut[0].Value-- // signature no longer commits to the outputs
		tpl := withFee(e.template(), 1001)
		tpl.AddTx(tx)
		e.reject(finishRaw(tpl), scriptEvalFalse)
	})
	t.Run("P2WPKH corrupted signature", func(t *testing.T) {
		e := newEnv(t)
		op, prev := e.fundOut(1)
		tx := e.spendP2WPKH([]btcwire.OutPoint{op}, []blockgen.Prevout{prev}, blockgen.Out(prev.Value-1000, blockgen.OpTrue))
		tx.TxIn[0].Witness[0][8] ^= 1
		tpl := withFee(e.template(), 1000)
		tpl.AddTx(tx)
		e.reject(finishRaw(tpl), scriptEvalFalse)
	})
	t.Run("P2WPKH wrong amount signed", func(t *testing.T) {
		// BIP143 commits to the spent amount.
		e := newEnv(t)
		op, prev := e.fundOut(1)
		wrong := prev
		wrong.Value++
		tx := blockgen.Spend([]btcwire.OutPoint{op}, blockgen.Out(prev.Value-1000, blockgen.OpTrue))
		if err := e.base.key.SignP2WPKH(tx, 0, []blockgen.Prevout{wrong}); err != nil {
			t.Fatal(err)
		}
		tpl := withFee(e.template(), 1000)
		tpl.AddTx(tx)
		e.reject(finishRaw(tpl), scriptEvalFalse)
	})
	t.Run("P2WPKH good, then the failing input second", func(t *testing.T) {
		e := newEnv(t)
		op0, prev0 := e.fundOut(0)
		op1, prev1 := e.fundOut(1)
		prevs := []blockgen.Prevout{prev0, prev1}
		tx := e.spendP2WPKH([]btcwire.OutPoint{op0, op1}, prevs, blockgen.Out(prev0.Value+prev1.Value-1000, blockgen.OpTrue))
		tx.TxIn[1].Witness[0][8] ^= 1
		tpl := withFee(e.template(), 1000)
		tpl.AddTx(tx)
		e.reject(finishRaw(tpl), scriptEvalFalse)
	})
}

// ---- Mainnet blocks (testdata/mainnet/blk_0_to_14131.dat) ----

// TestRejectMutatedMainnetBlock loads mainnet blocks up to the first with
// an odd number (≥ 3) of transactions and checks the two merkle reasons on
// real data: appending a copy of the last transaction (same root,
// CVE-2012-2459) gives bad-txns-duplicate, and changing a transaction gives
// bad-txnmrklroot; neither marks the header invalid, so the real block is
// accepted afterwards.
func TestRejectMutatedMainnetBlock(t *testing.T) {
	if testing.Short() {
		t.Skip("replays mainnet blocks")
	}
	f, err := os.Open("../testdata/mainnet/blk_0_to_14131.dat")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	e := newMainnetEnv(t)
	r := wire.NewBlockFileReader(f, [4]byte{0xf9, 0xbe, 0xb4, 0xd9})
	for {
		raw, _, err := r.Next()
		if err != nil {
			t.Fatalf("no suitable block found: %v", err)
		}
		raw = bytes.Clone(raw)
		b, err := wire.ParseBlock(raw)
		if err != nil {
			t.Fatal(err)
		}
		if b.Header.PrevBlock == (wire.Hash{}) {
			continue // genesis
		}
		if n := len(b.Txs); n >= 3 && n%2 == 1 {
			checkMainnetMutations(t, e, raw, b)
			return
		}
		if _, err := e.cs.ProcessBlock(raw); err != nil {
			t.Fatalf("mainnet block %s: %v", b.Hash, err)
		}
	}
}

func checkMainnetMutations(t *testing.T, e *env, raw []byte, b *wire.Block) {
	t.Helper()
	if int(raw[80]) != len(b.Txs) {
		t.Skipf("transaction count of %s is not a one-byte CompactSize", b.Hash)
	}
	t.Logf("mutating mainnet block %s (%d txs)", b.Hash, len(b.Txs))

	// Same root, same hash: append a copy of the last transaction.
	last := b.Txs[len(b.Txs)-1].Raw
	dup := append([]byte{}, raw[:80]...)
	dup = append(dup, byte(len(b.Txs)+1))
	dup = append(dup, raw[81:]...)
	dup = append(dup, last...)
	if d, err := wire.ParseBlock(dup); err != nil || d.Hash != b.Hash {
		t.Fatalf("duplicated block: %v", err)
	}
	e.reject(dup, "bad-txns-duplicate")

	// Change the last transaction's locktime (the block's last 4 bytes)
	// to 1, which is final at any height above 1: its txid changes.
	mut := bytes.Clone(raw)
	binary.LittleEndian.PutUint32(mut[len(mut)-4:], 1)
	e.reject(mut, "bad-txnmrklroot")

	e.accept(raw)
}

// txOutputsView is mapView with the utxo.TxOutputsView extension, counting
// its calls, so the BIP30 check's one-lookup-per-transaction path is
// compared with Core's per-output HaveCoin loop on the same coins.
type txOutputsView struct {
	mapView
	calls int
}

func (v *txOutputsView) AnyUnspent(txid wire.Hash, n uint32) (bool, error) {
	v.calls++
	for op := range v.mapView {
		if op.Hash == txid && op.Index < n {
			return true, nil
		}
	}
	return false, nil
}

func TestBIP30PerTransactionView(t *testing.T) {
	e := newEnv(t)
	in := utxo.Outpoint{Hash: wire.Hash{0xaa}, Index: 0}
	spend := blockgen.Spend([]btcwire.OutPoint{{Hash: chainhash.Hash(in.Hash), Index: in.Index}},
		blockgen.Out(1000, blockgen.OpTrue), blockgen.Out(1000, blockgen.OpTrue), blockgen.Out(1000, blockgen.OpTrue))
	tpl := e.template()
	tpl.AddTx(spend)
	blk, err := wire.ParseBlock(finishRaw(tpl))
	if err != nil {
		t.Fatal(err)
	}
	txid := blk.Txs[1].TxID
	coin := utxo.Coin{Value: 5000, Height: 1, Script: blockgen.OpTrue}
	for _, c := range []struct {
		name   string
		extra  []uint32 // unspent output indexes of txid in the view
		reason string
	}{
		{"no earlier copy", nil, ""},
		{"last output unspent", []uint32{2}, "bad-txns-BIP30"},
		{"first output unspent", []uint32{0}, "bad-txns-BIP30"},
		// Not a real chain (one txid, one output count), but Core asks
		// only for indexes below the transaction's output count.
		{"only an index past the outputs", []uint32{3}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := mapView{in: coin}
			for _, i := range c.extra {
				m[utxo.Outpoint{Hash: txid, Index: i}] = coin
			}
			per := &txOutputsView{mapView: m}
			for _, view := range []utxo.View{m, per} {
				_, err := e.v.ConnectBlock(blk, e.tipNode(), view)
				if got := validate.Reason(err); got != c.reason || (c.reason == "") != (err == nil) {
					t.Fatalf("%T: reason %q (%v), want %q", view, got, err, c.reason)
				}
			}
			if per.calls == 0 {
				t.Fatal("the per-transaction lookup was not used")
			}
		})
	}
}
