package validate

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"utxod/params"
	"utxod/wire"
)

// AssumeValid is Bitcoin Core's assume-valid setting (-assumevalid,
// -minimumchainwork): the scripts of a block that is buried deep enough
// under a known block are not verified. Only the scripts: every other rule
// of CheckBlock, ContextualCheckBlock and ConnectBlock is still checked. The
// zero value is off (Core's -assumevalid=0: every script is verified).
type AssumeValid struct {
	// Block is the assumed-valid block (zero: off).
	Block wire.Hash
	// MinimumChainWork is the work the best header must have (nil: zero).
	MinimumChainWork *big.Int
}

// DefaultAssumeValid is the network's default setting (Core's
// defaultAssumeValid and nMinimumChainWork; off on regtest).
func DefaultAssumeValid(p *params.Params) AssumeValid {
	a := AssumeValid{Block: p.DefaultAssumeValid}
	if p.MinimumChainWork != nil {
		a.MinimumChainWork = new(big.Int).Set(p.MinimumChainWork)
	}
	return a
}

// Enabled reports whether a block is configured.
func (a AssumeValid) Enabled() bool { return a.Block != (wire.Hash{}) }

// twoWeeks is Core's TWO_WEEKS_IN_SECONDS in ConnectBlock.
const twoWeeks = 60 * 60 * 24 * 7 * 2

// ScriptCheckReason is the condition of Core's ConnectBlock for skipping
// node's scripts (src/validation.cpp, ConnectBlock, the script_check_reason
// chain; lines 2357-2394 of Core master as of sedited/rust-bitcoinkernel
// 1e2ece2): it returns "" when the scripts may be skipped, otherwise why they
// are verified, in Core's words. The scripts are skipped when the assumed
// block is in the index and node is its ancestor, node is an ancestor of
// the best header, the best header has at least MinimumChainWork, and the
// best header is more than two weeks of equivalent work past node. It reads
// the index only (no I/O); node must be in bi.
func (a AssumeValid) ScriptCheckReason(bi *BlockIndex, node *BlockNode) string {
	if !a.Enabled() {
		return "assumevalid=0 (always verify)"
	}
	av := bi.Lookup(a.Block)
	if av == nil {
		return "assumevalid hash not in headers"
	}
	if av.Ancestor(node.Height) != node {
		if node.Height > av.Height {
			return "block height above assumevalid height"
		}
		return "block not in assumevalid chain"
	}
	best := bi.BestHeader()
	if best.Ancestor(node.Height) != node {
		return "block not in best header chain"
	}
	if a.MinimumChainWork != nil && best.ChainWork.Big().Cmp(a.MinimumChainWork) < 0 {
		return "best header chainwork below minimumchainwork"
	}
	if BlockProofEquivalentTime(best, node, best, bi.params) <= twoWeeks {
		return "block too recent relative to best header"
	}
	return ""
}

// SkipScripts reports whether node's scripts may be skipped
// (ScriptCheckReason is "").
func (a AssumeValid) SkipScripts(bi *BlockIndex, node *BlockNode) bool {
	return a.ScriptCheckReason(bi, node) == ""
}

// BlockProofEquivalentTime is Core's GetBlockProofEquivalentTime
// (src/chain.cpp): how many seconds it would take, at the block rate of
// tip's difficulty, to produce the chain work between from and to; negative
// when from has more work, saturating at ±MaxInt64.
func BlockProofEquivalentTime(to, from, tip *BlockNode, p *params.Params) int64 {
	r := new(big.Int).Sub(to.ChainWork.Big(), from.ChainWork.Big())
	sign := int64(1)
	if r.Sign() < 0 {
		r.Neg(r)
		sign = -1
	}
	// arith_uint256 arithmetic: the product wraps at 2^256.
	r.Mul(r, big.NewInt(int64(p.TargetSpacing/time.Second)))
	r.And(r, mask256())
	proof := CalcWork(tip.Header.Bits)
	if proof.Sign() == 0 {
		return sign * (1<<63 - 1) // Core divides by zero here; a valid tip never has zero work
	}
	r.Quo(r, proof)
	if r.BitLen() > 63 {
		return sign * (1<<63 - 1)
	}
	return sign * r.Int64()
}

// ErrBadUserHex is returned (wrapped) by ParseUserHash and ParseUserWork.
var ErrBadUserHex = errors.New("validate: want up to 64 hex digits")

// ParseUserHash parses an assume-valid block hash as Core's
// uint256::FromUserHex does for -assumevalid: an optional "0x" prefix, then
// up to 64 hex digits of the display-order hash, left-padded with zeros (so
// "0", like "", is the zero hash: off).
func ParseUserHash(s string) (wire.Hash, error) {
	b, err := userHex(s)
	if err != nil {
		return wire.Hash{}, err
	}
	var h wire.Hash
	for i := range b {
		h[i] = b[31-i] // display order is byte-reversed
	}
	return h, nil
}

// ParseUserWork parses a chain work as Core's -minimumchainwork: the
// FromUserHex syntax of ParseUserHash, read as a 256-bit number.
func ParseUserWork(s string) (*big.Int, error) {
	b, err := userHex(s)
	if err != nil {
		return nil, err
	}
	return new(big.Int).SetBytes(b[:]), nil
}

// userHex is FromUserHex: the 32 big-endian bytes of up to 64 hex digits.
func userHex(s string) ([32]byte, error) {
	var out [32]byte
	digits := strings.TrimPrefix(s, "0x")
	if len(digits) > 64 {
		return out, fmt.Errorf("%w: %q", ErrBadUserHex, s)
	}
	padded := strings.Repeat("0", 64-len(digits)) + digits
	if _, err := hex.Decode(out[:], []byte(padded)); err != nil {
		return [32]byte{}, fmt.Errorf("%w: %q", ErrBadUserHex, s)
	}
	return out, nil
}
