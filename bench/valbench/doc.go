// Package valbench is the side-by-side full-validation benchmark
// (bench/results/validation.md, "btcd replay side by side" and "signature
// floor"). On one corpus it runs, as child processes on fresh data
// directories,
//
//   - btcdreplay (btcd's blockchain package, full validation; see
//     bench/btcdreplay), and
//   - `utxod import --backend B` for every store B,
//
// in rotating order (round 1 btcd, pebble, rocksdb, bbolt; round 2 pebble,
// rocksdb, bbolt, btcd; …: no arm runs twice in a row, see bench.Order),
// measuring wall time (monotonic), user+system CPU and peak
// RSS from the children's rusage, and checks that every run reaches the
// corpus tip and that the stores agree on the chainstate. It reports
// medians and the ratios btcd/utxod.
//
// It also computes the signature floor: the ECDSA and Schnorr verifications
// a fresh import actually performs (counted in-process by a CountingVerifier
// around the engine's libsecp256k1 verifier, in the same chainstate,
// validator and script engine `utxod import` uses) times libsecp256k1's
// single-verify cost measured in the same run (a timed loop over signatures
// sampled from the corpus, on one thread, before and after the rounds),
// divided by runtime.NumCPU(). Each store's utxod wall time is reported
// against it. When every counted verification succeeded it also measures
// the work around the signatures — the same in-process import with every
// check answered true — and the wall time of a perfect schedule of that
// work plus the signatures' single-thread CPU on every core.
//
// bench/cmd/valbench is the command line; `make bench-validation`
// builds the binaries and runs it.
package valbench
