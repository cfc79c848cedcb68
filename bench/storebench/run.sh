#!/usr/bin/env bash
# Storage benchmark (bench/results/storage.md). Runs everything sequentially and writes one JSON file per
# measurement into $OUT; bench/storebench/report.py turns them into the tables and the SVG.
#
#   bench/storebench/run.sh [phase...]    phases: build gen connect rss read growth (default: all)
#
# Environment: OUT (default /tmp/storebench-out), WORK (datadirs and corpora, default /tmp/storebench-work),
# RUNS (default 3), STORES (default "pebble rocksdb bbolt"), GROWTH_UTXOS (default 10000000), G1_OUTPUTS
# (default 1000000), WITH_MAINNET (default 1; 0 skips the mainnet replays),
# BIN (default $WORK/storebench), BEFORE_BIN (optional: a second build measured in the rss phase).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/storebench-out}
WORK=${WORK:-/tmp/storebench-work}
RUNS=${RUNS:-3}
STORES=${STORES:-"pebble rocksdb bbolt"}
GROWTH_UTXOS=${GROWTH_UTXOS:-10000000}
GROWTH_STOP=${GROWTH_STOP:-} # stop the growth replays at this UTXO count (empty: the whole chain)
G1_OUTPUTS=${G1_OUTPUTS:-1000000}
WITH_MAINNET=${WITH_MAINNET:-1}
BIN=${BIN:-$WORK/storebench}
MAINNET=testdata/mainnet/blk_0_to_14131.dat
G1=$WORK/gen-1m-outputs.dat
GG=$WORK/gen-growth.dat
mkdir -p "$OUT" "$WORK"
phases=${*:-build gen connect rss read growth}

note() { echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" >&2; }
# run NAME CMD...: runs CMD, stores its JSON stdout in $OUT/NAME.json with the command and load average.
run() {
  local name=$1; shift
  note "$name: $*"
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  local res; res=$("$@")
  printf '{"name":"%s","load":%s,"cmd":"%s","result":%s}\n' "$name" "$load" "$*" "$res" >"$OUT/$name.json"
}

for ph in $phases; do
  case $ph in
  build)
    go build -tags rocksdb -o "$BIN" ./bench/cmd/storebench ;;
  gen)
    run gen-1m "$BIN" gen --target-outputs "$G1_OUTPUTS" --seed 1 --out "$G1"
    run gen-growth "$BIN" gen --target-utxos "$GROWTH_UTXOS" --seed 2 --out "$GG" ;;
  connect)
    # Item 1: replays with a 16 MiB cache (as BenchmarkConnectMainnetStore), RUNS times, stores interleaved.
    for r in $(seq 1 "$RUNS"); do
      for s in $STORES; do
        rm -rf "$WORK/dd"
        [ "$WITH_MAINNET" = 1 ] && run "connect-mainnet-$s-$r" "$BIN" connect --network main --backend "$s" --datadir "$WORK/dd" --cache-mb 16 "$MAINNET"
        rm -rf "$WORK/dd"
        run "connect-gen1m-$s-$r" "$BIN" connect --network regtest --backend "$s" --datadir "$WORK/dd" --cache-mb 16 "$G1"
      done
    done
    rm -rf "$WORK/dd" ;;
  rss)
    # Item 4: a cache that holds everything (4 GiB budget), final flush only. The datadirs are kept for read.
    for s in $STORES; do
      for b in ${BEFORE_BIN:+before} after; do
        bin=$BIN; [ "$b" = before ] && bin=$BEFORE_BIN
        rm -rf "$WORK/rss-$s-$b" "$WORK/rssm-$s-$b"
        [ "$WITH_MAINNET" = 1 ] && run "rss-mainnet-$s-$b" "$bin" connect --network main --backend "$s" --datadir "$WORK/rssm-$s-$b" --cache-mb 4096 "$MAINNET"
        run "rss-gen1m-$s-$b" "$bin" connect --network regtest --backend "$s" --datadir "$WORK/rss-$s-$b" --cache-mb 4096 "$G1"
        rm -rf "$WORK/rssm-$s-$b"
        [ "$b" = before ] && rm -rf "$WORK/rss-$s-$b"
      done
    done ;;
  read)
    # Items 2 and 3 on the datadirs of the rss phase (1M-output chain, one final flush).
    for s in $STORES; do
      d=$WORK/rss-$s-after
      run "sample-$s" "$BIN" sample --backend "$s" --datadir "$d" --n 100000 --out "$WORK/sample-$s"
      for r in $(seq 1 "$RUNS"); do
        run "read-warmpc-$s-$r" "$BIN" read --network regtest --backend "$s" --datadir "$d" --sample "$WORK/sample-$s"
        run "read-coldpc-$s-$r" "$BIN" read --network regtest --backend "$s" --datadir "$d" --sample "$WORK/sample-$s" --drop-page-cache
      done
      run "size-$s" "$BIN" size --backend "$s" --datadir "$d"
      rm -rf "$WORK/coins-$s"
      run "sizecoins-$s" "$BIN" size --backend "$s" --datadir "$d" --coins-only "$WORK/coins-$s"
      rm -rf "$WORK/coins-$s"
    done ;;
  growth)
    # Item 5: one replay per store of the growth chain, default cache (450 MiB), an explicit flush every
    # 50 blocks (≈ 320k new coins), checkpoints from 10^4 to the end.
    for s in $STORES; do
      rm -rf "$WORK/growth"
      run "growth-$s" "$BIN" connect --network regtest --backend "$s" --datadir "$WORK/growth" --cache-mb 450 \
        --flush-every 50 --checkpoints 1e4,3e4,1e5,3e5,1e6,2e6,3e6,5e6,7e6,1e7 ${GROWTH_STOP:+--stop-utxos $GROWTH_STOP} "$GG"
      rm -rf "$WORK/growth"
    done ;;
  *) echo "unknown phase $ph" >&2; exit 2 ;;
  esac
done
note done
