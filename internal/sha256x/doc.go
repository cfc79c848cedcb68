// Package sha256x computes SHA-256d (SHA-256 applied twice, Bitcoin's
// transaction and block id hash) of many messages of any length at once:
// the transaction ids of a block.
//
// On amd64 hosts with AVX-512 (F and BW, OS-enabled), messages are sorted
// by their number of 64-byte blocks and hashed 16 at a time, one message
// per 32-bit lane, by a kernel generated with avo (merkle/_asm, "multi"):
// each lane walks its own blocks through a table of pointers (the caller's
// bytes, then padding blocks built here) and keeps its state once its
// blocks run out. Groups too small to fill enough lanes, other hosts, and
// purego builds use crypto/sha256 (its SHA-NI code where the CPU has it).
// Both paths are tested against each other and against crypto/sha256. The
// kernel is opt-in (SetDefault(KernelAuto); utxod's UTXOD_DEBUG=txidkernel=auto):
// on the early-chain import it showed no whole-process win over
// crypto/sha256's SHA-NI code.
package sha256x

//go:generate go run -C ../../merkle/_asm . multi -out ../../internal/sha256x/multi_amd64.s -stubs ../../internal/sha256x/multi_amd64.go -pkg sha256x
