//go:build race

package chainstate

// raceBuild is true when the race detector is on (make test's -race -short
// pass).
const raceBuild = true
