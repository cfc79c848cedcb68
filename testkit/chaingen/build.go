package chaingen

import (
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/testkit/blockgen"
	"utxod/wire"
)

// inPlan is what a signer needs for one input.
type inPlan struct {
	c        coin
	pkScript []byte
	hashType txscript.SigHashType
	leaf     int8  // kP2TRScript: -1 key path, 0/1 script leaf
	pair     uint8 // kP2WSHMulti: 0 keys (0,1), 1 (0,2), 2 (1,2)
}

// newCoin is an output created in the block under construction.
type newCoin struct {
	c     coin
	tx    int32
	known bool // txid known before signing (all inputs segwit)
	spent bool // spent later in the same block
}

// blockBuilder assembles one block on a state.
type blockBuilder struct {
	g       *Generator
	st      *state
	height  int32
	mtpPrev uint32

	txs   []*btcwire.MsgTx
	plans [][]inPlan
	txids [][32]byte
	known []bool

	newCoins []newCoin
	fresh    []int // newCoins indices spendable later in this block

	weight, sigops int
	fees           int64
	budget         int // pool coins this block may still spend
}

const (
	maxSigopsCost = 79_000 // below Core's MAX_BLOCK_SIGOPS_COST 80,000 (coinbase room)
	coinbaseRoom  = 1_000  // weight reserved for the coinbase
)

// block builds, signs, solves and writes one block on st and advances st.
func (g *Generator) block(st *state) error {
	r := g.rng
	b := &blockBuilder{g: g, st: st, height: st.height + 1, mtpPrev: st.mtp()}
	t := g.nextTime(st, b.mtpPrev)

	// Coinbase outputs mature COINBASE_MATURITY blocks later (Core:
	// nSpendHeight - coin.nHeight >= COINBASE_MATURITY).
	mat := g.p.CoinbaseMaturity
	for len(st.immature) > 0 && b.height-st.immature[0].height >= mat {
		st.pool = append(st.pool, st.immature[0])
		st.immature = st.immature[1:]
	}
	for i := 0; i < len(st.locked); {
		if st.locked[i].unlocked(b.height, b.mtpPrev) {
			st.pool = append(st.pool, st.locked[i])
			st.locked[i] = st.locked[len(st.locked)-1]
			st.locked = st.locked[:len(st.locked)-1]
			continue
		}
		i++
	}

	b.txs = []*btcwire.MsgTx{nil}
	b.plans = [][]inPlan{nil}
	b.txids = [][32]byte{{}}
	b.known = []bool{false}
	b.weight = 4*(80+5) + coinbaseRoom

	// Block fill: the mean grows linearly to half the weight limit at
	// g.ramp; each block draws uniformly up to twice the mean, one in 50
	// (past ramp/10) is filled to the limit.
	mean := float64(g.maxW) / 2 * min(1, float64(b.height)/float64(g.ramp))
	target := int(mean * 2 * r.Float64())
	if r.IntN(50) == 0 && b.height > int32(g.ramp/10) {
		target = g.maxW // now and then a full block
	}
	if g.burying {
		target = 0
	}
	frac := 0.3
	if g.modern {
		frac = 0.5
	}
	b.budget = int(float64(len(st.pool))*frac) + 1
	for b.weight < target && (g.cfg.MaxTxs == 0 || len(b.txs)-1 < g.cfg.MaxTxs) {
		var ok bool
		if g.modern {
			ok = b.modernTx(target)
		} else {
			ok = b.earlyTx(target)
		}
		if !ok {
			break
		}
	}

	if err := g.signAll(b.txs, b.plans, b.txids); err != nil {
		return err
	}

	// Coinbase: subsidy + fees, BIP34 height, a branch tag so competing
	// blocks at one height differ.
	subsidy := g.p.Subsidy(b.height)
	cbKind := kP2PKU
	if g.modern {
		cbKind = kP2WPKH
		if r.IntN(4) == 0 {
			cbKind = kP2TRKey
		}
	} else if r.IntN(3) == 0 {
		cbKind = kP2PKH
	}
	cbKey := uint32(r.IntN(len(g.keys.keys)))
	cb := blockgen.NewCoinbase(b.height, subsidy+b.fees, g.keys.pkScript(cbKind, int(cbKey), 0))
	if g.branchID != 0 {
		cb.TxIn[0].SignatureScript = append(cb.TxIn[0].SignatureScript,
			pushData([]byte{byte(g.branchID), byte(g.branchID >> 8), byte(g.branchID >> 16), byte(g.branchID >> 24)})...)
	}
	if !g.modern {
		cb.Version = 1
	}
	b.txs[0] = cb

	var blk btcwire.MsgBlock
	blk.Header.Version = blockgen.DefaultVersion
	blk.Header.PrevBlock = chainhash.Hash(st.tip)
	blk.Header.Bits = g.p.PowLimitBits
	blk.Header.Timestamp = unixTime(int64(t))
	blk.Transactions = b.txs
	if blockgen.HasWitness(b.txs[1:]) {
		blockgen.AddWitnessCommitment(&blk)
	}
	b.txids[0] = cb.TxHash()
	blk.Header.MerkleRoot = chainhash.Hash(merkleRoot(b.txids))
	if err := blockgen.Solve(&blk.Header); err != nil {
		return err
	}
	if err := g.writeBlock(&blk); err != nil {
		return err
	}

	// Advance the state.
	st.height = b.height
	st.tip = blk.Header.BlockHash()
	st.pushTime(t)
	st.txs += int64(len(b.txs))
	st.outputs += int64(len(cb.TxOut))
	st.amount += subsidy
	st.immature = append(st.immature, coin{txid: b.txids[0], value: cb.TxOut[0].Value, height: b.height,
		mtp: b.mtpPrev, key: cbKey, kind: cbKind, coinbase: true})
	for i := range b.newCoins {
		nc := &b.newCoins[i]
		if nc.spent {
			continue
		}
		if !nc.known {
			nc.c.txid = b.txids[nc.tx]
		}
		if nc.c.kind.locked() && !nc.c.unlocked(b.height+1, st.mtp()) {
			st.locked = append(st.locked, nc.c)
		} else {
			st.pool = append(st.pool, nc.c)
		}
	}
	for _, tx := range b.txs[1:] {
		st.inputs += int64(len(tx.TxIn))
		st.outputs += int64(len(tx.TxOut))
		g.fileInputs += int64(len(tx.TxIn))
	}
	g.fileTxs += int64(len(b.txs))
	return nil
}

// pick removes a coin from the pool: half the time uniformly, half the
// time from the newest tenth (recent coins are spent more often).
func (b *blockBuilder) pick() (coin, bool) {
	p := b.st.pool
	n := len(p)
	if n == 0 || b.budget <= 0 {
		return coin{}, false
	}
	var i int
	if b.g.rng.IntN(2) == 0 {
		i = b.g.rng.IntN(n)
	} else {
		i = n - 1 - b.g.rng.IntN(max(1, n/10))
	}
	c := p[i]
	p[i] = p[n-1]
	b.st.pool = p[:n-1]
	b.budget--
	return c, true
}

// putBack returns coins taken by pick (or pickFresh) to where they came
// from.
func (b *blockBuilder) putBack(ins []spendIn) {
	for _, in := range ins {
		if in.fresh >= 0 {
			b.newCoins[in.fresh].spent = false
			b.fresh = append(b.fresh, in.fresh)
			continue
		}
		b.st.pool = append(b.st.pool, in.c)
		b.budget++
	}
}

// pickFresh takes an output created earlier in this block.
func (b *blockBuilder) pickFresh() (spendIn, bool) {
	n := len(b.fresh)
	if n == 0 {
		return spendIn{}, false
	}
	j := b.g.rng.IntN(n)
	idx := b.fresh[j]
	b.fresh[j] = b.fresh[n-1]
	b.fresh = b.fresh[:n-1]
	b.newCoins[idx].spent = true
	return spendIn{c: b.newCoins[idx].c, fresh: idx}, true
}

type spendIn struct {
	c     coin
	fresh int // newCoins index, -1 for a pool coin
}

type outSpec struct {
	kind  kind
	key   uint32
	lock  uint32
	value int64
	data  []byte // OP_RETURN payload (kind ignored)
	ret   bool
}

// txWeight is an upper bound of the weight of a transaction with these
// inputs and output scripts.
func txWeight(ins []spendIn, outScripts [][]byte) (weight, sigops int) {
	base := 8 + wire.CompactSizeLen(uint64(len(ins))) + wire.CompactSizeLen(uint64(len(outScripts)))
	wit := 0
	seg := false
	for _, in := range ins {
		bs, ws := inputSize(in.c.kind)
		base += bs
		wit += ws
		if in.c.kind.segwit() {
			seg = true
		}
		sigops += inputSigops(in.c.kind)
	}
	for _, s := range outScripts {
		base += 8 + wire.CompactSizeLen(uint64(len(s))) + len(s)
	}
	if !seg {
		wit = 0
	} else {
		wit += 2
	}
	return 4*base + wit, sigops
}

// splitValue divides total into n positive parts with random weights.
func (b *blockBuilder) splitValue(total int64, n int) []int64 {
	r := b.g.rng
	w := make([]int64, n)
	var sum int64
	for i := range w {
		w[i] = 1 + int64(r.IntN(1000))
		sum += w[i]
	}
	out := make([]int64, n)
	left := total
	for i := 0; i < n-1; i++ {
		v := total * w[i] / sum
		if v < 1 {
			v = 1
		}
		out[i] = v
		left -= v
	}
	out[n-1] = left
	return out
}

// earlyTx adds a 2009–2012-style payment: 1–3 inputs, usually a payment and
// a change output, P2PKH/P2PK with mostly uncompressed keys, version 1, no
// lock time, fees of 0, 0.0005 BTC or a small random amount.
func (b *blockBuilder) earlyTx(target int) bool {
	r := b.g.rng
	nIn := 1
	switch x := r.IntN(100); {
	case x >= 85:
		nIn = 3
	case x >= 65:
		nIn = 2
	}
	var ins []spendIn
	var sum int64
	for range nIn {
		c, ok := b.pick()
		if !ok {
			break
		}
		ins = append(ins, spendIn{c: c, fresh: -1})
		sum += c.value
	}
	if len(ins) == 0 {
		return false
	}
	nOut := 2
	switch x := r.IntN(100); {
	case x < 15:
		nOut = 1
	case x >= 96:
		nOut = 3 + r.IntN(3)
	}
	var fee int64
	switch x := r.IntN(10); {
	case x < 4:
		fee = 0
	case x < 8:
		fee = 50_000
	default:
		fee = 1 + int64(r.IntN(100_000))
	}
	fee = min(fee, sum/4)
	if sum-fee < int64(nOut)*1000 {
		nOut = 1
	}
	outs := make([]outSpec, nOut)
	vals := b.splitValue(sum-fee, nOut)
	for i := range outs {
		k := kP2PKHU
		switch x := r.IntN(100); {
		case x < 30:
			k = kP2PKH
		case x < 40:
			k = kP2PKU
		case x < 45:
			k = kP2PK
		}
		outs[i] = outSpec{kind: k, key: uint32(r.IntN(len(b.g.keys.keys))), value: vals[i]}
	}
	return b.addTx(ins, outs, 1, 0, fee, target, nil)
}

// modernTx adds one transaction of the modern profile.
func (b *blockBuilder) modernTx(target int) bool {
	r := b.g.rng
	st := b.st
	nIn := 1
	switch x := r.IntN(100); {
	case x >= 95:
		nIn = 4
	case x >= 85:
		nIn = 3
	case x >= 60:
		nIn = 2
	}
	nOut := 2
	switch x := r.IntN(100); {
	case x < 20:
		nOut = 1
	case x >= 85:
		nOut = 3 + r.IntN(2)
	}
	cover := -1
	switch x := r.IntN(100); {
	case x < 3 && len(st.pool) >= 200 && b.budget >= 30:
		nIn, nOut, cover = 10+r.IntN(21), 1, covConsolidation
	case x < 9:
		nIn, nOut, cover = 1, 10+r.IntN(31), covFanOut
	}
	var ins []spendIn
	var sum int64
	if len(b.fresh) > 0 && r.IntN(4) == 0 {
		in, _ := b.pickFresh()
		ins = append(ins, in)
		sum += in.c.value
	}
	// CLTV inputs of one transaction must agree on the lock type; a
	// conflicting coin goes back to the pool.
	lockType := 0 // 1 height, 2 time
	var lockTime uint32
	var conflicts []spendIn
	for len(ins) < nIn {
		c, ok := b.pick()
		if !ok {
			break
		}
		in := spendIn{c: c, fresh: -1}
		if c.kind == kCLTV {
			lt := 1
			if c.lock >= locktimeThreshold {
				lt = 2
			}
			if lockType != 0 && lockType != lt {
				conflicts = append(conflicts, in)
				continue
			}
			lockType = lt
			lockTime = max(lockTime, c.lock)
		}
		ins = append(ins, in)
		sum += c.value
	}
	b.putBack(conflicts)
	if len(ins) == 0 {
		return false
	}
	if cover == covConsolidation && len(ins) < 10 {
		cover = -1
	}
	if cover == covFanOut && sum < int64(nOut)*20_000 {
		nOut = int(max(1, min(int64(nOut), sum/20_000)))
		if nOut < 10 {
			cover = -1
		}
	}

	// Outputs.
	outs := make([]outSpec, 0, nOut+1)
	for range nOut {
		o := outSpec{key: uint32(r.IntN(len(b.g.keys.keys)))}
		switch x := r.IntN(100); {
		case x < 33:
			o.kind = kP2WPKH
		case x < 45:
			o.kind = kP2SHWPKH
		case x < 54:
			o.kind = kP2WSHMulti
		case x < 68:
			o.kind = kP2TRKey
		case x < 77:
			o.kind = kP2TRScript
		case x < 84:
			o.kind = kCLTV
			if r.IntN(2) == 0 {
				o.lock = uint32(b.height) + uint32(r.IntN(6))
			} else {
				o.lock = b.mtpPrev + uint32(r.IntN(7200))
			}
		case x < 91:
			o.kind = kCSV
			if r.IntN(2) == 0 {
				o.lock = 1 + uint32(r.IntN(5))
			} else {
				o.lock = seqTypeFlag | (1 + uint32(r.IntN(4)))
			}
		default:
			o.kind = kP2PKH
		}
		outs = append(outs, o)
	}
	if r.IntN(10) == 0 {
		data := make([]byte, 1+r.IntN(80))
		for i := range data {
			data[i] = byte(r.IntN(256))
		}
		outs = append(outs, outSpec{ret: true, data: data})
	}
	// Fee: 1–20 sat/vB of the weight bound, at most a quarter of the inputs.
	scripts := b.scripts(outs)
	w, _ := txWeight(ins, scripts)
	fee := min(int64((w+3)/4)*int64(1+r.IntN(20)), sum/4)
	spendable := 0
	for _, o := range outs {
		if !o.ret {
			spendable++
		}
	}
	if sum-fee < int64(spendable) {
		outs = outs[:1]
		outs[0].ret = false
		spendable = 1
	}
	vals := b.splitValue(sum-fee, spendable)
	j := 0
	for i := range outs {
		if !outs[i].ret {
			outs[i].value = vals[j]
			j++
		}
	}

	// Version, lock time and sequences.
	version := int32(2)
	needV2 := false
	for _, in := range ins {
		if in.c.kind == kCSV {
			needV2 = true
		}
	}
	if !needV2 && r.IntN(20) == 0 {
		version = 1
	}
	var lt uint32
	switch {
	case lockType != 0:
		lt = lockTime
	case r.IntN(4) == 0:
		lt = uint32(b.height - 1) // anti-fee-sniping
	case r.IntN(12) == 0:
		lt = b.mtpPrev - 1 - uint32(r.IntN(3600)) // time lock, final by BIP113
	}
	seqs := make([]uint32, len(ins))
	for i, in := range ins {
		switch {
		case in.c.kind == kCSV:
			seqs[i] = in.c.lock
		case version >= 2 && r.IntN(8) == 0:
			// BIP68 relative lock that already holds.
			if r.IntN(2) == 0 {
				age := int64(b.height) - int64(in.c.height)
				seqs[i] = uint32(r.Int64N(min(age, 20) + 1))
				st.cover[covBIP68Height]++
			} else {
				avail := (int64(b.mtpPrev) - int64(in.c.mtp)) >> seqGranularity
				seqs[i] = seqTypeFlag | uint32(r.Int64N(min(max(avail, 0), 5)+1))
				st.cover[covBIP68Time]++
			}
		case lt != 0 || in.c.kind == kCLTV:
			seqs[i] = 0xfffffffd
		default:
			seqs[i] = 0xffffffff
		}
	}
	if lt != 0 && lockType == 0 {
		if lt < locktimeThreshold {
			st.cover[covLocktimeHeight]++
		} else {
			st.cover[covLocktimeTime]++
		}
	}
	if cover >= 0 {
		st.cover[cover]++
	}
	return b.addTx(ins, outs, version, lt, fee, target, seqs)
}

// scripts returns the output scripts of outs.
func (b *blockBuilder) scripts(outs []outSpec) [][]byte {
	s := make([][]byte, len(outs))
	for i, o := range outs {
		if o.ret {
			s[i] = append([]byte{txscript.OP_RETURN}, pushData(o.data)...)
			continue
		}
		s[i] = b.g.keys.pkScript(o.kind, int(o.key), o.lock)
	}
	return s
}

// addTx builds the transaction, checks it fits the block (otherwise the
// inputs go back and it returns false), plans its signatures and records
// its outputs.
func (b *blockBuilder) addTx(ins []spendIn, outs []outSpec, version int32, lockTime uint32, fee int64, target int, seqs []uint32) bool {
	g := b.g
	r := g.rng
	scripts := b.scripts(outs)
	w, sigops := txWeight(ins, scripts)
	for _, o := range outs {
		if !o.ret {
			sigops += outputSigops(o.kind)
		}
	}
	if b.weight+w > g.maxW || b.sigops+sigops > maxSigopsCost || (b.weight+w > target && len(b.txs) > 1) {
		b.putBack(ins)
		return false
	}
	b.weight += w
	b.sigops += sigops
	b.fees += fee

	tx := btcwire.NewMsgTx(version)
	tx.LockTime = lockTime
	plan := make([]inPlan, len(ins))
	allSeg := true
	st := b.st
	for i, in := range ins {
		c := in.c
		seq := uint32(0xffffffff)
		if seqs != nil {
			seq = seqs[i]
		}
		txin := &btcwire.TxIn{PreviousOutPoint: btcwire.OutPoint{Hash: chainhash.Hash(c.txid), Index: c.vout}, Sequence: seq}
		p := inPlan{c: c, pkScript: g.keys.pkScript(c.kind, int(c.key), c.lock), hashType: txscript.SigHashAll, leaf: -1}
		if !c.kind.segwit() {
			allSeg = false
		}
		if c.kind == kP2SHWPKH {
			txin.SignatureScript = pushData(p2wpkh(g.keys.at(int(c.key)).hashC))
		}
		if g.modern {
			p.hashType = b.pickHashType(c.kind, i, len(outs))
			switch c.kind {
			case kP2TRScript:
				p.leaf = int8(r.IntN(3)) - 1
				if p.leaf < 0 {
					st.cover[covTRScriptKey]++
				}
				g.keys.tree(int(c.key))
			case kP2WSHMulti:
				p.pair = uint8(r.IntN(3))
			}
		}
		st.cover[int(c.kind)]++
		age := b.height - c.height
		for j := len(ageBuckets) - 1; j >= 0; j-- {
			if age >= ageBuckets[j] {
				st.ages[j]++
				break
			}
		}
		if c.coinbase {
			st.cover[covCoinbaseSpend]++
		}
		if in.fresh >= 0 {
			st.cover[covSameBlock]++
		}
		switch c.kind {
		case kCLTV:
			if c.lock < locktimeThreshold {
				st.cover[covCLTVHeight]++
			} else {
				st.cover[covCLTVTime]++
			}
		case kCSV:
			if c.lock&seqTypeFlag == 0 {
				st.cover[covCSVHeight]++
			} else {
				st.cover[covCSVTime]++
			}
		}
		tx.AddTxIn(txin)
		plan[i] = p
	}
	for i, o := range outs {
		tx.AddTxOut(&btcwire.TxOut{Value: o.value, PkScript: scripts[i]})
		if o.ret {
			st.cover[covOpReturn]++
			st.unspendable++
		}
	}
	idx := int32(len(b.txs))
	b.txs = append(b.txs, tx)
	b.plans = append(b.plans, plan)
	b.txids = append(b.txids, [32]byte{})
	var txid [32]byte
	if allSeg {
		txid = tx.TxHash()
	}
	b.known = append(b.known, allSeg)
	for i, o := range outs {
		if o.ret {
			continue
		}
		nc := newCoin{c: coin{txid: txid, value: o.value, vout: uint32(i), height: b.height, mtp: b.mtpPrev,
			lock: o.lock, key: o.key, kind: o.kind}, tx: idx, known: allSeg}
		b.newCoins = append(b.newCoins, nc)
		if allSeg && g.modern && !o.kind.locked() {
			b.fresh = append(b.fresh, len(b.newCoins)-1)
		}
	}
	return true
}

// pickHashType: mostly SIGHASH_ALL (ECDSA) or SIGHASH_DEFAULT (taproot),
// sometimes another type. SIGHASH_SINGLE only where an output of the same
// index exists (legacy would sign the constant 1; taproot would fail).
func (b *blockBuilder) pickHashType(k kind, idx, nOut int) txscript.SigHashType {
	r := b.g.rng
	taproot := k == kP2TRKey || k == kP2TRScript
	if r.IntN(10) != 0 {
		if taproot {
			return txscript.SigHashDefault
		}
		return txscript.SigHashAll
	}
	types := []txscript.SigHashType{txscript.SigHashAll | txscript.SigHashAnyOneCanPay, txscript.SigHashNone,
		txscript.SigHashNone | txscript.SigHashAnyOneCanPay}
	if taproot {
		types = append(types, txscript.SigHashAll)
	}
	if idx < nOut {
		types = append(types, txscript.SigHashSingle, txscript.SigHashSingle|txscript.SigHashAnyOneCanPay)
	}
	b.st.cover[covSighashOther]++
	return types[r.IntN(len(types))]
}
