//go:build !(linux || darwin || freebsd)

package diskspace

func available(string) (uint64, error) { return 0, ErrUnsupported }
