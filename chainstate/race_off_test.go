//go:build !race

package chainstate

const raceBuild = false
