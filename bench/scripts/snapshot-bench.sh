#!/bin/sh
# Whole-process figures of bench/results/snapshot.md: for each store, an
# import of the fan-out chain, then snapshot dump, verify and load of its UTXO
# set, each under /usr/bin/time (wall, user, system, peak RSS), ROUNDS times.
#   sh bench/scripts/snapshot-bench.sh [COINS] [ROUNDS] [STORES]
# Needs bin/utxod built with -tags rocksdb (make build) and GNU time.
set -eu
COINS=${1:-2000000}
ROUNDS=${2:-3}
STORES=${3:-"pebble rocksdb bbolt"}
BIN=${BIN:-bin/utxod}
WORK=${WORK:-$(mktemp -d /tmp/utxod-snapbench.XXXXXX)}
CHAIN=$WORK/fanout-$COINS.dat
[ -f "$CHAIN" ] || UTXOD_SNAPBENCH_COINS=$COINS UTXOD_SNAPBENCH_WRITE=$CHAIN \
	go test -count=1 -run '^TestWriteFanoutCorpus$' ./snapshot/ >/dev/null
echo "# coins=$COINS rounds=$ROUNDS chain=$CHAIN ($(wc -c <"$CHAIN") bytes) $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "store round step wall_s user_s sys_s maxrss_kb"
t() { # t STORE ROUND STEP cmd...
	s=$1 r=$2 step=$3; shift 3
	/usr/bin/time -f "$s $r $step %e %U %S %M" -o "$WORK/time" "$@" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err" >&2; exit 1; }
	cat "$WORK/time"
}
for r in $(seq "$ROUNDS"); do
	for s in $STORES; do
		rm -rf "$WORK/imp-$s" "$WORK/load-$s" "$WORK/$s.snap"
		t "$s" "$r" import "$BIN" import --network regtest --backend "$s" --datadir "$WORK/imp-$s" --log-level warn "$CHAIN"
		t "$s" "$r" dump "$BIN" snapshot dump --network regtest --backend "$s" --datadir "$WORK/imp-$s" -o "$WORK/$s.snap" --log-level warn
		"$BIN" chainstate --network regtest --backend "$s" --datadir "$WORK/imp-$s" --hash-type hash_serialized_3 --json --log-level warn >"$WORK/info"
		H=$(sed -n 's/.*"hash_serialized_3": "\(.*\)".*/\1/p' "$WORK/info")
		N=$(sed -n 's/.*"height": \([0-9]*\).*/\1/p' "$WORK/info")
		t "$s" "$r" verify "$BIN" snapshot verify "$WORK/$s.snap" --expect-hash "$H" --height "$N" --log-level warn
		t "$s" "$r" load "$BIN" snapshot load "$WORK/$s.snap" --backend "$s" --datadir "$WORK/load-$s" --expect-hash "$H" --height "$N" --log-level warn
		cmp "$WORK/pebble.snap" "$WORK/$s.snap" 2>/dev/null || [ ! -f "$WORK/pebble.snap" ] || { echo "dumps differ" >&2; exit 1; }
	done
done
