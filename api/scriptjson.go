package api

import (
	"encoding/hex"

	"utxod/address"
	"utxod/descriptor"
	"utxod/params"
	"utxod/script"
)

// ScriptPubKey is Core's JSON description of an output script (ScriptToUniv
// with include_hex and include_address, src/core_write.cpp): asm
// (ScriptToAsmStr without sighash decoding), desc (InferDescriptor with no
// signing provider, with its checksum), hex, address (ExtractDestination,
// not for bare pubkeys) and type (Solver's GetTxnOutputType).
type ScriptPubKey struct {
	Asm     string `json:"asm" example:"OP_DUP OP_HASH160 1c7cebb529b86a04c683dfa87be49de35bcf589e OP_EQUALVERIFY OP_CHECKSIG"`
	Desc    string `json:"desc" example:"addr(13ZSdMCNkNp5TCE5rCCFe2KMiaCxmdGW8P)#7f5zqwqn"`
	Hex     string `json:"hex" example:"76a9141c7cebb529b86a04c683dfa87be49de35bcf589e88ac"`
	Address string `json:"address,omitempty" example:"13ZSdMCNkNp5TCE5rCCFe2KMiaCxmdGW8P"`
	Type    string `json:"type" example:"pubkeyhash"`
}

// addrParams are the network encodings describeScript writes addresses with.
type addrParams = *params.Params

// describeScript builds Core's scriptPubKey object for s on network p.
func describeScript(s []byte, p addrParams) ScriptPubKey {
	typ, _ := script.Solve(s)
	out := ScriptPubKey{
		Asm:  script.Asm(s),
		Desc: descriptor.Infer(s, nil, p),
		Hex:  hex.EncodeToString(s),
		Type: typ.String(),
	}
	out.Address, _ = address.FromScript(s, p)
	return out
}
