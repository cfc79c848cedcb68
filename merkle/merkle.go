package merkle

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"utxod/wire"
)

// Kernel names accepted by New. "auto" picks the fastest kernel that the CPU
// and OS support and that passes the start-up self-test.
const (
	KernelAuto    = "auto"
	KernelGeneric = "generic" // pure-Go SHA-256 compression, always available
	KernelStdlib  = "stdlib"  // crypto/sha256 applied twice, for comparison
	KernelAVX2    = "avx2"    // 8 lanes in YMM registers
	KernelSHANI   = "shani"   // two interleaved SHA-NI streams
	KernelAVX512  = "avx512"  // 16 lanes in ZMM registers (AVX-512F+BW)
)

// DefaultKernel is the kernel New("") and Default use: the fastest kernel
// the CPU has, with the generic one as fallback.
const DefaultKernel = KernelAuto

var (
	// ErrUnknownKernel reports a kernel name New does not know.
	ErrUnknownKernel = errors.New("merkle: unknown kernel")
	// ErrKernelUnsupported reports a known kernel that this CPU, OS or build
	// cannot run (for example avx512 on a CPU without AVX-512, or any vector
	// kernel in a purego or non-amd64 build).
	ErrKernelUnsupported = errors.New("merkle: kernel not supported on this host")
	// ErrNoLeaves reports a merkle tree without leaves; a block always has at
	// least its coinbase.
	ErrNoLeaves = errors.New("merkle: no leaves")
	// ErrLevelSize reports HashLevel slices of inconsistent lengths.
	ErrLevelSize = errors.New("merkle: bad level sizes")
)

// kernel is one implementation of the pair-hashing level function.
type kernel struct {
	name string
	// pairs sets dst[i] = SHA-256d(src[2i] || src[2i+1]) for all i < len(dst).
	// len(src) == 2*len(dst) and dst is either disjoint from src or equal to
	// src[:len(dst)] (in place). It must not allocate.
	pairs func(dst, src []wire.Hash)
}

// Hasher computes SHA-256d of 64-byte pairs and merkle roots with one
// kernel. It is safe for concurrent use; the zero value is not usable, build
// it with New or Default.
type Hasher struct {
	k       kernel
	scratch sync.Pool // *[]wire.Hash, reused across Root calls
}

// New returns a Hasher using the named kernel (see Kernel* constants; ""
// means auto). An unknown name wraps ErrUnknownKernel; a kernel the host
// cannot run wraps ErrKernelUnsupported, so asking for one never executes an
// illegal instruction. The chosen kernel is self-tested against the generic
// one; on mismatch New logs an error on log (nil means slog.Default()) and
// falls back to generic.
func New(name string, log *slog.Logger) (*Hasher, error) {
	if log == nil {
		log = slog.Default()
	}
	if name == "" {
		name = DefaultKernel
	}
	k := kernel{name: KernelGeneric, pairs: hashPairsGeneric}
	if name == KernelAuto {
		for _, n := range autoOrder {
			if fn, ok := lookup(n); ok {
				k = kernel{name: n, pairs: fn}
				break
			}
		}
	} else {
		if !known(name) {
			return nil, fmt.Errorf("%w: %q (want auto, generic, stdlib, avx2, shani or avx512)", ErrUnknownKernel, name)
		}
		fn, ok := lookup(name)
		if !ok {
			return nil, fmt.Errorf("%w: %q (available: %v)", ErrKernelUnsupported, name, Available())
		}
		k = kernel{name: name, pairs: fn}
	}
	if err := selfTest(k.pairs); err != nil {
		log.Error("merkle kernel failed self-test, falling back to generic",
			slog.String("kernel", k.name), slog.Any("err", err))
		k = kernel{name: KernelGeneric, pairs: hashPairsGeneric}
	} else {
		log.Debug("merkle kernel selected", slog.String("kernel", k.name), slog.String("requested", name))
	}
	return &Hasher{k: k}, nil
}

func known(name string) bool {
	switch name {
	case KernelGeneric, KernelStdlib, KernelAVX2, KernelSHANI, KernelAVX512:
		return true
	}
	return false
}

// lookup returns the level function of a named kernel if the host can run it.
func lookup(name string) (func(dst, src []wire.Hash), bool) {
	switch name {
	case KernelGeneric:
		return hashPairsGeneric, true
	case KernelStdlib:
		return hashPairsStdlib, true
	}
	return lookupArch(name)
}

// Available lists the kernels this host can run, fastest first as measured
// (see bench/results/merkle.md); "auto" picks the first of them.
func Available() []string {
	var out []string
	for _, name := range autoOrder {
		if _, ok := lookup(name); ok {
			out = append(out, name)
		}
	}
	return append(out, KernelStdlib)
}

var defaultHasher = sync.OnceValue(func() *Hasher {
	h, _ := New(DefaultKernel, nil) // auto always succeeds
	return h
})

// Default returns the process-wide Hasher on DefaultKernel, built on first
// use. A program that wants another kernel builds its Hasher with New.
func Default() *Hasher { return defaultHasher() }

// Root computes the merkle root of leaves with Default(); see Hasher.Root.
func Root(leaves []wire.Hash) (root wire.Hash, mutated bool) { return Default().Root(leaves) }

// Name reports the kernel in use (after any self-test fallback).
func (h *Hasher) Name() string { return h.k.name }

// HashLevel sets dst[i] = SHA-256d(src[2i] || src[2i+1]) for every i <
// len(src)/2 and returns that count. len(src) must be even and len(dst) at
// least len(src)/2, otherwise it returns ErrLevelSize and writes nothing.
// dst may be disjoint from src or start at &src[0] (in-place hashing of one
// tree level); any other overlap gives unspecified results. No allocation.
func (h *Hasher) HashLevel(dst, src []wire.Hash) (int, error) {
	if len(src)%2 != 0 || len(dst) < len(src)/2 {
		return 0, fmt.Errorf("%w: len(dst)=%d len(src)=%d", ErrLevelSize, len(dst), len(src))
	}
	n := len(src) / 2
	if n > 0 {
		h.k.pairs(dst[:n], src)
	}
	return n, nil
}

// Root returns the merkle root of leaves (txids in internal byte order) by
// exactly Bitcoin Core's ComputeMerkleRoot: an odd level duplicates its last
// hash, and mutated reports whether any level had two equal adjacent hashes
// (CVE-2012-2459), not counting the duplicated padding. One leaf is its own
// root. Zero leaves give the zero hash and false, as Core does; callers that
// validate blocks should use RootChecked. leaves is not modified; Root
// allocates nothing per node (one pooled scratch buffer per call).
func (h *Hasher) Root(leaves []wire.Hash) (root wire.Hash, mutated bool) {
	n := len(leaves)
	switch n {
	case 0:
		return wire.Hash{}, false
	case 1:
		return leaves[0], false
	}
	bp, _ := h.scratch.Get().(*[]wire.Hash)
	if bp == nil || cap(*bp) < n+1 {
		b := make([]wire.Hash, n+1)
		bp = &b
	}
	buf := (*bp)[:n+1]
	copy(buf, leaves)
	for n > 1 {
		for i := 0; i+1 < n; i += 2 {
			if buf[i] == buf[i+1] {
				mutated = true
			}
		}
		if n&1 == 1 {
			buf[n] = buf[n-1]
			n++
		}
		n /= 2
		h.k.pairs(buf[:n], buf[:2*n])
	}
	root = buf[0]
	h.scratch.Put(bp)
	return root, mutated
}

// RootChecked is Root but returns ErrNoLeaves for an empty leaf list.
func (h *Hasher) RootChecked(leaves []wire.Hash) (root wire.Hash, mutated bool, err error) {
	if len(leaves) == 0 {
		return wire.Hash{}, false, ErrNoLeaves
	}
	root, mutated = h.Root(leaves)
	return root, mutated, nil
}
