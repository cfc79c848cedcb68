package silentpayments

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"utxod/wire"
)

// testIn is one input of a test transaction: its outpoint, scriptSig,
// witness and the scriptPubKey it spends.
type testIn struct {
	txid    [32]byte // internal byte order
	vout    uint32
	sig     []byte
	witness [][]byte
	prevout []byte
}

// serializeTx builds a raw transaction spending ins and paying one output
// per script in outs.
func serializeTx(ins []testIn, outs [][]byte) []byte {
	segwit := false
	for _, in := range ins {
		if len(in.witness) > 0 {
			segwit = true
		}
	}
	raw := binary.LittleEndian.AppendUint32(nil, 2)
	if segwit {
		raw = append(raw, 0x00, 0x01)
	}
	raw = appendCompact(raw, len(ins))
	for _, in := range ins {
		raw = append(raw, in.txid[:]...)
		raw = binary.LittleEndian.AppendUint32(raw, in.vout)
		raw = appendCompact(raw, len(in.sig))
		raw = append(raw, in.sig...)
		raw = binary.LittleEndian.AppendUint32(raw, 0xfffffffd)
	}
	raw = appendCompact(raw, len(outs))
	for i, s := range outs {
		raw = binary.LittleEndian.AppendUint64(raw, uint64(330+i))
		raw = appendCompact(raw, len(s))
		raw = append(raw, s...)
	}
	if segwit {
		for _, in := range ins {
			raw = appendCompact(raw, len(in.witness))
			for _, item := range in.witness {
				raw = appendCompact(raw, len(item))
				raw = append(raw, item...)
			}
		}
	}
	return binary.LittleEndian.AppendUint32(raw, 0)
}

func buildTx(t testing.TB, ins []testIn, outs [][]byte) (*wire.Tx, [][]byte) {
	t.Helper()
	tx, err := wire.ParseTx(serializeTx(ins, outs))
	if err != nil {
		t.Fatal(err)
	}
	prevouts := make([][]byte, len(ins))
	for i, in := range ins {
		prevouts[i] = in.prevout
	}
	return tx, prevouts
}

// testKey is a private key with its public key.
type testKey struct {
	priv secp256k1.ModNScalar
	pub  secp256k1.JacobianPoint // affine
}

func newKey(seed uint32) testKey {
	var k testKey
	h := TaggedHash("utxod/test-key", ser32(seed))
	k.priv.SetBytes(&h)
	secp256k1.ScalarBaseMultNonConst(&k.priv, &k.pub)
	k.pub.ToAffine()
	return k
}

// negate returns the key's negation (private -a, public -A).
func (k testKey) negate() testKey {
	var n testKey
	n.priv.NegateVal(&k.priv)
	n.pub.Set(&k.pub)
	n.pub.Y.Negate(1).Normalize()
	return n
}

func (k testKey) compressed() []byte {
	b := serP(&k.pub)
	return b[:]
}

func (k testKey) uncompressed() []byte {
	b := []byte{0x04}
	b = append(b, k.pub.X.Bytes()[:]...)
	return append(b, k.pub.Y.Bytes()[:]...)
}

func (k testKey) xonly() []byte { return k.compressed()[1:] }

func hash160(b []byte) []byte {
	s := newHash160er().sum(b)
	return s[:]
}

func p2pkhScript(pub []byte) []byte {
	return slices.Concat([]byte{0x76, 0xa9, 0x14}, hash160(pub), []byte{0x88, 0xac})
}

func p2wpkhScript(pub []byte) []byte { return slices.Concat([]byte{0x00, 0x14}, hash160(pub)) }

func p2shScript(redeem []byte) []byte {
	return slices.Concat([]byte{0xa9, 0x14}, hash160(redeem), []byte{0x87})
}

func p2trScript(x []byte) []byte { return slices.Concat([]byte{0x51, 0x20}, x) }

// push is a minimal data push of b (b shorter than 76 bytes).
func push(b []byte) []byte { return slices.Concat([]byte{byte(len(b))}, b) }

var fakeSig = bytes.Repeat([]byte{0x30}, 71)

func txid(seed byte) [32]byte {
	var h [32]byte
	for i := range h {
		h[i] = seed ^ byte(i*7)
	}
	return h
}

func p2pkhIn(k testKey, id [32]byte, vout uint32) testIn {
	return testIn{txid: id, vout: vout, sig: slices.Concat(push(fakeSig), push(k.compressed())), prevout: p2pkhScript(k.compressed())}
}

func p2wpkhIn(k testKey, id [32]byte, vout uint32) testIn {
	return testIn{txid: id, vout: vout, witness: [][]byte{fakeSig, k.compressed()}, prevout: p2wpkhScript(k.compressed())}
}

func p2shP2wpkhIn(k testKey, id [32]byte, vout uint32) testIn {
	redeem := p2wpkhScript(k.compressed())
	return testIn{txid: id, vout: vout, sig: push(redeem), witness: [][]byte{fakeSig, k.compressed()}, prevout: p2shScript(redeem)}
}

func p2trKeyPathIn(k testKey, id [32]byte, vout uint32) testIn {
	return testIn{txid: id, vout: vout, witness: [][]byte{bytes.Repeat([]byte{1}, 64)}, prevout: p2trScript(k.xonly())}
}

// p2trScriptPathIn spends output key k by a script path whose control block
// names internal as the internal key.
func p2trScriptPathIn(k testKey, internal []byte, id [32]byte, vout uint32) testIn {
	leaf := []byte{0x51} // OP_TRUE
	cb := slices.Concat([]byte{0xc0}, internal, bytes.Repeat([]byte{9}, 32))
	return testIn{txid: id, vout: vout, witness: [][]byte{leaf, cb}, prevout: p2trScript(k.xonly())}
}

// senderTweak is the BIP's sender-side derivation from private keys,
// independent of the receiver-side point sums ComputeTweak does: a = Σ a_i
// (taproot keys negated to even Y), A = a·G, input_hash over the smallest
// outpoint, tweak = (input_hash·a)·G.
func senderTweak(t testing.TB, keys []testKey, taproot []bool, ins []testIn) [33]byte {
	t.Helper()
	var a secp256k1.ModNScalar
	for i, k := range keys {
		ai := k.priv
		if taproot[i] && k.pub.Y.IsOdd() {
			ai.Negate()
		}
		a.Add(&ai)
	}
	if a.IsZero() {
		t.Fatal("a = 0")
	}
	var A secp256k1.JacobianPoint
	secp256k1.ScalarBaseMultNonConst(&a, &A)
	ser := serP(&A)
	var ops [][]byte
	for _, in := range ins {
		ops = append(ops, binary.LittleEndian.AppendUint32(slices.Clone(in.txid[:]), in.vout))
	}
	slices.SortFunc(ops, bytes.Compare)
	h := TaggedHash(TagInputs, ops[0], ser[:])
	var s secp256k1.ModNScalar
	if s.SetBytes(&h) != 0 {
		t.Fatal("input_hash overflow")
	}
	s.Mul(&a)
	var T secp256k1.JacobianPoint
	secp256k1.ScalarBaseMultNonConst(&s, &T)
	return serP(&T)
}

var payTo = p2trScript(newKey(999).xonly())

func TestEdgeCases(t *testing.T) {
	k1, k2, k3 := newKey(1), newKey(2), newKey(3)
	// An odd-Y key, for the even-Y rule of taproot inputs.
	var odd testKey
	for s := uint32(10); ; s++ {
		if odd = newKey(s); odd.pub.Y.IsOdd() {
			break
		}
	}
	idA, idB := txid(0xa0), txid(0x10)
	nums := numsH[:]

	type tc struct {
		name string
		ins  []testIn
		outs [][]byte
		// keys/taproot: the inputs whose keys count (sender's view);
		// none means ok=false is expected.
		keys    []testKey
		taproot []bool
	}
	cases := []tc{
		{name: "p2wpkh+p2tr", ins: []testIn{p2wpkhIn(k1, idA, 0), p2trKeyPathIn(k2, idB, 1)},
			keys: []testKey{k1, k2}, taproot: []bool{false, true}},
		{name: "p2pkh standard", ins: []testIn{p2pkhIn(k1, idA, 0)}, keys: []testKey{k1}, taproot: []bool{false}},
		{name: "p2sh-p2wpkh", ins: []testIn{p2shP2wpkhIn(k1, idA, 0)}, keys: []testKey{k1}, taproot: []bool{false}},
		{name: "taproot odd Y output key taken as even", ins: []testIn{p2trKeyPathIn(odd, idA, 0), p2wpkhIn(k1, idB, 0)},
			keys: []testKey{odd, k1}, taproot: []bool{true, false}},
		{name: "taproot key path with annex", ins: []testIn{func() testIn {
			in := p2trKeyPathIn(k1, idA, 0)
			in.witness = append(in.witness, []byte{0x50, 1, 2})
			return in
		}()}, keys: []testKey{k1}, taproot: []bool{true}},
		{name: "taproot script path, non-NUMS internal key counts", ins: []testIn{p2trScriptPathIn(k1, k2.xonly(), idA, 0)},
			keys: []testKey{k1}, taproot: []bool{true}},
		{name: "taproot script path with NUMS internal key skipped", ins: []testIn{p2trScriptPathIn(k1, nums, idA, 0), p2wpkhIn(k2, idB, 0)},
			keys: []testKey{k2}, taproot: []bool{false}},
		{name: "taproot script path with NUMS internal key and annex skipped", ins: []testIn{func() testIn {
			in := p2trScriptPathIn(k1, nums, idA, 0)
			in.witness = append(in.witness, []byte{0x50})
			return in
		}(), p2wpkhIn(k2, idB, 0)}, keys: []testKey{k2}, taproot: []bool{false}},
		{name: "only NUMS script path: not eligible", ins: []testIn{p2trScriptPathIn(k1, nums, idA, 0)}},
		{name: "NUMS in a short control block is not a match", ins: []testIn{func() testIn {
			in := p2trScriptPathIn(k1, nums, idA, 0)
			in.witness[1] = in.witness[1][:20]
			return in
		}()}, keys: []testKey{k1}, taproot: []bool{true}},
		{name: "p2pkh uncompressed key skipped", ins: []testIn{{txid: idA, sig: slices.Concat(push(fakeSig), []byte{0x41}, k1.uncompressed()),
			prevout: p2pkhScript(k1.uncompressed())}, p2wpkhIn(k2, idB, 0)}, keys: []testKey{k2}, taproot: []bool{false}},
		{name: "p2wpkh uncompressed key skipped", ins: []testIn{{txid: idA, witness: [][]byte{fakeSig, k1.uncompressed()},
			prevout: p2wpkhScript(k1.uncompressed())}, p2pkhIn(k2, idB, 0)}, keys: []testKey{k2}, taproot: []bool{false}},
		{name: "only uncompressed keys: not eligible", ins: []testIn{{txid: idA, witness: [][]byte{fakeSig, k1.uncompressed()},
			prevout: p2wpkhScript(k1.uncompressed())}}},
		{name: "hybrid key skipped", ins: []testIn{{txid: idA, witness: [][]byte{fakeSig, append([]byte{0x06 | byte(k1.pub.Y.IsOddBit())}, k1.uncompressed()[1:]...)},
			prevout: p2wpkhScript(k1.compressed())}, p2wpkhIn(k2, idB, 0)}, keys: []testKey{k2}, taproot: []bool{false}},
		{name: "malleated p2pkh: <dummy> OP_DROP <sig> <key>", ins: []testIn{func() testIn {
			in := p2pkhIn(k1, idA, 0)
			in.sig = slices.Concat(push([]byte{1, 2, 3}), []byte{0x75}, in.sig)
			return in
		}()}, keys: []testKey{k1}, taproot: []bool{false}},
		{name: "malleated p2pkh: key not last, decoy compressed key after it", ins: []testIn{func() testIn {
			in := p2pkhIn(k1, idA, 0)
			in.sig = slices.Concat(in.sig, push(k2.compressed()), []byte{0x75})
			return in
		}()}, keys: []testKey{k1}, taproot: []bool{false}},
		{name: "p2pkh without the key: skipped", ins: []testIn{func() testIn {
			in := p2pkhIn(k1, idA, 0)
			in.sig = slices.Concat(push(fakeSig), push(k2.compressed()))
			return in
		}(), p2wpkhIn(k3, idB, 0)}, keys: []testKey{k3}, taproot: []bool{false}},
		{name: "segwit v2 spent: not eligible", ins: []testIn{p2wpkhIn(k1, idA, 0),
			{txid: idB, witness: [][]byte{fakeSig}, prevout: slices.Concat([]byte{0x52, 0x20}, k2.xonly())}}},
		{name: "segwit v16 spent: not eligible", ins: []testIn{p2trKeyPathIn(k1, idA, 0),
			{txid: idB, witness: [][]byte{fakeSig}, prevout: []byte{0x60, 0x02, 0xab, 0xcd}}}},
		{name: "segwit v1 non-taproot program is just ineligible", ins: []testIn{p2trKeyPathIn(k1, idA, 0),
			{txid: idB, witness: [][]byte{fakeSig}, prevout: []byte{0x51, 0x02, 0x4e, 0x73}}}, keys: []testKey{k1}, taproot: []bool{true}},
		{name: "OP_2 push of 41 bytes is no witness program", ins: []testIn{p2trKeyPathIn(k1, idA, 0),
			{txid: idB, sig: []byte{0x51}, prevout: slices.Concat([]byte{0x52, 41}, bytes.Repeat([]byte{7}, 41))}}, keys: []testKey{k1}, taproot: []bool{true}},
		{name: "A at infinity: two opposite keys", ins: []testIn{p2wpkhIn(k1, idA, 0), p2wpkhIn(k1.negate(), idB, 0)}},
		{name: "A at infinity: taproot key and its negation", ins: []testIn{p2trKeyPathIn(k1, idA, 0), func() testIn {
			// the taproot key counts as even Y; its negation must be the odd one
			even := k1
			if even.pub.Y.IsOdd() {
				even = k1.negate()
			}
			return p2wpkhIn(even.negate(), idB, 0)
		}()}},
		{name: "intermediate sum at infinity, final sum not", ins: []testIn{p2wpkhIn(k1, idA, 0), p2wpkhIn(k1.negate(), idB, 0), p2pkhIn(k3, idA, 5)},
			keys: []testKey{k1, k1.negate(), k3}, taproot: []bool{false, false, false}},
		{name: "same key twice", ins: []testIn{p2wpkhIn(k1, idA, 0), p2wpkhIn(k1, idA, 1)},
			keys: []testKey{k1, k1}, taproot: []bool{false, false}},
		{name: "p2sh with other redeem script skipped", ins: []testIn{{txid: idA, sig: push(slices.Concat([]byte{0x00, 0x20}, bytes.Repeat([]byte{3}, 32))),
			witness: [][]byte{fakeSig, k1.compressed()}, prevout: p2shScript(slices.Concat([]byte{0x00, 0x20}, bytes.Repeat([]byte{3}, 32)))}, p2wpkhIn(k2, idB, 0)},
			keys: []testKey{k2}, taproot: []bool{false}},
		{name: "taproot prevout key off the curve skipped", ins: []testIn{{txid: idA, witness: [][]byte{fakeSig},
			prevout: p2trScript(bytes.Repeat([]byte{0xff}, 32))}, p2wpkhIn(k2, idB, 0)}, keys: []testKey{k2}, taproot: []bool{false}},
		{name: "p2wpkh with empty witness skipped", ins: []testIn{{txid: idA, prevout: p2wpkhScript(k1.compressed())}, p2pkhIn(k2, idB, 0)},
			keys: []testKey{k2}, taproot: []bool{false}},
		{name: "only non-eligible inputs (p2wsh)", ins: []testIn{{txid: idA, witness: [][]byte{{0x51}}, prevout: slices.Concat([]byte{0x00, 0x20}, bytes.Repeat([]byte{3}, 32))}}},
		{name: "no taproot output: not eligible", ins: []testIn{p2wpkhIn(k1, idA, 0)}, outs: [][]byte{p2wpkhScript(k2.compressed())}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outs := c.outs
			if outs == nil {
				outs = [][]byte{payTo}
			}
			tx, prevouts := buildTx(t, c.ins, outs)
			tweak, ok, err := ComputeTweak(tx, prevouts)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.keys) == 0 || c.outs != nil {
				if ok {
					t.Fatalf("ok=true (tweak %x), want not eligible", tweak)
				}
				return
			}
			if !ok {
				t.Fatal("ok=false, want a tweak")
			}
			if want := senderTweak(t, c.keys, c.taproot, c.ins); tweak != want {
				t.Fatalf("tweak %x, sender derives %x", tweak, want)
			}
		})
	}
}

// TestSmallestOutpoint checks that outpoint_L is the smallest 36-byte
// serialization (txid in internal byte order, then little-endian vout), not
// the first input, the smallest vout integer or the smallest display txid.
func TestSmallestOutpoint(t *testing.T) {
	k1, k2, k3 := newKey(1), newKey(2), newKey(3)
	keys := []testKey{k1, k2, k3}
	notTaproot := []bool{false, false, false}
	var lowInternal, lowDisplay [32]byte
	// lowInternal sorts first by its serialized (internal) bytes but last
	// by its display (reversed) form; lowDisplay the other way round.
	lowInternal[0], lowInternal[31] = 0x01, 0xff
	lowDisplay[0], lowDisplay[31] = 0x02, 0x00
	sets := map[string][]testIn{
		// vout 256 serializes as 00 01 00 00, below vout 1 (01 00 00 00).
		"vout bytes, not integers":         {p2wpkhIn(k1, txid(5), 1), p2wpkhIn(k2, txid(5), 256), p2pkhIn(k3, txid(9), 0)},
		"internal txid order, not display": {p2wpkhIn(k1, lowDisplay, 0), p2wpkhIn(k2, lowInternal, 0), p2pkhIn(k3, txid(0xee), 0)},
		"ineligible input's outpoint counts": {p2wpkhIn(k1, txid(0x40), 0), p2wpkhIn(k2, txid(0x41), 0), p2pkhIn(k3, txid(0x42), 0),
			{txid: txid(0x00), witness: [][]byte{{0x51}}, prevout: slices.Concat([]byte{0x00, 0x20}, bytes.Repeat([]byte{3}, 32))}},
	}
	for name, ins := range sets {
		t.Run(name, func(t *testing.T) {
			tx, prevouts := buildTx(t, ins, [][]byte{payTo})
			want, ok, err := ComputeTweak(tx, prevouts)
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			if got := senderTweak(t, keys, notTaproot, ins); got != want {
				t.Fatalf("tweak %x, sender derives %x", want, got)
			}
			// Every input order gives the same tweak.
			perm := slices.Clone(ins)
			for range 5 {
				perm = append(perm[1:], perm[0])
				slices.Reverse(perm[:2])
				tx, prevouts := buildTx(t, perm, [][]byte{payTo})
				got, ok, err := ComputeTweak(tx, prevouts)
				if err != nil || !ok || got != want {
					t.Fatalf("reordered inputs: tweak %x ok=%v err=%v, want %x", got, ok, err, want)
				}
			}
		})
	}
	// Sanity: the expected outpoint_L differs from the first input's.
	id := txid(5)
	a := binary.LittleEndian.AppendUint32(slices.Clone(id[:]), 256)
	b := binary.LittleEndian.AppendUint32(slices.Clone(id[:]), 1)
	if bytes.Compare(a, b) >= 0 {
		t.Fatal("vout 256 should serialize below vout 1")
	}
}

func TestErrorsAndCoinbase(t *testing.T) {
	k1 := newKey(1)
	if _, ok, err := ComputeTweak(nil, nil); ok || !errors.Is(err, ErrNilTx) {
		t.Fatalf("nil tx: ok=%v err=%v", ok, err)
	}
	tx, prevouts := buildTx(t, []testIn{p2wpkhIn(k1, txid(1), 0), p2pkhIn(k1, txid(2), 0)}, [][]byte{payTo})
	for _, p := range [][][]byte{nil, prevouts[:1], append(slices.Clone(prevouts), payTo)} {
		if _, ok, err := ComputeTweak(tx, p); ok || !errors.Is(err, ErrPrevoutCount) {
			t.Fatalf("%d prevouts: ok=%v err=%v", len(p), ok, err)
		}
	}
	// A nil prevout script is an unknown script: that input is ineligible.
	if _, ok, err := ComputeTweak(tx, [][]byte{nil, prevouts[1]}); !ok || err != nil {
		t.Fatalf("nil prevout: ok=%v err=%v", ok, err)
	}
	cb, _ := buildTx(t, []testIn{{txid: [32]byte{}, vout: 0xffffffff, sig: []byte{1, 2, 3}}}, [][]byte{payTo})
	for _, p := range [][][]byte{nil, {p2wpkhScript(k1.compressed())}} {
		if _, ok, err := ComputeTweak(cb, p); ok || err != nil {
			t.Fatalf("coinbase: ok=%v err=%v", ok, err)
		}
	}
}

func TestTaprootOutputs(t *testing.T) {
	k1, k2 := newKey(1), newKey(2)
	outs := [][]byte{
		p2wpkhScript(k1.compressed()),
		p2trScript(k1.xonly()),
		{0x6a, 0x01, 0x00},
		p2trScript(k2.xonly()),
		slices.Concat([]byte{0x51, 0x20}, k2.xonly(), []byte{0x00}), // 35 bytes: not P2TR
		p2trScript(bytes.Repeat([]byte{0xff}, 32)),                  // off the curve, still a taproot output
	}
	tx, _ := buildTx(t, []testIn{p2wpkhIn(k1, txid(1), 0)}, outs)
	got, maxValue := TaprootOutputs(tx)
	want := []TaprootOutput{
		{Index: 1, Key: [32]byte(k1.xonly()), Value: 331},
		{Index: 3, Key: [32]byte(k2.xonly()), Value: 333},
		{Index: 5, Key: [32]byte(bytes.Repeat([]byte{0xff}, 32)), Value: 335},
	}
	if !slices.Equal(got, want) || maxValue != 335 {
		t.Fatalf("got %v max %d, want %v max 335", got, maxValue, want)
	}
	if !HasTaprootOutput(tx) {
		t.Fatal("HasTaprootOutput = false")
	}
	dst := make([]TaprootOutput, 0, 8)
	dst, _ = AppendTaprootOutputs(dst, tx)
	if len(dst) != 3 {
		t.Fatal(len(dst))
	}
	none, _ := buildTx(t, []testIn{p2wpkhIn(k1, txid(1), 0)}, [][]byte{p2wpkhScript(k1.compressed())})
	if o, m := TaprootOutputs(none); o != nil || m != 0 || HasTaprootOutput(none) {
		t.Fatalf("no taproot outputs: %v %d", o, m)
	}
	if o, m := TaprootOutputs(nil); o != nil || m != 0 || HasTaprootOutput(nil) {
		t.Fatal("nil tx")
	}
}

// TestTaggedHash checks TaggedHash against BIP340's definition spelled out
// with crypto/sha256 by hand (SHA256(SHA256(tag)||SHA256(tag)||msg)).
func TestTaggedHash(t *testing.T) {
	tagHash := sha256.Sum256([]byte(TagInputs))
	want := sha256.Sum256(slices.Concat(tagHash[:], tagHash[:], []byte("abc"), []byte("def")))
	if got := TaggedHash(TagInputs, []byte("abc"), []byte("def")); got != want {
		t.Fatalf("%x != %x", got, want)
	}
	if inputsTag != tagHash {
		t.Fatal("inputsTag")
	}
}
