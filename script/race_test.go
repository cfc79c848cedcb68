//go:build race

package script

// raceEnabled: the race detector instruments allocations, so allocation
// counts are meaningless under -race.
const raceEnabled = true
