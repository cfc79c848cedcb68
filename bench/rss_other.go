//go:build !linux

package bench

// ResetPeakRSS does nothing outside Linux (see rss_linux.go) and returns 0.
func ResetPeakRSS() (int64, error) { return 0, nil }
