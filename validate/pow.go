package validate

import (
	"math/big"
	"time"

	"utxod/params"
	"utxod/wire"
)

// This file follows Bitcoin Core's src/pow.cpp and the compact-target
// encoding of src/arith_uint256.cpp.

// CompactToBig decodes a compact target ("nBits") exactly as Core's
// arith_uint256::SetCompact: the result is the 256-bit value (bits above 2^256
// are dropped, as in Core), never negative; negative reports a set sign bit
// with a non-zero mantissa and overflow reports a value that does not fit in
// 256 bits.
func CompactToBig(compact uint32) (target *big.Int, negative, overflow bool) {
	size := compact >> 24
	word := compact & 0x007fffff
	target = new(big.Int)
	if size <= 3 {
		word >>= 8 * (3 - size)
		target.SetUint64(uint64(word))
	} else {
		target.SetUint64(uint64(word))
		if size-3 < 32 {
			target.Lsh(target, uint(8*(size-3)))
			if target.BitLen() > 256 {
				target.And(target, mask256())
			}
		} else {
			target.SetInt64(0) // shifted entirely out of 256 bits
		}
	}
	negative = word != 0 && compact&0x00800000 != 0
	overflow = word != 0 && (size > 34 || (word > 0xff && size > 33) || (word > 0xffff && size > 32))
	return target, negative, overflow
}

// BigToCompact encodes n as a compact target exactly as Core's
// arith_uint256::GetCompact; a negative n is encoded by its magnitude with
// the sign bit set (GetCompact(true)). Zero encodes as 0.
func BigToCompact(n *big.Int) uint32 {
	neg := n.Sign() < 0
	abs := new(big.Int).Abs(n)
	size := uint32((abs.BitLen() + 7) / 8)
	var compact uint32
	if size <= 3 {
		compact = uint32(abs.Uint64()) << (8 * (3 - size))
	} else {
		compact = uint32(new(big.Int).Rsh(abs, uint(8*(size-3))).Uint64())
	}
	// The 0x00800000 bit is the sign: if the mantissa would set it, shift
	// one byte right and bump the exponent.
	if compact&0x00800000 != 0 {
		compact >>= 8
		size++
	}
	compact |= size << 24
	if neg && compact&0x007fffff != 0 {
		compact |= 0x00800000
	}
	return compact
}

// mask256 returns 2^256 - 1.
func mask256() *big.Int {
	m := new(big.Int).Lsh(big.NewInt(1), 256)
	return m.Sub(m, big.NewInt(1))
}

// CalcWork returns the expected number of hashes to find a block with the
// given compact target, Core's GetBlockProof: 2^256 / (target + 1), or 0 for
// a negative, overflowing or zero target.
func CalcWork(bits uint32) *big.Int {
	target, neg, over := CompactToBig(bits)
	if neg || over || target.Sign() == 0 {
		return new(big.Int)
	}
	// Core computes (~target / (target + 1)) + 1; with N = 2^256 and
	// d = target + 1 that is floor((N - d) / d) + 1 = floor(N / d).
	den := target.Add(target, big.NewInt(1))
	num := new(big.Int).Lsh(big.NewInt(1), 256)
	return num.Quo(num, den)
}

// HashToBig interprets a block hash as the little-endian 256-bit integer
// Core's UintToArith256 makes of it.
func HashToBig(h wire.Hash) *big.Int {
	var be [32]byte
	for i := range h {
		be[i] = h[31-i]
	}
	return new(big.Int).SetBytes(be[:])
}

// CheckProofOfWork reports whether hash satisfies the compact target bits
// under p's proof-of-work limit (Core's CheckProofOfWork). Every failure,
// including a negative, zero, overflowing or above-limit target, is the
// RuleError "high-hash", the reason CheckBlockHeader gives.
func CheckProofOfWork(hash wire.Hash, bits uint32, p *params.Params) error {
	target, neg, over := CompactToBig(bits)
	switch {
	case neg:
		return ruleErr("high-hash", "negative target in nBits %08x", bits)
	case over:
		return ruleErr("high-hash", "target overflow in nBits %08x", bits)
	case target.Sign() == 0:
		return ruleErr("high-hash", "zero target in nBits %08x", bits)
	case target.Cmp(p.PowLimit) > 0:
		return ruleErr("high-hash", "nBits %08x above the proof-of-work limit", bits)
	}
	if HashToBig(hash).Cmp(target) > 0 {
		return ruleErr("high-hash", "proof of work failed: hash %s above target of nBits %08x", hash, bits)
	}
	return nil
}

// NextWorkRequired returns the compact target the block after prev must
// carry (Core's GetNextWorkRequired and CalculateNextWorkRequired). header
// supplies the new block's time for the testnet minimum-difficulty rule. A
// nil prev (the genesis block) gets the proof-of-work limit.
func NextWorkRequired(prev *BlockNode, header *wire.Header, p *params.Params) uint32 {
	if prev == nil {
		return p.PowLimitBits
	}
	interval := p.DifficultyAdjustmentInterval()
	if interval <= 0 {
		return prev.Header.Bits
	}
	if (prev.Height+1)%interval != 0 {
		if p.PowAllowMinDifficulty {
			// Special testnet rule: a block more than twice the target
			// spacing after its parent must be a minimum-difficulty block.
			spacing := int64(p.TargetSpacing / time.Second)
			if header != nil && int64(header.Time) > int64(prev.Header.Time)+spacing*2 {
				return p.PowLimitBits
			}
			// Otherwise return the last non-minimum-difficulty bits.
			n := prev
			for n.Parent != nil && n.Height%interval != 0 && n.Header.Bits == p.PowLimitBits {
				n = n.Parent
			}
			return n.Header.Bits
		}
		return prev.Header.Bits
	}
	first := prev.Ancestor(prev.Height - (interval - 1))
	if first == nil {
		return prev.Header.Bits // unreachable for a linked node
	}
	return calculateNextWorkRequired(prev, first, p)
}

// CalculateNextWorkRequired is Core's CalculateNextWorkRequired for a
// retarget: the previous target scaled by the actual timespan of the period
// (last block time minus firstBlockTime) clamped to [timespan/4, timespan*4],
// capped at the proof-of-work limit. lastBits is the base target: the last
// block's bits, or under BIP94 the first block's of the period. Products are
// exact; Core's 256-bit arithmetic gives the same result for every target up
// to 2^233, which covers every network's limit.
func CalculateNextWorkRequired(lastBits uint32, lastTime, firstBlockTime int64, p *params.Params) uint32 {
	if p.PowNoRetargeting {
		return lastBits
	}
	timespan := int64(p.TargetTimespan / time.Second)
	actual := lastTime - firstBlockTime
	if actual < timespan/4 {
		actual = timespan / 4
	}
	if actual > timespan*4 {
		actual = timespan * 4
	}
	target, _, _ := CompactToBig(lastBits)
	target.Mul(target, big.NewInt(actual))
	target.Quo(target, big.NewInt(timespan))
	if target.Cmp(p.PowLimit) > 0 {
		target.Set(p.PowLimit)
	}
	return BigToCompact(target)
}

// calculateNextWorkRequired picks the base bits (BIP94: the first block of
// the period) and retargets.
func calculateNextWorkRequired(last, first *BlockNode, p *params.Params) uint32 {
	if p.PowNoRetargeting {
		return last.Header.Bits
	}
	base := last.Header.Bits
	if p.EnforceBIP94 {
		base = first.Header.Bits
	}
	return CalculateNextWorkRequired(base, int64(last.Header.Time), int64(first.Header.Time), p)
}
