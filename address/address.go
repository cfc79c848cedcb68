package address

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"utxod/address/base58"
	"utxod/address/bech32"
	"utxod/params"
	"utxod/script"
)

// The kinds of decoding failure (Error.Kind).
var (
	// ErrMalformed: not an address in any encoding (bad characters, mixed
	// case, wrong length, bad padding, invalid witness version or program).
	ErrMalformed = errors.New("malformed address")
	// ErrChecksum: the encoding is right but the checksum does not match,
	// or a witness version uses the other bech32 variant (BIP350).
	ErrChecksum = errors.New("bad address checksum")
	// ErrWrongNetwork: a valid address of another network.
	ErrWrongNetwork = errors.New("address of another network")
	// ErrUnsupported: a valid base58check string that is not an address
	// (an unknown version byte, for instance a private key).
	ErrUnsupported = errors.New("unsupported address")
)

// Error is a decoding failure.
type Error struct {
	Kind   error  // one of the sentinel errors above
	Reason string // what is wrong, for people
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Reason }

// Unwrap returns Kind, for errors.Is.
func (e *Error) Unwrap() error { return e.Kind }

func fail(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Reason: fmt.Sprintf(format, args...)}
}

// MaxLength bounds what Decode looks at; no address is longer (bech32's
// limit is 90 characters, base58 addresses have at most 35).
const MaxLength = 100

// Decode returns the output script (scriptPubKey) paid by addr on network
// p. Failures are *Error values.
func Decode(addr string, p *params.Params) ([]byte, error) {
	if len(addr) == 0 {
		return nil, fail(ErrMalformed, "empty address")
	}
	if len(addr) > MaxLength {
		return nil, fail(ErrMalformed, "%d characters, longer than any address", len(addr))
	}
	if looksBech32(addr) {
		script, err, sure := decodeSegwit(addr, p)
		if sure {
			return script, err
		}
		// Not a bech32 string after all: base58 may still read it.
		if s, err58 := decodeBase58(addr, p); err58 == nil {
			return s, nil
		}
		return nil, err
	}
	return decodeBase58(addr, p)
}

// looksBech32 reports a string whose part after the last '1' could be a
// bech32 data part: at least the checksum, all in one case.
func looksBech32(s string) bool {
	sep := strings.LastIndexByte(s, '1')
	if sep < 1 || len(s)-sep-1 < 6 {
		return false
	}
	hrp := strings.ToLower(s[:sep])
	for _, n := range knownHRPs() {
		if hrp == n {
			return true
		}
	}
	// An unknown hrp: bech32 only if the data part is all bech32 symbols.
	_, _, _, err := bech32.Decode(s)
	return err == nil
}

// decodeSegwit decodes a bech32/bech32m address. sure reports that s is
// meant as bech32 (the checksum matched, or the hrp is a known one), so its
// error is the one to report.
func decodeSegwit(s string, p *params.Params) (script []byte, err error, sure bool) {
	hrp, data, enc, err := bech32.Decode(s)
	if err != nil {
		kind := ErrMalformed
		if errors.Is(err, bech32.ErrChecksum) {
			kind = ErrChecksum
		}
		reason := strings.TrimPrefix(err.Error(), "bech32: ")
		return nil, &Error{Kind: kind, Reason: "bech32: " + reason}, true
	}
	if len(data) == 0 {
		return nil, fail(ErrMalformed, "empty bech32 data section"), true
	}
	if hrp != p.Bech32HRP {
		if nets := networksWithHRP(hrp); nets != "" {
			return nil, fail(ErrWrongNetwork, "%s address (prefix %q) on %s (prefix %q)", nets, hrp, p.Name, p.Bech32HRP), true
		}
		return nil, fail(ErrMalformed, "unknown bech32 prefix %q (%s expects %q)", hrp, p.Name, p.Bech32HRP), true
	}
	version := int(data[0])
	if version > 16 {
		return nil, fail(ErrMalformed, "invalid witness version %d", version), true
	}
	if version == 0 && enc != bech32.Bech32 {
		return nil, fail(ErrChecksum, "witness version 0 must use the bech32 checksum, not bech32m (BIP350)"), true
	}
	if version != 0 && enc != bech32.Bech32m {
		return nil, fail(ErrChecksum, "witness version %d must use the bech32m checksum, not bech32 (BIP350)", version), true
	}
	prog, ok := bech32.ConvertBits(data[1:], 5, 8, false)
	if !ok {
		return nil, fail(ErrMalformed, "invalid padding in the bech32 data section"), true
	}
	switch {
	case version == 0 && len(prog) != 20 && len(prog) != 32:
		return nil, fail(ErrMalformed, "witness v0 program of %d bytes (BIP141 allows 20 or 32)", len(prog)), true
	case len(prog) < 2 || len(prog) > 40:
		return nil, fail(ErrMalformed, "witness program of %d bytes (BIP141 allows 2 to 40)", len(prog)), true
	}
	return WitnessScript(version, prog), nil, true
}

func decodeBase58(s string, p *params.Params) ([]byte, error) {
	payload, err := base58.CheckDecode(s, MaxLength)
	switch {
	case errors.Is(err, base58.ErrChecksum):
		return nil, fail(ErrChecksum, "base58 checksum does not match")
	case errors.Is(err, base58.ErrInvalidChar):
		return nil, fail(ErrMalformed, "not base58 or bech32 (invalid character)")
	case err != nil:
		return nil, fail(ErrMalformed, "invalid length for a base58 address")
	}
	if len(payload) == 21 {
		switch payload[0] {
		case p.Base58PubKeyHash:
			return P2PKHScript(payload[1:]), nil
		case p.Base58ScriptHash:
			return P2SHScript(payload[1:]), nil
		}
		if nets := networksWithBase58(payload[0]); nets != "" {
			return nil, fail(ErrWrongNetwork, "%s address (version byte %d) on %s", nets, payload[0], p.Name)
		}
	}
	if len(payload) > 0 && (payload[0] == p.Base58PubKeyHash || payload[0] == p.Base58ScriptHash) {
		return nil, fail(ErrMalformed, "base58 address of %d bytes (want 21)", len(payload))
	}
	if len(payload) == 0 {
		return nil, fail(ErrMalformed, "empty base58 payload")
	}
	return nil, fail(ErrUnsupported, "base58 version byte %d is not an address on %s", payload[0], p.Name)
}

// P2PKHScript is OP_DUP OP_HASH160 <hash> OP_EQUALVERIFY OP_CHECKSIG.
func P2PKHScript(hash []byte) []byte {
	return append(append([]byte{0x76, 0xa9, 0x14}, hash...), 0x88, 0xac)
}

// P2SHScript is OP_HASH160 <hash> OP_EQUAL.
func P2SHScript(hash []byte) []byte {
	return append(append([]byte{0xa9, 0x14}, hash...), 0x87)
}

// WitnessScript is OP_n <program>: a version 0..16 witness output.
func WitnessScript(version int, program []byte) []byte {
	op := byte(0)
	if version > 0 {
		op = 0x50 + byte(version)
	}
	return append([]byte{op, byte(len(program))}, program...)
}

// FromScript is Core's ExtractDestination + EncodeDestination: the address
// that pays script on network p, if it has one. Bare public keys, multisig,
// OP_RETURN and non-standard scripts have none.
func FromScript(s []byte, p *params.Params) (string, bool) {
	switch typ, sol := script.Solve(s); typ {
	case script.PubKeyHash:
		return base58.CheckEncode(append([]byte{p.Base58PubKeyHash}, sol[0]...)), true
	case script.ScriptHash:
		return base58.CheckEncode(append([]byte{p.Base58ScriptHash}, sol[0]...)), true
	case script.WitnessV0KeyHash, script.WitnessV0ScriptHash, script.WitnessV1Taproot, script.Anchor, script.WitnessUnknown:
		version, prog, _ := script.IsWitnessProgram(s)
		enc := bech32.Bech32m
		if version == 0 {
			enc = bech32.Bech32
		}
		data, _ := bech32.ConvertBits(prog, 8, 5, true)
		a := bech32.Encode(enc, p.Bech32HRP, append([]byte{byte(version)}, data...))
		return a, a != ""
	}
	return "", false
}

// The encodings of every network, to tell "another network's address" from
// garbage.
var networks = sync.OnceValue(params.All)

func knownHRPs() []string {
	var out []string
	for _, n := range networks() {
		out = append(out, n.Bech32HRP)
	}
	return out
}

// networksWithHRP names the networks using hrp ("" if none).
func networksWithHRP(hrp string) string {
	var names []string
	for _, n := range networks() {
		if n.Bech32HRP == hrp {
			names = append(names, n.Name)
		}
	}
	return strings.Join(names, "/")
}

// networksWithBase58 names the networks using v as a P2PKH or P2SH version.
func networksWithBase58(v byte) string {
	var names []string
	for _, n := range networks() {
		if n.Base58PubKeyHash == v || n.Base58ScriptHash == v {
			names = append(names, n.Name)
		}
	}
	return strings.Join(names, "/")
}
