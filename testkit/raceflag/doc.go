// Package raceflag tells tests whether the race detector is on: it
// instruments allocations (allocation counts mean nothing) and slows
// long sequential tests several-fold.
package raceflag
