//go:build !amd64 || purego

package sha256x

// minMulti is never reached: there is no multi-message kernel here.
const minMulti = 1 << 62

type multiScratch struct{}

func hostMulti() bool { return false }

func (*multiScratch) sums(out [][32]byte, msgs [][]byte) { stdlibSums(out, msgs) }
