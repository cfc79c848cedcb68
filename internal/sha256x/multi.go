//go:build amd64 && !purego

package sha256x

import (
	"encoding/binary"
	"runtime"
	"slices"
	"unsafe"

	"github.com/klauspost/cpuid/v2"
)

// lanes is the kernel's width: messages per call.
const lanes = 16

// minMulti is the smallest batch worth the kernel: a call costs one
// 16-lane compression per step however many lanes are busy, about as much
// as three or four messages through crypto/sha256 (BenchmarkDoubleSums).
const minMulti = 4

// hostMulti reports whether the host runs the AVX-512 kernel (cpuid reports
// AVX-512 only when the OS has enabled its register state).
func hostMulti() bool {
	return cpuid.CPU.Supports(cpuid.AVX2, cpuid.AVX512F, cpuid.AVX512BW)
}

// multiScratch is the memory a batch needs, kept for the next one.
type multiScratch struct {
	order []msgRef
	// tails holds each lane's padding blocks (the message's last partial
	// block, 0x80, zeros and the bit length): up to two blocks per lane.
	tails [lanes * 128]byte
	ptrs  []uintptr
	nb    [lanes]uint32
	out   [lanes][32]byte
}

// msgRef is a message by index with its number of 64-byte blocks after
// padding.
type msgRef struct {
	blocks int
	i      int
}

// paddedBlocks is the number of 64-byte blocks of an n-byte message once
// padded (0x80 and the 8-byte length need 9 more bytes).
func paddedBlocks(n int) int { return (n + 9 + 63) / 64 }

// sums hashes msgs 16 at a time, grouped by length so that lanes of one
// call finish together; a last group of fewer than minMulti goes to
// crypto/sha256.
func (s *multiScratch) sums(out [][32]byte, msgs [][]byte) {
	s.order = s.order[:0]
	for i, m := range msgs {
		s.order = append(s.order, msgRef{paddedBlocks(len(m)), i})
	}
	slices.SortFunc(s.order, func(a, b msgRef) int { return a.blocks - b.blocks })
	rest := s.order
	for len(rest) >= minMulti {
		n := min(lanes, len(rest))
		s.group(out, msgs, rest[:n])
		rest = rest[n:]
	}
	for _, r := range rest {
		stdlibSums(out[r.i:r.i+1], msgs[r.i:r.i+1])
	}
}

// group hashes up to 16 messages (sorted by blocks) in one kernel call;
// idle lanes hash an empty message whose result is dropped.
func (s *multiScratch) group(out [][32]byte, msgs [][]byte, refs []msgRef) {
	steps := refs[len(refs)-1].blocks
	if cap(s.ptrs) < steps*lanes {
		s.ptrs = make([]uintptr, steps*lanes)
	}
	ptrs := s.ptrs[:steps*lanes]
	for lane := 0; lane < lanes; lane++ {
		var m []byte
		if lane < len(refs) {
			m = msgs[refs[lane].i]
		}
		full := len(m) / 64
		tail := s.tails[lane*128 : lane*128+128]
		r := copy(tail, m[full*64:])
		tail[r] = 0x80
		nb := paddedBlocks(len(m))
		end := (nb - full) * 64
		clear(tail[r+1 : end-8])
		binary.BigEndian.PutUint64(tail[end-8:end], uint64(len(m))*8)
		s.nb[lane] = uint32(nb)
		for j := 0; j < steps; j++ {
			var p unsafe.Pointer
			switch {
			case j < full:
				p = unsafe.Pointer(&m[64*j])
			case j < nb:
				p = unsafe.Pointer(&tail[64*(j-full)])
			default:
				p = unsafe.Pointer(&tail[0]) // read, not hashed
			}
			ptrs[j*lanes+lane] = uintptr(p)
		}
	}
	sha256dMultiAVX512(&s.out[0][0], &ptrs[0], &s.nb[0], steps)
	// The kernel read through uintptrs: keep what they point into alive.
	runtime.KeepAlive(msgs)
	runtime.KeepAlive(s)
	for lane, r := range refs {
		out[r.i] = s.out[lane]
	}
}
