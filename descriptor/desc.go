package descriptor

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"utxod/address"
	"utxod/params"
)

// deriveType is Core's DeriveType: the last step of an xpub's path.
type deriveType uint8

const (
	nonRanged deriveType = iota
	unhardenedRanged
	hardenedRanged
)

// keyExpr is Core's PubkeyProvider.
type keyExpr interface {
	// pubKey is GetPubKey: the key at pos, recorded with its origin in out.
	pubKey(pos uint32, out *Provider) ([]byte, error)
	isRange() bool
	String() string
}

// constKey is ConstPubkeyProvider: a hex public key (x-only inside tr()).
type constKey struct {
	pub   []byte // 33 or 65 bytes
	xonly bool
}

func (k constKey) pubKey(_ uint32, out *Provider) ([]byte, error) {
	id := hash160(k.pub)
	out.addKey(k.pub, KeyOrigin{Fingerprint: [4]byte(id[:4])})
	return k.pub, nil
}

func (k constKey) isRange() bool { return false }

func (k constKey) String() string {
	if k.xonly {
		return hex.EncodeToString(k.pub[1:])
	}
	return hex.EncodeToString(k.pub)
}

// hdKey is BIP32PubkeyProvider: an xpub or xprv, a path and an optional
// ranged last step. It caches the key at the end of the fixed path, so it
// is not safe for concurrent use.
type hdKey struct {
	root       extKey
	path       []uint32
	derive     deriveType
	apostrophe bool
	params     *params.Params

	parent    extKey // root derived along path, once parentErr is set or parentOK
	parentOK  bool
	parentErr error
}

func (k *hdKey) isRange() bool { return k.derive != nonRanged }

// hardened is BIP32PubkeyProvider::IsHardened.
func (k *hdKey) hardened() bool {
	if k.derive == hardenedRanged {
		return true
	}
	for _, e := range k.path {
		if e&HardenedBit != 0 {
			return true
		}
	}
	return false
}

func (k *hdKey) pubKey(pos uint32, out *Provider) ([]byte, error) {
	if pos&HardenedBit != 0 && k.isRange() {
		return nil, &Error{Kind: ErrRange, Msg: "derivation index " + strconv.FormatUint(uint64(pos), 10) + " is not below 2^31"}
	}
	if k.hardened() && k.root.priv == nil {
		return nil, &Error{Kind: ErrPrivateKeyNeeded, Msg: "Cannot derive hardened keys from an xpub: '" + k.String() + "' needs the xprv"}
	}
	origin := KeyOrigin{Fingerprint: k.root.fingerprint(), Path: append([]uint32(nil), k.path...)}
	if !k.parentOK && k.parentErr == nil {
		key := k.root
		for i, step := range k.path {
			child, ok := key.derive(step)
			if !ok {
				k.parentErr = &Error{Kind: ErrInvalid, Msg: "BIP32 derivation gives no valid key at " + formatPath(k.path[:i+1], false)}
				break
			}
			key = child
		}
		k.parent, k.parentOK = key, k.parentErr == nil
	}
	if k.parentErr != nil {
		return nil, k.parentErr
	}
	key := k.parent
	if k.derive != nonRanged {
		step := pos
		if k.derive == hardenedRanged {
			step |= HardenedBit
		}
		origin.Path = append(origin.Path, step)
		child, ok := key.derive(step)
		if !ok {
			return nil, &Error{Kind: ErrInvalid, Msg: "BIP32 derivation gives no valid key at " + formatPath(origin.Path, false)}
		}
		key = child
	}
	out.addKey(key.pub, origin)
	return key.pub, nil
}

func (k *hdKey) String() string {
	s := k.root.encode(k.params, true) + formatPath(k.path, k.apostrophe)
	switch k.derive {
	case unhardenedRanged:
		s += "/*"
	case hardenedRanged:
		s += "/*" + hardMark(k.apostrophe)
	}
	return s
}

// originKey is OriginPubkeyProvider: "[fingerprint/path]" before a key.
type originKey struct {
	origin     KeyOrigin
	inner      keyExpr
	apostrophe bool
}

func (k originKey) pubKey(pos uint32, out *Provider) ([]byte, error) {
	pub, err := k.inner.pubKey(pos, out)
	if err != nil {
		return nil, err
	}
	// The inner key recorded its own origin; this one is prepended.
	id := hash160(pub)
	e := out.origins[id]
	e.origin.Fingerprint = k.origin.Fingerprint
	e.origin.Path = append(append([]uint32(nil), k.origin.Path...), e.origin.Path...)
	out.origins[id] = e
	return pub, nil
}

func (k originKey) isRange() bool { return k.inner.isRange() }

func (k originKey) String() string {
	return "[" + hex.EncodeToString(k.origin.Fingerprint[:]) + formatPath(k.origin.Path, k.apostrophe) + "]" + k.inner.String()
}

// formatPath is Core's FormatHDKeypath.
func formatPath(path []uint32, apostrophe bool) string {
	var sb strings.Builder
	for _, e := range path {
		sb.WriteByte('/')
		sb.WriteString(strconv.FormatUint(uint64(e&^HardenedBit), 10))
		if e&HardenedBit != 0 {
			sb.WriteString(hardMark(apostrophe))
		}
	}
	return sb.String()
}

func hardMark(apostrophe bool) string {
	if apostrophe {
		return "'"
	}
	return "h"
}

// kind is the descriptor function.
type kind uint8

const (
	kindAddr kind = iota
	kindRaw
	kindPK
	kindPKH
	kindWPKH
	kindCombo
	kindSH
	kindWSH
	kindTR
	kindRawTR
)

var kindNames = [...]string{"addr", "raw", "pk", "pkh", "wpkh", "combo", "sh", "wsh", "tr", "rawtr"}

// node is one DescriptorImpl: a function with its key and script arguments.
type node struct {
	kind   kind
	key    keyExpr // pk, pkh, wpkh, combo, tr, rawtr
	sub    *node   // sh, wsh
	script []byte  // addr, raw
	addr   string  // addr: the canonical address
}

func (n *node) isRange() bool {
	return n.key != nil && n.key.isRange() || n.sub != nil && n.sub.isRange()
}

func (n *node) String() string {
	var arg string
	switch {
	case n.kind == kindAddr:
		arg = n.addr
	case n.kind == kindRaw:
		arg = hex.EncodeToString(n.script)
	case n.key != nil:
		arg = n.key.String()
	default:
		arg = n.sub.String()
	}
	return kindNames[n.kind] + "(" + arg + ")"
}

// expand is ExpandHelper: keys and sub-scripts are computed into a fresh
// provider that is merged into out, then the scripts are made.
func (n *node) expand(pos uint32, out *Provider) ([][]byte, error) {
	sub := NewProvider()
	var pub, inner []byte
	if n.key != nil {
		k, err := n.key.pubKey(pos, sub)
		if err != nil {
			return nil, err
		}
		pub = k
	}
	if n.sub != nil {
		s, err := n.sub.expand(pos, sub)
		if err != nil {
			return nil, err
		}
		if len(s) != 1 {
			return nil, &Error{Kind: ErrInvalid, Msg: kindNames[n.kind] + "(): inner descriptor gives no script"}
		}
		inner = s[0]
	}
	out.merge(sub)
	return n.makeScripts(pub, inner, out), nil
}

// makeScripts is each descriptor's MakeScripts.
func (n *node) makeScripts(pub, inner []byte, out *Provider) [][]byte {
	switch n.kind {
	case kindAddr, kindRaw:
		return [][]byte{append([]byte(nil), n.script...)}
	case kindPK:
		return [][]byte{p2pk(pub)}
	case kindPKH:
		h := hash160(pub)
		return [][]byte{address.P2PKHScript(h[:])}
	case kindWPKH:
		h := hash160(pub)
		return [][]byte{address.WitnessScript(0, h[:])}
	case kindCombo:
		h := hash160(pub)
		ret := [][]byte{p2pk(pub), address.P2PKHScript(h[:])}
		if len(pub) == 33 {
			w := address.WitnessScript(0, h[:])
			out.addScript(w)
			wh := hash160(w)
			ret = append(ret, w, address.P2SHScript(wh[:]))
		}
		return ret
	case kindSH:
		h := hash160(inner)
		out.addScript(inner)
		return [][]byte{address.P2SHScript(h[:])}
	case kindWSH:
		h := sha256.Sum256(inner)
		out.addScript(inner)
		return [][]byte{address.WitnessScript(0, h[:])}
	case kindTR:
		x := pub[1:33]
		if !xOnlyFullyValid(x) {
			return nil
		}
		q, ok := taprootOutput(x)
		if !ok {
			return nil
		}
		out.trTrees[q] = [32]byte(x)
		return [][]byte{address.WitnessScript(1, q[:])}
	case kindRawTR:
		x := pub[1:33]
		if !xOnlyFullyValid(x) {
			return nil
		}
		return [][]byte{address.WitnessScript(1, x)}
	}
	return nil
}

// p2pk is <pubkey> OP_CHECKSIG (GetScriptForRawPubKey).
func p2pk(pub []byte) []byte {
	return append(append([]byte{byte(len(pub))}, pub...), 0xac)
}

// Descriptor is one parsed output descriptor.
type Descriptor struct{ root *node }

// IsRange reports a descriptor with a ranged key ("/*").
func (d *Descriptor) IsRange() bool { return d.root.isRange() }

// String is Core's Descriptor::ToString: the public form (xprvs written as
// xpubs) with its checksum.
func (d *Descriptor) String() string { return AddChecksum(d.root.String()) }

// Expand is Descriptor::Expand: the output scripts at pos (ignored unless
// ranged), with the keys, origins and scripts learnt added to out.
func (d *Descriptor) Expand(pos uint32, out *Provider) ([][]byte, error) {
	return d.root.expand(pos, out)
}
