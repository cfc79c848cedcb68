// Package bench is the measuring harness of the A/B tools (bench/gate
// and bench/valbench): one Runner runs each arm's command as a child
// process on a fresh data directory, in Order (two arms alternating ABBA,
// more rotating) with a cooldown between runs, and records for every run the wall time (monotonic), the
// user+system CPU time and peak RSS from the child's rusage (after
// ResetPeakRSS lowers the harness's own mark), the exit status, the tail of
// stderr and the datadir's size. Summarize gives medians and spreads;
// HostInfo, GitInfo, BinaryInfo and ScanCorpus identify what was measured.
package bench
