package sha256x

import (
	"crypto/sha256"
	"fmt"
	"sync/atomic"
)

// Kernel names (Hasher.Kernel).
const (
	KernelStdlib = "stdlib" // crypto/sha256 per message
	KernelAVX512 = "avx512" // 16 messages per kernel call
)

// Hasher hashes batches of messages. Its scratch memory is reused across
// calls, so a Hasher must not be used by two goroutines at once. The zero
// value hashes with crypto/sha256, as NewStdlib's does.
type Hasher struct {
	multi bool // the AVX-512 kernel runs on this host
	m     multiScratch
}

// KernelAuto names the choice of the fastest kernel the host runs
// (SetDefault).
const KernelAuto = "auto"

// auto: New returns NewAuto's Hasher (SetDefault).
var auto atomic.Bool

// SetDefault selects the kernel of the Hashers New returns from now on:
// KernelStdlib (the default) or KernelAuto. Only a program's main sets it,
// once, before blocks are parsed.
func SetDefault(name string) error {
	switch name {
	case KernelStdlib:
		auto.Store(false)
	case KernelAuto:
		auto.Store(true)
	default:
		return fmt.Errorf("sha256x: unknown kernel %q (want %s or %s)", name, KernelStdlib, KernelAuto)
	}
	return nil
}

// New returns a Hasher on the kernel SetDefault selected (crypto/sha256
// unless it selected auto).
func New() *Hasher {
	if auto.Load() {
		return NewAuto()
	}
	return NewStdlib()
}

// NewAuto returns a Hasher using the fastest kernel the host runs.
func NewAuto() *Hasher { return newHasher(hostMulti()) }

// NewStdlib returns a Hasher that always uses crypto/sha256 (the control
// arm of benchmarks and tests).
func NewStdlib() *Hasher { return newHasher(false) }

func newHasher(multi bool) *Hasher { return &Hasher{multi: multi} }

// Kernel names the kernel h uses for batches large enough.
func (h *Hasher) Kernel() string {
	if h.multi {
		return KernelAVX512
	}
	return KernelStdlib
}

// DoubleSums sets out[i] = SHA-256(SHA-256(msgs[i])) for every i; out must
// be at least as long as msgs. The messages are only read.
func (h *Hasher) DoubleSums(out [][32]byte, msgs [][]byte) {
	out = out[:len(msgs)]
	if h.multi && len(msgs) >= minMulti {
		h.m.sums(out, msgs)
		return
	}
	stdlibSums(out, msgs)
}

// stdlibSums is DoubleSums through crypto/sha256.
func stdlibSums(out [][32]byte, msgs [][]byte) {
	for i, m := range msgs {
		first := sha256.Sum256(m)
		out[i] = sha256.Sum256(first[:])
	}
}
