// Package gate is utxod's performance gate: with the runner of
// bench it runs a control and a candidate arm of `utxod import`
// alternately (ABBA) as child processes on fresh data directories for every
// store, measures wall time (monotonic), user+system CPU and peak RSS (the
// child's rusage), checks that every run reaches the corpus tip with
// identical chainstate digests, and decides promote, revert or invalid by
// the rule in Decide. The result is a custody record (JSON, schema
// docs/gate-custody.schema.json) and a Markdown report with an SVG chart.
//
// Arms are shell-free argv templates (see Template and Placeholders); two
// binaries built from two commits, or one binary with different flags.
// bench/cmd/gate is the command line; `make gate` builds and runs it.
package gate
