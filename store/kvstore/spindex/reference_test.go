package spindex

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/params"
	"utxod/testkit/blockgen"
	"utxod/testkit/chaingen"
	"utxod/testkit/testchain"
	"utxod/wire"
)

// referenceDir holds BIP352's Python reference (fetch.sh) and the driver
// tweaks.py.
var referenceDir = filepath.Join("..", "..", "..", "testdata", "bip352", "reference")

// TestTweaksMatchBIP352Reference is the differential test of the index
// against an independent computation, BIP352's Python reference
// implementation (bitcoin/bips bip-0352/reference.py with secp256k1lab,
// through testdata/bip352/reference/tweaks.py): a modern-profile chain with
// reorganisations, then crafted blocks with every input kind and edge case
// the BIP names (P2TR key and script path, annexes, the NUMS internal key,
// P2WPKH, P2SH-P2WPKH, P2PKH with standard and malleated scriptSigs,
// uncompressed keys, spent SegWit v2 outputs, keys summing to infinity, an
// intermediate sum of zero, the smallest outpoint by serialization rather
// than by vout) and a reorganisation among them, are connected with the
// index on; every row of the index must carry the tweak the reference
// computes for the active chain's transactions, and the index must have a
// row for exactly the transactions the reference finds eligible. The
// expected tweaks come from the reference only.
func TestTweaksMatchBIP352Reference(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: the differential test against BIP352's Python reference does not run")
	}
	for _, f := range []string{"reference.py", "bitcoin_utils.py", "secp256k1lab/src/secp256k1lab/secp256k1.py"} {
		if _, err := os.Stat(filepath.Join(referenceDir, f)); err != nil {
			t.Skipf("BIP352's Python reference is not in testdata/bip352/reference (sh testdata/bip352/reference/fetch.sh puts it there): %v", err)
		}
	}
	p := params.RegTest()
	n := 120 // generated blocks (UTXOD_BIP352_REFERENCE_BLOCKS: more)
	if v, err := strconv.Atoi(os.Getenv("UTXOD_BIP352_REFERENCE_BLOCKS")); err == nil && v > 0 {
		n = v
	}
	raws := testchain.Generated(t, chaingen.ProfileModern, n, 3+n/100)
	kv := testchain.OpenKV(t, "pebble", filepath.Join(t.TempDir(), "pebble"))
	defer kv.Close()
	ix, err := Create(kv, p.GenesisHash)
	if err != nil {
		t.Fatal(err)
	}
	st := openIndexedStore(t, kv, 256<<10, ix)
	defer st.Close()
	cs := newChainstate(t, st)
	known := map[wire.Hash][]byte{}
	for i, raw := range raws {
		res, err := cs.ProcessBlock(raw)
		if err != nil {
			t.Fatalf("generated block %d: %v", i, err)
		}
		known[res.Hash] = raw
	}

	// The crafted blocks extend the generated chain's tip.
	bg, err := blockgen.NewChain(p)
	if err != nil {
		t.Fatal(err)
	}
	node := bg.Genesis
	for _, h := range csChain(t, cs)[1:] {
		var mb btcwire.MsgBlock
		if err := mb.Deserialize(bytes.NewReader(known[h])); err != nil {
			t.Fatal(err)
		}
		node = bg.Add(node, &mb)
	}
	submit := func(n *blockgen.Node, want string) {
		t.Helper()
		res, err := cs.ProcessBlock(n.Raw)
		if err != nil {
			t.Fatalf("crafted block at height %d: %v", n.Height, err)
		}
		if string(res.Status) != want {
			t.Fatalf("crafted block at height %d: %s, want %s", n.Height, res.Status, want)
		}
		known[n.Hash] = n.Raw
	}
	w := &craftWallet{}
	fund := bg.Template(node, nil)
	fund.Coinbase().TxOut = w.fundingOutputs(t, p.Subsidy(fund.Height))
	fundNode := fund.Finish()
	w.funded(blockgen.TxID(fund.Coinbase()))
	submit(fundNode, "connected")
	node = fundNode
	for range 100 { // coinbase maturity
		node = bg.Template(node, nil).Finish()
		submit(node, "connected")
	}
	mature := node

	// Branch A: one block with half the specs. Branch B, from the same
	// parent: every spec (spending the same coins differently), then a
	// block spending B's taproot outputs, some in their own block; B has
	// more work, so A's rows must go.
	specs := craftSpecs()
	wa := w.clone()
	a := bg.Template(mature, nil).AddTx(wa.build(t, specs[:len(specs)/2], "a", 1000)...).Finish()
	submit(a, "connected")
	wb := w.clone()
	b1txs := wb.build(t, specs, "b", 2000)
	b1 := bg.Template(mature, nil).AddTx(b1txs...).Finish()
	submit(b1, "side-branch")
	var b2txs []*btcwire.MsgTx
	for i := range 6 {
		c := wb.outputsOf(b1txs[i])[0]
		tx := wb.spend(t, []*craftCoin{c}, fmt.Sprintf("b2-%d", i), 500, false)
		b2txs = append(b2txs, tx)
		if i%2 == 0 { // spent in its own block
			b2txs = append(b2txs, wb.spend(t, wb.outputsOf(tx)[:1], fmt.Sprintf("b2-%d-child", i), 500, false))
		}
	}
	b2 := bg.Template(b1, nil).AddTx(b2txs...).Finish()
	submit(b2, "connected")
	if tip := cs.Tip(); tip.Hash != b2.Hash {
		t.Fatalf("tip %s at %d, want branch B's %s", tip.Hash, tip.Height, b2.Hash)
	}
	if err := cs.Flush(); err != nil {
		t.Fatal(err)
	}

	// The active chain's transactions with the scripts they spend.
	blocks := parsed(t, mapValues(known))
	chain := csChain(t, cs)
	type outKey struct {
		txid wire.Hash
		vout uint32
	}
	type refEntry struct {
		Tx       string   `json:"tx"`
		Prevouts []string `json:"prevouts"`
	}
	set := map[outKey][]byte{}
	var entries []refEntry
	for h := 1; h < len(chain); h++ {
		b := blocks[chain[h]]
		for i := range b.Txs {
			tx := &b.Txs[i]
			if i > 0 {
				e := refEntry{Tx: hex.EncodeToString(tx.Raw)}
				for _, in := range tx.Inputs {
					k := outKey{in.PrevHash, in.PrevIndex}
					s, ok := set[k]
					if !ok {
						t.Fatalf("height %d: %s spends unknown %s:%d", h, tx.TxID, in.PrevHash, in.PrevIndex)
					}
					e.Prevouts = append(e.Prevouts, hex.EncodeToString(s))
					delete(set, k)
				}
				entries = append(entries, e)
			}
			for v, o := range tx.Outputs {
				set[outKey{tx.TxID, uint32(v)}] = o.Script
			}
		}
	}
	in, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	inPath := filepath.Join(t.TempDir(), "transactions.json")
	if err := os.WriteFile(inPath, in, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, filepath.Join(referenceDir, "tweaks.py"), inPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tweaks.py: %v\n%s", err, stderr.String())
	}
	var ref struct {
		Tweaks []struct {
			Txid  string `json:"txid"`
			Tweak string `json:"tweak"`
		} `json:"tweaks"`
		Skipped map[string]int `json:"skipped"`
	}
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatalf("tweaks.py's answer: %v\n%s", err, out)
	}
	want := map[string]string{}
	for _, r := range ref.Tweaks {
		want[r.Txid] = r.Tweak
	}

	// Every row of the index, from its own read path.
	tip, got, err := ix.Blocks(context.Background(), 0, len(chain))
	if err != nil {
		t.Fatal(err)
	}
	if tip.Height != int32(len(chain)-1) || tip.Hash != chain[len(chain)-1] || tip.From != 1 {
		t.Fatalf("index tip %+v, chain at %d %s", tip, len(chain)-1, chain[len(chain)-1])
	}
	have := map[string]string{}
	for _, b := range got {
		if b.Hash != chain[b.Height] {
			t.Errorf("height %d: index block %s, chain %s", b.Height, b.Hash, chain[b.Height])
		}
		for _, r := range b.Rows {
			have[r.Txid.String()] = hex.EncodeToString(r.Tweak[:])
		}
	}
	compared := 0
	for txid, tw := range want {
		switch g, ok := have[txid]; {
		case !ok:
			t.Errorf("%s: the reference finds it eligible (tweak %s), the index has no row", txid, tw)
		case g != tw:
			t.Errorf("%s: index tweak %s, reference %s", txid, g, tw)
		default:
			compared++
		}
	}
	for txid, tw := range have {
		if _, ok := want[txid]; !ok {
			t.Errorf("%s: the index has a row (tweak %s), the reference finds it ineligible", txid, tw)
		}
	}

	// The crafted transactions are what their names say, by the
	// reference's verdict (so the chain exercises each edge case).
	for i, s := range specs {
		txid := blockgen.TxID(b1txs[i]).String()
		if _, ok := want[txid]; ok != s.eligible {
			t.Errorf("crafted %q: eligible by the reference %v, meant %v", s.name, ok, s.eligible)
		}
	}
	for _, reason := range []string{"no_taproot_output", "spends_segwit_v2_or_later", "no_input_key", "input_keys_sum_to_infinity"} {
		if ref.Skipped[reason] == 0 {
			t.Errorf("no transaction of the chain is skipped for %s: %v", reason, ref.Skipped)
		}
	}
	t.Logf("%d transactions on the active chain (height %d) given to the reference: %d tweaks compared equal, skipped %v",
		len(entries), len(chain)-1, compared, ref.Skipped)
}

func mapValues(m map[wire.Hash][]byte) [][]byte {
	out := make([][]byte, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// craftKind is how a crafted coin is locked and spent.
type craftKind int

const (
	kP2PKH              craftKind = iota // compressed key, standard scriptSig
	kP2PKHUncompressed                   // uncompressed key: not an input for shared secret derivation
	kP2PKHMalleated                      // <sig> <key> <other key> OP_DROP: the key is not the last 33 bytes
	kP2WPKH                              // compressed key
	kP2WPKHUncompressed                  // uncompressed key (valid by consensus): skipped
	kP2SHP2WPKH                          // nested P2WPKH
	kP2TRKey                             // BIP86 key path
	kP2TRScript                          // script path, internal key of the wallet
	kP2TRScriptAnnex                     // the same with an annex
	kNUMS                                // script path, internal key NUMS H: skipped
	kNUMSAnnex                           // the same with an annex
	kWitnessV2                           // OP_2 <32 bytes>: the transaction is skipped
	kP2WSH                               // P2WSH of OP_TRUE: no key
	nCraftKinds
)

// numsKey is BIP341's NUMS point H (even Y).
var numsKey = func() *btcec.PublicKey {
	k, err := btcec.ParsePubKey(append([]byte{2}, numsH[:]...))
	if err != nil {
		panic(err)
	}
	return k
}()

var numsH = [32]byte{
	0x50, 0x92, 0x9b, 0x74, 0xc1, 0xa0, 0x49, 0x54, 0xb7, 0x8b, 0x4b, 0x60, 0x35, 0xe9, 0x7a, 0x5e,
	0x07, 0x8a, 0x5a, 0x0f, 0x28, 0xec, 0x96, 0xd5, 0x47, 0xbf, 0xee, 0x9a, 0xce, 0x80, 0x3a, 0xc0,
}

// scriptTree is the two-leaf tree of the script-path kinds (OP_1, OP_2:
// both succeed without a signature).
var scriptTree = txscript.AssembleTaprootScriptTree(
	txscript.NewBaseTapLeaf([]byte{txscript.OP_1}), txscript.NewBaseTapLeaf([]byte{txscript.OP_2}))

type craftCoin struct {
	op    btcwire.OutPoint
	value int64
	kind  craftKind
	priv  *btcec.PrivateKey
	spk   []byte
}

func craftKey(seed string) *btcec.PrivateKey {
	sum := sha256.Sum256([]byte("bip352-reference/" + seed))
	priv, _ := btcec.PrivKeyFromBytes(sum[:])
	return priv
}

func negKey(k *btcec.PrivateKey) *btcec.PrivateKey {
	s := k.Key
	s.Negate()
	return btcec.PrivKeyFromScalar(&s)
}

func (c *craftCoin) internalKey() *btcec.PublicKey {
	if c.kind == kNUMS || c.kind == kNUMSAnnex {
		return numsKey
	}
	return c.priv.PubKey()
}

func p2tr(q *btcec.PublicKey) []byte {
	s, err := txscript.PayToTaprootScript(q)
	if err != nil {
		panic(err)
	}
	return s
}

func p2wpkh(pub []byte) []byte { return append([]byte{0x00, 0x14}, blockgen.Hash160(pub)...) }

func p2pkh(pub []byte) []byte {
	return append(append([]byte{0x76, 0xa9, 0x14}, blockgen.Hash160(pub)...), 0x88, 0xac)
}

func (c *craftCoin) script() []byte {
	var comp, unc []byte
	if c.priv != nil {
		comp, unc = c.priv.PubKey().SerializeCompressed(), c.priv.PubKey().SerializeUncompressed()
	}
	switch c.kind {
	case kP2PKH, kP2PKHMalleated:
		return p2pkh(comp)
	case kP2PKHUncompressed:
		return p2pkh(unc)
	case kP2WPKH:
		return p2wpkh(comp)
	case kP2WPKHUncompressed:
		return p2wpkh(unc)
	case kP2SHP2WPKH:
		return append(append([]byte{0xa9, 0x14}, blockgen.Hash160(p2wpkh(comp))...), 0x87)
	case kP2TRKey:
		return p2tr(txscript.ComputeTaprootKeyNoScript(c.priv.PubKey()))
	case kP2TRScript, kP2TRScriptAnnex, kNUMS, kNUMSAnnex:
		root := scriptTree.RootNode.TapHash()
		return p2tr(txscript.ComputeTaprootOutputKey(c.internalKey(), root[:]))
	case kWitnessV2:
		h := sha256.Sum256(comp)
		return append([]byte{0x52, 0x20}, h[:]...)
	case kP2WSH:
		h := sha256.Sum256([]byte{txscript.OP_TRUE})
		return append([]byte{0x00, 0x20}, h[:]...)
	}
	panic("unknown kind")
}

// craftSpec is one crafted transaction: the kinds of its inputs (or the
// funding vouts it spends), whether it has a taproot output, and whether
// the BIP makes it eligible.
type craftSpec struct {
	name      string
	ins       []craftKind
	vouts     []uint32
	noTaproot bool
	eligible  bool
}

// Funding vouts of special coins (after the nFunding kind-cycled ones).
const (
	nFunding = 300
	// vout 266 serializes as 0a010000, below vout 16's 10000000: the
	// smallest outpoint is not the smallest vout. 16 is a P2WPKH coin and
	// 266 a BIP86 one (266 mod 13 = 6).
	voutSmallA, voutSmallB = 16, 266
	vInfA, vInfNegA        = nFunding + 0, nFunding + 1 // P2WPKH k and -k
	vInfTR, vInfNegTR      = nFunding + 2, nFunding + 3 // BIP86 Q and P2WPKH -Q
	vMidA, vMidNegA, vMidB = nFunding + 4, nFunding + 5, nFunding + 6
)

func craftSpecs() []craftSpec {
	return []craftSpec{
		{name: "p2pkh", ins: []craftKind{kP2PKH}, eligible: true},
		{name: "p2tr-key", ins: []craftKind{kP2TRKey}, eligible: true},
		{name: "p2tr-script", ins: []craftKind{kP2TRScript}, eligible: true},
		{name: "p2wpkh", ins: []craftKind{kP2WPKH}, eligible: true},
		{name: "p2sh-p2wpkh", ins: []craftKind{kP2SHP2WPKH, kP2SHP2WPKH}, eligible: true},
		{name: "p2pkh-malleated", ins: []craftKind{kP2PKHMalleated}, eligible: true},
		{name: "p2pkh-malleated+p2tr", ins: []craftKind{kP2PKHMalleated, kP2TRKey}, eligible: true},
		{name: "p2pkh-uncompressed-only", ins: []craftKind{kP2PKHUncompressed}},
		{name: "p2pkh-uncompressed+p2wpkh", ins: []craftKind{kP2PKHUncompressed, kP2WPKH}, eligible: true},
		{name: "p2wpkh-uncompressed-only", ins: []craftKind{kP2WPKHUncompressed}},
		{name: "p2wpkh-uncompressed+p2tr", ins: []craftKind{kP2WPKHUncompressed, kP2TRKey}, eligible: true},
		{name: "p2tr-script-annex+p2wpkh", ins: []craftKind{kP2TRScriptAnnex, kP2WPKH}, eligible: true},
		{name: "nums-only", ins: []craftKind{kNUMS}},
		{name: "nums+p2wpkh", ins: []craftKind{kNUMS, kP2WPKH}, eligible: true},
		{name: "nums-annex+p2tr", ins: []craftKind{kNUMSAnnex, kP2TRKey}, eligible: true},
		{name: "nums-annex-only", ins: []craftKind{kNUMSAnnex}},
		{name: "v2-spent+p2wpkh", ins: []craftKind{kWitnessV2, kP2WPKH}},
		{name: "p2tr+v2-spent", ins: []craftKind{kP2TRKey, kWitnessV2}},
		{name: "p2wsh+p2wpkh", ins: []craftKind{kP2WSH, kP2WPKH}, eligible: true},
		{name: "p2wsh-only", ins: []craftKind{kP2WSH}},
		{name: "no-taproot-output", ins: []craftKind{kP2WPKH, kP2TRKey}, noTaproot: true},
		{name: "every-kind", ins: []craftKind{kP2PKH, kP2WPKH, kP2SHP2WPKH, kP2TRKey, kP2TRScript, kP2PKHUncompressed, kP2WSH, kNUMS, kP2PKHMalleated}, eligible: true},
		{name: "smallest-outpoint-by-serialization", vouts: []uint32{voutSmallA, voutSmallB}, eligible: true},
		{name: "keys-sum-to-infinity", vouts: []uint32{vInfA, vInfNegA}},
		{name: "taproot-and-p2wpkh-sum-to-infinity", vouts: []uint32{vInfTR, vInfNegTR}},
		{name: "intermediate-sum-zero", vouts: []uint32{vMidA, vMidNegA, vMidB}, eligible: true},
	}
}

// craftWallet holds the crafted coins: the funding coinbase's outputs and
// the outputs of crafted transactions.
type craftWallet struct {
	funding []*craftCoin
	used    map[btcwire.OutPoint]bool
	outs    map[wire.Hash][]*craftCoin
}

func (w *craftWallet) clone() *craftWallet {
	return &craftWallet{funding: w.funding, used: map[btcwire.OutPoint]bool{}, outs: map[wire.Hash][]*craftCoin{}}
}

// fundingOutputs are the funding coinbase's outputs: nFunding coins cycling
// through the kinds, then the special ones.
func (w *craftWallet) fundingOutputs(t *testing.T, subsidy int64) []*btcwire.TxOut {
	value := subsidy / 400
	for i := range nFunding {
		w.funding = append(w.funding, &craftCoin{value: value, kind: craftKind(i % int(nCraftKinds)), priv: craftKey(fmt.Sprint("fund-", i))})
	}
	k, m, j := craftKey("inf"), craftKey("mid"), craftKey("mid-other")
	tr := craftKey("inf-tr")
	// -even(Q): the P2WPKH key cancelling the BIP86 output key Q as the
	// BIP lifts it (even Y).
	q := txscript.TweakTaprootPrivKey(*tr, nil)
	if q.PubKey().SerializeCompressed()[0] == 0x03 {
		q = negKey(q)
	}
	w.funding = append(w.funding,
		&craftCoin{value: value, kind: kP2WPKH, priv: k},
		&craftCoin{value: value, kind: kP2WPKH, priv: negKey(k)},
		&craftCoin{value: value, kind: kP2TRKey, priv: tr},
		&craftCoin{value: value, kind: kP2WPKH, priv: negKey(q)},
		&craftCoin{value: value, kind: kP2WPKH, priv: m},
		&craftCoin{value: value, kind: kP2WPKH, priv: negKey(m)},
		&craftCoin{value: value, kind: kP2WPKH, priv: j},
	)
	var outs []*btcwire.TxOut
	for i, c := range w.funding {
		c.op.Index = uint32(i)
		c.spk = c.script()
		outs = append(outs, blockgen.Out(c.value, c.spk))
	}
	if w.funding[voutSmallA].kind != kP2WPKH || w.funding[voutSmallB].kind != kP2TRKey {
		t.Fatal("the smallest-outpoint coins are not of the kinds meant")
	}
	return outs
}

func (w *craftWallet) funded(txid wire.Hash) {
	for _, c := range w.funding {
		c.op.Hash = [32]byte(txid)
	}
}

func (w *craftWallet) take(t *testing.T, s craftSpec) []*craftCoin {
	var coins []*craftCoin
	for _, v := range s.vouts {
		coins = append(coins, w.funding[v])
		w.used[w.funding[v].op] = true
	}
	for _, k := range s.ins {
		found := false
		for v, c := range w.funding[:nFunding] {
			if c.kind == k && !w.used[c.op] && v != voutSmallA && v != voutSmallB {
				coins = append(coins, c)
				w.used[c.op] = true
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("%s: no funding coin of kind %d left", s.name, k)
		}
	}
	return coins
}

// build returns the transactions of specs, each tagged (its output keys
// derive from tag and the spec's name) and paying fee.
func (w *craftWallet) build(t *testing.T, specs []craftSpec, tag string, fee int64) []*btcwire.MsgTx {
	var txs []*btcwire.MsgTx
	for _, s := range specs {
		txs = append(txs, w.spend(t, w.take(t, s), tag+"/"+s.name, fee, s.noTaproot))
	}
	return txs
}

func (w *craftWallet) outputsOf(tx *btcwire.MsgTx) []*craftCoin { return w.outs[blockgen.TxID(tx)] }

// spend signs a transaction spending coins to two BIP86 outputs and a
// P2WPKH change (three P2WPKH outputs when noTaproot).
func (w *craftWallet) spend(t *testing.T, coins []*craftCoin, name string, fee int64, noTaproot bool) *btcwire.MsgTx {
	t.Helper()
	var total int64
	ops := make([]btcwire.OutPoint, len(coins))
	for i, c := range coins {
		total += c.value
		ops[i] = c.op
	}
	var outs []*craftCoin
	part := (total - fee) / 3
	for i := range 3 {
		kind := kP2TRKey
		if noTaproot || i == 2 {
			kind = kP2WPKH
		}
		c := &craftCoin{value: part, kind: kind, priv: craftKey(fmt.Sprint(name, "/out-", i))}
		c.spk = c.script()
		outs = append(outs, c)
	}
	txOuts := make([]*btcwire.TxOut, len(outs))
	for i, c := range outs {
		txOuts[i] = blockgen.Out(c.value, c.spk)
	}
	tx := blockgen.Spend(ops, txOuts...)
	prev := map[btcwire.OutPoint]*btcwire.TxOut{}
	for _, c := range coins {
		prev[c.op] = blockgen.Out(c.value, c.spk)
	}
	hashes := txscript.NewTxSigHashes(tx, txscript.NewMultiPrevOutFetcher(prev))
	for i, c := range coins {
		if err := c.sign(tx, i, hashes); err != nil {
			t.Fatalf("%s: input %d: %v", name, i, err)
		}
	}
	txid := blockgen.TxID(tx)
	for i, c := range outs {
		c.op = btcwire.OutPoint{Hash: [32]byte(txid), Index: uint32(i)}
	}
	w.outs[txid] = outs
	return tx
}

func (c *craftCoin) sign(tx *btcwire.MsgTx, i int, hashes *txscript.TxSigHashes) error {
	in := tx.TxIn[i]
	var err error
	switch c.kind {
	case kP2PKH, kP2PKHUncompressed:
		in.SignatureScript, err = txscript.SignatureScript(tx, i, c.spk, txscript.SigHashAll, c.priv, c.kind == kP2PKH)
	case kP2PKHMalleated:
		var sig []byte
		if sig, err = txscript.RawTxInSignature(tx, i, c.spk, txscript.SigHashAll, c.priv); err != nil {
			return err
		}
		in.SignatureScript, err = txscript.NewScriptBuilder().AddData(sig).AddData(c.priv.PubKey().SerializeCompressed()).
			AddData(craftKey("other").PubKey().SerializeCompressed()).AddOp(txscript.OP_DROP).Script()
	case kP2WPKH, kP2WPKHUncompressed:
		in.Witness, err = txscript.WitnessSignature(tx, hashes, i, c.value, c.spk, txscript.SigHashAll, c.priv, c.kind == kP2WPKH)
	case kP2SHP2WPKH:
		redeem := p2wpkh(c.priv.PubKey().SerializeCompressed())
		in.Witness, err = txscript.WitnessSignature(tx, hashes, i, c.value, redeem, txscript.SigHashAll, c.priv, true)
		in.SignatureScript = append([]byte{byte(len(redeem))}, redeem...)
	case kP2TRKey:
		in.Witness, err = txscript.TaprootWitnessSignature(tx, hashes, i, c.value, c.spk, txscript.SigHashDefault, c.priv)
	case kP2TRScript, kP2TRScriptAnnex, kNUMS, kNUMSAnnex:
		proof := scriptTree.LeafMerkleProofs[0]
		cb := proof.ToControlBlock(c.internalKey())
		var cbb []byte
		if cbb, err = cb.ToBytes(); err != nil {
			return err
		}
		in.Witness = btcwire.TxWitness{proof.Script, cbb}
		if c.kind == kP2TRScriptAnnex || c.kind == kNUMSAnnex {
			in.Witness = append(in.Witness, []byte{0x50, 0x01, 0x02})
		}
	case kWitnessV2:
		// Unknown witness versions are anyone-can-spend by consensus.
	case kP2WSH:
		in.Witness = btcwire.TxWitness{{txscript.OP_TRUE}}
	default:
		return fmt.Errorf("unknown kind %d", c.kind)
	}
	return err
}
