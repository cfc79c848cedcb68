package descriptor

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"testing"

	"utxod/params"
)

// masterKey is CExtKey::SetSeed (BIP32's master key generation).
func masterKey(t *testing.T, seedHex string) extKey {
	t.Helper()
	seed, err := hex.DecodeString(seedHex)
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha512.New, []byte("Bitcoin seed"))
	mac.Write(seed)
	I := mac.Sum(nil)
	if !privValid(I[:32]) {
		t.Fatal("invalid master key")
	}
	k := extKey{priv: append([]byte(nil), I[:32]...)}
	copy(k.chainCode[:], I[32:])
	k.pub = pubFromPriv(k.priv)
	return k
}

// TestBIP32Vectors runs Core's bip32_tests RunTest: encodings at every step,
// decoding back, private derivation, and public derivation where the child
// is unhardened.
func TestBIP32Vectors(t *testing.T) {
	main := params.MainNet()
	for vi, v := range bip32Vectors {
		key := masterKey(t, v.seed)
		pub := key.neuter()
		for si, st := range v.steps {
			if got := key.encode(main, false); got != st.prv {
				t.Fatalf("vector %d step %d: xprv %s, want %s", vi+1, si, got, st.prv)
			}
			if got := pub.encode(main, true); got != st.pub {
				t.Fatalf("vector %d step %d: xpub %s, want %s", vi+1, si, got, st.pub)
			}
			dk, ok := decodeExtKey(st.prv, main)
			if !ok || dk.encode(main, false) != st.prv || hex.EncodeToString(dk.pub) != hex.EncodeToString(key.pub) {
				t.Fatalf("vector %d step %d: decode xprv", vi+1, si)
			}
			dp, ok := decodeExtKey(st.pub, main)
			if !ok || dp.priv != nil || dp.encode(main, true) != st.pub {
				t.Fatalf("vector %d step %d: decode xpub", vi+1, si)
			}
			child, ok := key.derive(st.child)
			if !ok {
				t.Fatalf("vector %d step %d: derive %d", vi+1, si, st.child)
			}
			if st.child&HardenedBit == 0 {
				pc, ok := pub.derive(st.child)
				if !ok || pc.encode(main, true) != child.neuter().encode(main, true) {
					t.Fatalf("vector %d step %d: public derivation differs", vi+1, si)
				}
			} else if _, ok := pub.derive(st.child); ok {
				t.Fatalf("vector %d step %d: hardened derivation from an xpub", vi+1, si)
			}
			key, pub = child, child.neuter()
		}
	}
}

func TestBIP32Test5(t *testing.T) {
	for _, s := range bip32Test5 {
		if _, ok := decodeExtKey(s, params.MainNet()); ok {
			t.Errorf("%s decoded", s)
		}
	}
}

// Core's bip32_max_depth: 255 levels, not 256.
func TestBIP32MaxDepth(t *testing.T) {
	k, ok := decodeExtKey(bip32Vectors[0].steps[0].pub, params.MainNet())
	if !ok {
		t.Fatal("decode")
	}
	for i := 0; i < 255; i++ {
		if k, ok = k.derive(0); !ok {
			t.Fatalf("depth %d", i)
		}
	}
	if _, ok := k.derive(0); ok || k.depth != 255 {
		t.Fatal("derived past depth 255")
	}
}

// An xpub of one network is not a key on another (Core's DecodeExtPubKey
// checks the network's version bytes).
func TestExtKeyNetwork(t *testing.T) {
	xpub := bip32Vectors[0].steps[0].pub
	if _, ok := decodeExtKey(xpub, params.RegTest()); ok {
		t.Error("mainnet xpub decoded on regtest")
	}
	const tpub = "tpubD6NzVbkrYhZ4WaWSyoBvQwbpLkojyoTZPRsgXELWz3Popb3qkjcJyJUGLnL4qHHoQvao8ESaAstxYSnhyswJ76uZPStJRJCTKvosUCJZL5B"
	k, ok := decodeExtKey(tpub, params.RegTest())
	if !ok || k.encode(params.RegTest(), true) != tpub {
		t.Error("tpub on regtest")
	}
	// Its fingerprint is the one rpc_scantxoutset.py reports for its children.
	if fp := k.fingerprint(); hex.EncodeToString(fp[:]) != "0c5f9a1e" {
		t.Errorf("fingerprint %x", fp)
	}
}
