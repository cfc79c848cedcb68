#!/bin/sh
# bench/results/scale.md's before/after table: two utxod binaries (arms A and B) on one
# mainnetgen set (GEN: utxo.dat, headers.dat, expect.json), interleaved (A B, then B A, ...), each
# step one process under /usr/bin/time: snapshot load --index scripthash, snapshot load, index
# build on that datadir; B's indexes pass `utxod index verify` in the first round.
#   sh bench/scripts/load-ab.sh BIN_A BIN_B GEN [ROUNDS] [STORES]
# Env: WORK (/work/tmp-load-ab), OUT (WORK/results.tsv: arm store step round wall user sys
# maxrssKB loadavg), ONLYIX=1 times the load with the index only.
set -u
A=${1:?usage: load-ab.sh BIN_A BIN_B GEN [ROUNDS] [STORES]} B=${2:?} G=${3:?}
ROUNDS=${4:-2} STORES=${5:-pebble}
WORK=${WORK:-/work/tmp-load-ab} OUT=${OUT:-${WORK:-/work/tmp-load-ab}/results.tsv}
HS=$(sed -n 's/^  "hash_serialized_3": "\([0-9a-f]*\)",*$/\1/p' "$G/expect.json")
mkdir -p "$WORK"
t() { # arm store step round cmd...
	arm=$1 s=$2 step=$3 run=$4; shift 4
	la=$(cut -d' ' -f1 /proc/loadavg)
	/usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$@" >"$WORK/out" 2>"$WORK/err" || { echo "FAIL $arm $s $step" >>"$OUT"; tail -3 "$WORK/err" >>"$OUT"; return 1; }
	echo "$arm	$s	$step	$run	$(cat "$WORK/time")	$la" >>"$OUT"
}
verify() { # arm store what datadir
	"$BIN" index verify --datadir "$4" --log-level warn >/dev/null 2>&1 && r=ok || r=FAILED
	echo "$1	$2	verify-$3	$r" >>"$OUT"
}
for r in $(seq 1 "$ROUNDS"); do
	for s in $STORES; do
		if [ $((r % 2)) = 1 ]; then arms="A B"; else arms="B A"; fi
		for a in $arms; do
			if [ "$a" = A ]; then BIN=$A; else BIN=$B; fi
			D=$WORK/d-$a-$s
			common="--backend $s --network regtest --expect-hash $HS --headers $G/headers.dat --log-level warn"
			rm -rf "$D" "$D.snapshot-loading"
			t "$a" "$s" load+index "$r" "$BIN" snapshot load "$G/utxo.dat" --datadir "$D" $common --index scripthash
			echo "$a	$s	size-with-index	$r	$(du -sb "$D" | cut -f1)" >>"$OUT"
			[ "$r" = 1 ] && [ "$a" = B ] && verify "$a" "$s" load+index "$D"
			rm -rf "$D"
			[ "${ONLYIX:-}" = 1 ] && continue
			t "$a" "$s" load "$r" "$BIN" snapshot load "$G/utxo.dat" --datadir "$D" $common
			echo "$a	$s	size-load	$r	$(du -sb "$D" | cut -f1)" >>"$OUT"
			t "$a" "$s" index-build "$r" "$BIN" index build --datadir "$D" --log-level warn
			[ "$r" = 1 ] && [ "$a" = B ] && verify "$a" "$s" build "$D"
			rm -rf "$D"
		done
	done
done
