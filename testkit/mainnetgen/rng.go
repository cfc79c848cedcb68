package mainnetgen

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// rng draws everything the generator decides. It uses only PCG's Uint64
// (a specified algorithm) and integer arithmetic (the one floating-point
// use is exp2Table, 256 constants rounded to 32 fractional bits), so that a
// seed gives the same bytes on every platform and Go release.
type rng struct{ p *rand.PCG }

func newRNG(seed, stream uint64) *rng { return &rng{rand.NewPCG(seed, stream^0x6d61696e6e657467)} }

func (r *rng) u64() uint64 { return r.p.Uint64() }

// below returns a number in [0, n) (n > 0; multiply-shift, bias < n/2^64).
func (r *rng) below(n uint64) uint64 {
	hi, _ := bits.Mul64(r.p.Uint64(), n)
	return hi
}

// between returns a number in [lo, hi].
func (r *rng) between(lo, hi uint64) uint64 {
	if hi <= lo {
		return lo
	}
	return lo + r.below(hi-lo+1)
}

// perMillion reports true with probability ppm/1e6.
func (r *rng) perMillion(ppm uint64) bool { return r.below(1_000_000) < ppm }

// fill fills b with random bytes.
func (r *rng) fill(b []byte) {
	for len(b) >= 8 {
		v := r.p.Uint64()
		b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
		b = b[8:]
	}
	if len(b) > 0 {
		v := r.p.Uint64()
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
	}
}

// normal20 returns a standard normal deviate times 2^20 (Irwin–Hall: the
// sum of twelve uniforms minus six).
func (r *rng) normal20() int64 {
	var s int64
	for range 6 {
		v := r.p.Uint64()
		s += int64(v&(1<<20-1)) + int64(v>>32&(1<<20-1))
	}
	return s - 6<<20
}

// exp2Table[i] is 2^(i/256) in 32.32 fixed point, rounded.
var exp2Table = func() (t [256]uint64) {
	for i := range t {
		t[i] = uint64(math.Round(math.Exp2(float64(i)/256) * (1 << 32)))
	}
	return t
}()

// pow2 returns 2^(l/256), rounded down, for 0 ≤ l < 63·256.
func pow2(l int64) uint64 {
	if l < 0 {
		return 1
	}
	m, e := exp2Table[l&255], uint(l>>8)
	if e >= 32 {
		return m << (e - 32)
	}
	return m >> (32 - e)
}

// log2x256 returns log2(n)·256 rounded down (n ≥ 1).
func log2x256(n uint64) int64 {
	e := int64(bits.Len64(n) - 1)
	lo, hi := int64(0), int64(255)
	for lo < hi { // largest f with pow2(e·256+f) ≤ n
		mid := (lo + hi + 1) / 2
		if pow2(e*256+mid) <= n {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return e*256 + lo
}

// logUniform returns a number in [lo, hi] whose logarithm is uniform.
func (r *rng) logUniform(lo, hi uint64) uint64 {
	if hi <= lo {
		return lo
	}
	a, b := log2x256(lo), log2x256(hi+1)
	v := pow2(a + int64(r.below(uint64(b-a))))
	return min(max(v, lo), hi)
}

// logNormal returns 2^(mu + sigma·Z) with mu and sigma in 1/256 of a bit.
func (r *rng) logNormal(mu, sigma int64) uint64 {
	return pow2(mu + (sigma*r.normal20())>>20)
}
