package descriptor

import (
	"encoding/hex"
	"strconv"
	"strings"

	"utxod/address"
	"utxod/address/base58"
	"utxod/params"
)

// MaxLength bounds the descriptors Parse reads (Core has no limit; a
// scantxoutset descriptor is a few hundred characters).
const MaxLength = 10_000

// scriptCtx is Core's ParseScriptContext.
type scriptCtx uint8

const (
	ctxTop scriptCtx = iota
	ctxP2SH
	ctxP2WPKH
	ctxP2WSH
	ctxP2TR
)

// Parse is Core's Parse(descriptor, provider, error, require_checksum=false)
// for network p: an optional "#checksum" is verified, and a multipath key
// ("/<0;1>/*") gives one Descriptor per path. Supported: addr(), raw(),
// pk(), pkh(), wpkh(), combo(), sh() and wsh() around those, tr() with a
// key and no script tree, rawtr(); keys as hex, xpub or xprv with origin
// "[fingerprint/path]", paths, "/*" and "/*'" (hardened ranges need an
// xprv). Error messages are Core's where Core has one.
func Parse(s string, p *params.Params) ([]*Descriptor, error) {
	if len(s) > MaxLength {
		return nil, parseErrorf("descriptor of %d characters (at most %d)", len(s), MaxLength)
	}
	body, err := splitChecksum(s)
	if err != nil {
		return nil, err
	}
	ps := parser{p: p}
	rest := body
	nodes, err := ps.script(&rest, ctxTop)
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, parseErrorf("unexpected %q after the descriptor", rest)
	}
	out := make([]*Descriptor, len(nodes))
	for i, n := range nodes {
		out[i] = &Descriptor{root: n}
	}
	return out, nil
}

type parser struct{ p *params.Params }

// expr is Core's script::Expr: the text up to the first ',' ')' or '}'
// outside parentheses and braces, consumed from *sp.
func expr(sp *string) string {
	level, i := 0, 0
	s := *sp
	for ; i < len(s); i++ {
		c := s[i]
		if c == '(' || c == '{' {
			level++
		} else if level > 0 && (c == ')' || c == '}') {
			level--
		} else if level == 0 && (c == ')' || c == '}' || c == ',') {
			break
		}
	}
	*sp = s[i:]
	return s[:i]
}

// fn is Core's script::Func: e is "name(...)"; it returns the inside.
func fn(name, e string) (string, bool) {
	if len(e) >= len(name)+2 && e[len(name)] == '(' && e[len(e)-1] == ')' && strings.HasPrefix(e, name) {
		return e[len(name)+1 : len(e)-1], true
	}
	return "", false
}

// script is Core's ParseScript for the functions this package supports.
func (ps parser) script(sp *string, ctx scriptCtx) ([]*node, error) {
	e := expr(sp)
	keyFn := func(name string, k kind, keyCtx scriptCtx, allowed ...scriptCtx) ([]*node, error, bool) {
		arg, ok := fn(name, e)
		if !ok {
			return nil, nil, false
		}
		if !contextIn(ctx, allowed) {
			return nil, nil, false
		}
		keys, err := ps.pubkey(arg, keyCtx)
		if err != nil {
			return nil, prefixed(name+"(): ", err), true
		}
		out := make([]*node, len(keys))
		for i, key := range keys {
			out[i] = &node{kind: k, key: key}
		}
		return out, nil, true
	}
	if n, err, ok := keyFn("pk", kindPK, ctx, ctxTop, ctxP2SH, ctxP2WSH); ok {
		return n, err
	}
	if _, ok := fn("pk", e); ok && ctx == ctxP2TR {
		return nil, unsupportedf("pk() inside tr() (a script tree) is not supported")
	}
	if n, err, ok := keyFn("pkh", kindPKH, ctx, ctxTop, ctxP2SH, ctxP2WSH); ok {
		return n, err
	}
	if n, err, ok := keyFn("combo", kindCombo, ctx, ctxTop); ok {
		return n, err
	}
	if _, ok := fn("combo", e); ok {
		return nil, parseErrorf("Can only have combo() at top level")
	}
	for _, m := range []string{"multi", "sortedmulti", "multi_a", "sortedmulti_a"} {
		if _, ok := fn(m, e); ok {
			return nil, unsupportedf("%s() is not supported (supported: addr, raw, pk, pkh, wpkh, combo, sh, wsh, tr with a key, rawtr)", m)
		}
	}
	if n, err, ok := keyFn("wpkh", kindWPKH, ctxP2WPKH, ctxTop, ctxP2SH); ok {
		return n, err
	}
	if _, ok := fn("wpkh", e); ok {
		return nil, parseErrorf("Can only have wpkh() at top level or inside sh()")
	}
	if inner, ok := fn("sh", e); ok {
		if ctx != ctxTop {
			return nil, parseErrorf("Can only have sh() at top level")
		}
		return ps.wrap(kindSH, inner, ctxP2SH)
	}
	if inner, ok := fn("wsh", e); ok {
		if ctx != ctxTop && ctx != ctxP2SH {
			return nil, parseErrorf("Can only have wsh() at top level or inside sh()")
		}
		return ps.wrap(kindWSH, inner, ctxP2WSH)
	}
	if arg, ok := fn("addr", e); ok {
		if ctx != ctxTop {
			return nil, parseErrorf("Can only have addr() at top level")
		}
		s, err := address.Decode(arg, ps.p)
		if err != nil {
			return nil, &Error{Kind: ErrInvalid, Msg: "Address is not valid", Detail: err.Error()}
		}
		canon, _ := address.FromScript(s, ps.p)
		return []*node{{kind: kindAddr, script: s, addr: canon}}, nil
	}
	if arg, ok := fn("tr", e); ok {
		if ctx != ctxTop {
			return nil, parseErrorf("Can only have tr at top level")
		}
		k := expr(&arg)
		keys, err := ps.pubkey(k, ctxP2TR)
		if err != nil {
			return nil, prefixed("tr(): ", err)
		}
		if arg != "" {
			return nil, unsupportedf("tr() with a script tree is not supported: only tr(KEY), the key-path output")
		}
		out := make([]*node, len(keys))
		for i, key := range keys {
			out[i] = &node{kind: kindTR, key: key}
		}
		return out, nil
	}
	if arg, ok := fn("rawtr", e); ok {
		if ctx != ctxTop {
			return nil, parseErrorf("Can only have rawtr at top level")
		}
		k := expr(&arg)
		if arg != "" {
			return nil, parseErrorf("rawtr(): only one key expected.")
		}
		keys, err := ps.pubkey(k, ctxP2TR)
		if err != nil {
			return nil, prefixed("rawtr(): ", err)
		}
		out := make([]*node, len(keys))
		for i, key := range keys {
			out[i] = &node{kind: kindRawTR, key: key}
		}
		return out, nil
	}
	if arg, ok := fn("raw", e); ok {
		if ctx != ctxTop {
			return nil, parseErrorf("Can only have raw() at top level")
		}
		if !isHex(arg) {
			return nil, parseErrorf("Raw script is not hex")
		}
		b, _ := hex.DecodeString(arg)
		return []*node{{kind: kindRaw, script: b}}, nil
	}
	if _, ok := fn("unused", e); ok {
		return nil, unsupportedf("unused() is not supported: it has no output script")
	}
	switch ctx {
	case ctxP2WSH:
		if strings.ContainsRune(e, '(') {
			return nil, unsupportedf("miniscript %q is not supported inside wsh()", e)
		}
		return nil, parseErrorf("A function is needed within P2WSH")
	case ctxP2SH:
		if strings.ContainsRune(e, '(') {
			return nil, unsupportedf("%q is not supported inside sh()", e)
		}
		return nil, parseErrorf("A function is needed within P2SH")
	}
	return nil, parseErrorf("'%s' is not a valid descriptor function", e)
}

func contextIn(c scriptCtx, list []scriptCtx) bool {
	for _, x := range list {
		if c == x {
			return true
		}
	}
	return false
}

// wrap parses sh(X) or wsh(X).
func (ps parser) wrap(k kind, inner string, ctx scriptCtx) ([]*node, error) {
	subs, err := ps.script(&inner, ctx)
	if err != nil {
		return nil, err
	}
	if inner != "" {
		return nil, parseErrorf("%s(): unexpected %q after the script", kindNames[k], inner)
	}
	out := make([]*node, len(subs))
	for i, s := range subs {
		out[i] = &node{kind: k, sub: s}
	}
	return out, nil
}

// isHex is Core's IsHex: a non-empty, even number of hex digits.
func isHex(s string) bool {
	if len(s) == 0 || len(s)%2 != 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// pubkey is Core's ParsePubkey: an optional origin, then the key.
func (ps parser) pubkey(s string, ctx scriptCtx) ([]keyExpr, error) {
	if strings.HasPrefix(s, "musig(") {
		return nil, unsupportedf("musig() is not supported")
	}
	parts := strings.Split(s, "]")
	if len(parts) > 2 {
		return nil, parseErrorf("Multiple ']' characters found for a single pubkey")
	}
	if len(parts) == 1 {
		keys, _, err := ps.pubkeyInner(s, ctx, false)
		return keys, err
	}
	if parts[0] == "" || parts[0][0] != '[' {
		got := byte(']')
		if parts[0] != "" {
			got = parts[0][0]
		}
		return nil, parseErrorf("Key origin start '[ character expected but not found, got '%c' instead", got)
	}
	slash := strings.Split(parts[0][1:], "/")
	if len(slash[0]) != 8 {
		return nil, parseErrorf("Fingerprint is not 4 bytes (%d characters instead of 8 characters)", len(slash[0]))
	}
	if !isHex(slash[0]) {
		return nil, parseErrorf("Fingerprint '%s' is not hex", slash[0])
	}
	var origin KeyOrigin
	fp, _ := hex.DecodeString(slash[0])
	copy(origin.Fingerprint[:], fp)
	apostrophe := false
	paths, err := keyPath(slash, &apostrophe, false)
	if err != nil {
		return nil, err
	}
	origin.Path = paths[0]
	inner, innerApostrophe, err := ps.pubkeyInner(parts[1], ctx, apostrophe)
	if err != nil {
		return nil, err
	}
	out := make([]keyExpr, len(inner))
	for i, k := range inner {
		out[i] = originKey{origin: origin, inner: k, apostrophe: innerApostrophe}
	}
	return out, nil
}

// pubkeyInner is Core's ParsePubkeyInner: a hex key, or an extended key
// with a path. apostrophe carries the hardened marker seen so far (Core's
// shared flag); the updated flag is returned.
func (ps parser) pubkeyInner(s string, ctx scriptCtx, apostrophe bool) ([]keyExpr, bool, error) {
	permitUncompressed := ctx == ctxTop || ctx == ctxP2SH
	split := strings.Split(s, "/")
	str := split[0]
	if str == "" {
		return nil, apostrophe, parseErrorf("No key provided")
	}
	if isSpace(str[0]) || isSpace(str[len(str)-1]) {
		return nil, apostrophe, parseErrorf("Key '%s' is invalid due to whitespace", str)
	}
	if len(split) == 1 {
		if isHex(str) {
			data, _ := hex.DecodeString(str)
			if validSize(data) && !validNonHybrid(data) {
				return nil, apostrophe, parseErrorf("Hybrid public keys are not allowed")
			}
			if fullyValid(data) {
				if permitUncompressed || len(data) == 33 {
					return []keyExpr{constKey{pub: data}}, apostrophe, nil
				}
				return nil, apostrophe, parseErrorf("Uncompressed keys are not allowed")
			}
			if len(data) == 32 && ctx == ctxP2TR {
				full := append([]byte{2}, data...)
				if fullyValid(full) {
					return []keyExpr{constKey{pub: full, xonly: true}}, apostrophe, nil
				}
			}
			return nil, apostrophe, parseErrorf("Pubkey '%s' is invalid", str)
		}
		if b, err := base58.CheckDecode(str, 34); err == nil && len(b) >= 33 && b[0] == ps.p.Base58SecretKey {
			return nil, apostrophe, unsupportedf("WIF private keys are not supported: give the public key")
		}
	}
	root, ok := decodeExtKey(str, ps.p)
	if !ok {
		return nil, apostrophe, parseErrorf("key '%s' is not valid", str)
	}
	derive := nonRanged
	switch split[len(split)-1] {
	case "*":
		derive = unhardenedRanged
		split = split[:len(split)-1]
	case "*'", "*h":
		derive = hardenedRanged
		apostrophe = split[len(split)-1] == "*'"
		split = split[:len(split)-1]
	}
	paths, err := keyPath(split, &apostrophe, true)
	if err != nil {
		return nil, apostrophe, err
	}
	out := make([]keyExpr, len(paths))
	for i, path := range paths {
		out[i] = &hdKey{root: root, path: path, derive: derive, apostrophe: apostrophe, params: ps.p}
	}
	return out, apostrophe, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\f' || c == '\n' || c == '\r' || c == '\t' || c == '\v'
}

// keyPath is Core's ParseKeyPath over split[1:], with "<a;b;...>" (one per
// path, if allowed) expanding to several paths.
func keyPath(split []string, apostrophe *bool, allowMultipath bool) ([][]uint32, error) {
	var path []uint32
	multi := -1
	var subs []uint32
	for _, elem := range split[1:] {
		if len(elem) >= 2 && elem[0] == '<' && elem[len(elem)-1] == '>' {
			if !allowMultipath {
				return nil, parseErrorf("Key path value '%s' specifies multipath in a section where multipath is not allowed", elem)
			}
			if multi >= 0 {
				return nil, parseErrorf("Multiple multipath key path specifiers found")
			}
			nums := strings.Split(elem[1:len(elem)-1], ";")
			if len(nums) < 2 {
				return nil, parseErrorf("Multipath key path specifiers must have at least two items")
			}
			seen := make(map[uint32]bool)
			for _, num := range nums {
				v, err := keyPathNum(num, apostrophe)
				if err != nil {
					return nil, err
				}
				if seen[v] {
					return nil, parseErrorf("Duplicated key path value %d in multipath specifier", v)
				}
				seen[v] = true
				subs = append(subs, v)
			}
			multi = len(path)
			path = append(path, 0)
			continue
		}
		v, err := keyPathNum(elem, apostrophe)
		if err != nil {
			return nil, err
		}
		path = append(path, v)
	}
	if multi < 0 {
		return [][]uint32{path}, nil
	}
	out := make([][]uint32, len(subs))
	for i, v := range subs {
		p := append([]uint32(nil), path...)
		p[multi] = v
		out[i] = p
	}
	return out, nil
}

// keyPathNum is Core's ParseKeyPathNum: a decimal below 2^31 with an
// optional hardened marker ' or h.
func keyPathNum(elem string, apostrophe *bool) (uint32, error) {
	hardened := false
	if n := len(elem); n > 0 && (elem[n-1] == '\'' || elem[n-1] == 'h') {
		*apostrophe = elem[n-1] == '\''
		elem = elem[:n-1]
		hardened = true
	}
	v, err := parseUint32(elem)
	if err != nil {
		return 0, parseErrorf("Key path value '%s' is not a valid uint32", elem)
	}
	if v > 0x7fffffff {
		return 0, parseErrorf("Key path value %d is out of range", v)
	}
	if hardened {
		v |= HardenedBit
	}
	return v, nil
}

// parseUint32 is Core's ToIntegral<uint32_t>: decimal digits only (no sign,
// no spaces), leading zeros allowed.
func parseUint32(s string) (uint32, error) {
	if s == "" {
		return 0, strconv.ErrSyntax
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	v, err := strconv.ParseUint(s, 10, 32)
	return uint32(v), err
}
