package sha256x

import (
	"crypto/sha256"
	"os"
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

// EnvKernel is the environment variable that selects New's kernel: unset
// or "stdlib", crypto/sha256 per message (the default: the kernel gave no
// whole-process win, bench/decisions.md); "auto", the
// fastest kernel the host runs.
const EnvKernel = "UTXOD_TXID_KERNEL"

// New returns the Hasher EnvKernel selects.
func New() *Hasher {
	if os.Getenv(EnvKernel) == "auto" {
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
