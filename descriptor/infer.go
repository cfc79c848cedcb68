package descriptor

import (
	"encoding/hex"
	"strconv"
	"strings"

	"utxod/address"
	"utxod/params"
	"utxod/script"
)

// Infer is Core's InferDescriptor(script, provider)->ToString(): the
// descriptor that best describes script given what prov knows (keys and
// their origins, redeem and witness scripts, taproot internal keys), with
// its checksum. With an empty provider it is the "desc" of Core's
// scriptPubKey JSON; with the provider a scan's descriptors were expanded
// into, the "desc" of each scantxoutset unspent. prov may be nil.
func Infer(s []byte, prov *Provider, p *params.Params) string {
	if prov == nil {
		prov = NewProvider()
	}
	d, _ := inferScript(s, ctxTop, prov, p)
	return AddChecksum(d)
}

// inferScript is Core's InferScript; false means "no descriptor" (only
// possible below the top level).
func inferScript(s []byte, ctx scriptCtx, prov *Provider, p *params.Params) (string, bool) {
	typ, sol := script.Solve(s)
	inScript := ctx == ctxTop || ctx == ctxP2SH || ctx == ctxP2WSH
	switch {
	case typ == script.PubKey && inScript:
		if k, ok := inferPubkey(sol[0], ctx, prov); ok {
			return "pk(" + k + ")", true
		}
	case typ == script.PubKeyHash && inScript:
		if pub, ok := prov.pubkeys[[20]byte(sol[0])]; ok {
			if k, ok := inferPubkey(pub, ctx, prov); ok {
				return "pkh(" + k + ")", true
			}
		}
	case typ == script.WitnessV0KeyHash && (ctx == ctxTop || ctx == ctxP2SH):
		if pub, ok := prov.pubkeys[[20]byte(sol[0])]; ok {
			if k, ok := inferPubkey(pub, ctxP2WPKH, prov); ok {
				return "wpkh(" + k + ")", true
			}
		}
	case typ == script.Multisig && inScript:
		parts := []string{strconv.Itoa(int(sol[0][0]))}
		ok := true
		for _, key := range sol[1 : len(sol)-1] {
			k, good := inferPubkey(key, ctx, prov)
			if !good {
				ok = false
				break
			}
			parts = append(parts, k)
		}
		if ok {
			return "multi(" + strings.Join(parts, ",") + ")", true
		}
	case typ == script.ScriptHash && ctx == ctxTop:
		if sub, ok := prov.scripts[[20]byte(sol[0])]; ok {
			if d, ok := inferScript(sub, ctxP2SH, prov, p); ok {
				return "sh(" + d + ")", true
			}
		}
	case typ == script.WitnessV0ScriptHash && (ctx == ctxTop || ctx == ctxP2SH):
		if sub, ok := prov.scripts[ripemd160Of(sol[0])]; ok {
			if d, ok := inferScript(sub, ctxP2WSH, prov, p); ok {
				return "wsh(" + d + ")", true
			}
		}
	case typ == script.WitnessV1Taproot && ctx == ctxTop:
		out := [32]byte(sol[0])
		if internal, ok := prov.trTrees[out]; ok {
			// InferTaprootTree: the output must be the tweak of the
			// internal key with no script tree.
			if q, ok := taprootOutput(internal[:]); ok && q == out {
				return "tr(" + inferXOnly(internal[:], prov) + ")", true
			}
		}
		if xOnlyFullyValid(sol[0]) {
			return "rawtr(" + inferXOnly(sol[0], prov) + ")", true
		}
	}
	// Miniscript inference inside wsh() and tr() is not done here; such
	// scripts (never produced by the descriptors this package parses) give
	// no descriptor, so an enclosing sh()/wsh() falls back to addr().
	if ctx != ctxTop {
		return "", false
	}
	if a, ok := address.FromScript(s, p); ok {
		return "addr(" + a + ")", true
	}
	return "raw(" + hex.EncodeToString(s) + ")", true
}

// inferPubkey is Core's InferPubkey: hybrid keys and, outside the top level
// and sh(), uncompressed keys give no descriptor; a key with a known origin
// is written "[fingerprint/path]key".
func inferPubkey(pub []byte, ctx scriptCtx, prov *Provider) (string, bool) {
	if !validNonHybrid(pub) {
		return "", false
	}
	if ctx != ctxTop && ctx != ctxP2SH && len(pub) != 33 {
		return "", false
	}
	k := hex.EncodeToString(pub)
	if e, ok := prov.origins[hash160(pub)]; ok {
		return originString(e.origin) + k, true
	}
	return k, true
}

// inferXOnly is Core's InferXOnlyPubkey.
func inferXOnly(x []byte, prov *Provider) string {
	k := hex.EncodeToString(x)
	if o, ok := prov.originByXOnly(x); ok {
		return originString(o) + k
	}
	return k
}

// originString is "[fingerprint/path]" as InferPubkey writes it (h for
// hardened).
func originString(o KeyOrigin) string {
	return "[" + hex.EncodeToString(o.Fingerprint[:]) + formatPath(o.Path, false) + "]"
}

// ripemd160Of is RIPEMD-160 of b (a P2WSH program's script ID is
// RIPEMD160(SHA256(script)), the HASH160 of the script).
func ripemd160Of(b []byte) [20]byte {
	r := newRipemd()
	r.Write(b)
	var out [20]byte
	copy(out[:], r.Sum(nil))
	return out
}
