//go:build !linux

package bbolt

import bolt "go.etcd.io/bbolt"

// releaseMapped does nothing here: only Linux's is measured.
func releaseMapped(*bolt.Tx) {}

// willNeed does nothing here: only Linux's is measured.
func willNeed(_, _, _, _ uintptr) {}

// resident cannot tell here: every page is asked for (willNeed does nothing).
func resident(_, _ uintptr) bool { return false }
