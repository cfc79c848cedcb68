#!/bin/sh
# bench/results/scale.md: a mainnet-shaped set of N coins (testkit/cmd/mainnetgen,
# headers from height 1 to 880,000) through every step of a snapshot's life on
# each store, each step a whole process under /usr/bin/time (wall, CPU, peak RSS):
#   load+index  snapshot load --headers --index scripthash (then index verify, untimed)
#   load        snapshot load --headers, no index
#   index build utxod index build on that datadir
#   hash_serialized_3, muhash   utxod chainstate --hash-type ... (checked against expect.json)
#   dump        snapshot dump (cmp byte-identical with the loaded file)
# and the datadir's size on disk with and without the index; then what a user
# does with the loaded datadir (bench/cmd/scalebench, the serving table):
#   serve       on the loaded datadir with the index: outpoint and address
#               lookups under load (blocks POSTed meanwhile if BLOCKS), paging
#               the largest whale, restarts after SIGKILL, a cold page cache
#   scan        POST /v1/scan on the plain load, before its index is built
#   sh bench/scripts/scale-bench.sh N [STORES]
# Env: BIN (bin), WORK (/work/tmp-scale-bench), OUT (bench/results/scale.md),
# KEEP=1 keeps the generated set, SERVE=0 skips scalebench, SERVE_FLAGS (extra
# flags of scalebench serve), BLOCKS (a Core blk-framed file extending the
# set's tip; default GEN/blocks.dat if the generator wrote one). Needs
# bin/utxod (-tags rocksdb), bin/mainnetgen and bin/scalebench.
set -eu
N=${1:?usage: scale-bench.sh N [STORES]}
STORES=${2:-"pebble rocksdb bbolt"}
BIN=${BIN:-bin}
WORK=${WORK:-/work/tmp-scale-bench}
OUT=${OUT:-bench/results/scale.md}
GEN=$WORK/gen-$N
mkdir -p "$WORK"
if [ ! -f "$GEN/expect.json" ]; then
	"$BIN/mainnetgen" --coins "$N" --seed 1 --network regtest --out "$GEN" 2>"$WORK/gen.err" || { cat "$WORK/gen.err" >&2; exit 1; }
fi
field() { sed -n "s/^  \"$1\": \"\{0,1\}\([0-9a-f]*\)\"\{0,1\},\{0,1\}$/\1/p" "$GEN/expect.json" | head -1; }
HS3=$(field hash_serialized_3)
MUH=$(field muhash)
COINS=$(field coins)
[ "$COINS" = "$N" ] || { echo "expect.json: $COINS coins, want $N" >&2; exit 1; }
ROWS=$WORK/rows SROWS=$WORK/serve-rows
: >"$ROWS"
: >"$SROWS"
BLOCKS=${BLOCKS:-}
[ -z "$BLOCKS" ] && [ -f "$GEN/blocks.dat" ] && BLOCKS=$GEN/blocks.dat
serveargs="--snapshot $GEN/utxo.dat --expect $GEN/expect.json"
# t STORE STEP cmd...: one timed row (coins/s from N).
t() {
	s=$1 step=$2; shift 2
	/usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$@" >"$WORK/out" 2>"$WORK/err" || { echo "$s $step failed:" >&2; tail -5 "$WORK/err" >&2; exit 1; }
	read -r wall user sys rss <"$WORK/time"
	awk -v s="$s" -v step="$step" -v w="$wall" -v u="$user" -v y="$sys" -v r="$rss" -v n="$N" 'BEGIN {
		printf "| %s | %s | %.1f | %.1f | %.0f | %.3f |\n", s, step, w, u + y, r / 1024, (w > 0 ? n / w / 1e6 : 0) }' >>"$ROWS"
}
size() { du -sb "$1" | awk '{ printf "%.0f", $1 / 1048576 }'; }
for s in $STORES; do
	IX=$WORK/ix-$s PL=$WORK/pl-$s
	rm -rf "$IX" "$PL" "$IX.snapshot-loading" "$PL.snapshot-loading" "$WORK/dump-$s.dat"
	common="--backend $s --network regtest --expect-hash $HS3 --headers $GEN/headers.dat --log-level warn"
	t "$s" "load + index" "$BIN/utxod" snapshot load "$GEN/utxo.dat" --datadir "$IX" $common --index scripthash
	ixsize=$(size "$IX")
	"$BIN/utxod" index verify --datadir "$IX" --log-level warn >/dev/null || { echo "$s: index verify failed" >&2; exit 1; }
	if [ "${SERVE:-1}" != 0 ]; then
		# shellcheck disable=SC2086 # word splitting intended
		"$BIN/scalebench" serve --utxod "$BIN/utxod" --datadir "$IX" $serveargs --label "$s" \
			${BLOCKS:+--blocks "$BLOCKS"} ${SERVE_FLAGS:-} >>"$SROWS" 2>"$WORK/serve.err" || { echo "$s scalebench serve failed:" >&2; tail -20 "$WORK/serve.err" >&2; exit 1; }
	fi
	rm -rf "$IX"
	t "$s" "load" "$BIN/utxod" snapshot load "$GEN/utxo.dat" --datadir "$PL" $common
	plsize=$(size "$PL")
	if [ "${SERVE:-1}" != 0 ]; then
		# shellcheck disable=SC2086
		"$BIN/scalebench" scan --utxod "$BIN/utxod" --datadir "$PL" $serveargs --label "$s" >>"$SROWS" 2>"$WORK/scan.err" ||
			{ echo "$s scalebench scan failed:" >&2; tail -20 "$WORK/scan.err" >&2; exit 1; }
	fi
	t "$s" "index build" "$BIN/utxod" index build --datadir "$PL" --log-level warn
	"$BIN/utxod" index verify --datadir "$PL" --log-level warn >/dev/null || { echo "$s: index verify after build failed" >&2; exit 1; }
	t "$s" "hash_serialized_3" "$BIN/utxod" chainstate --network regtest --backend "$s" --datadir "$PL" --hash-type hash_serialized_3 --log-level warn
	grep -q "$HS3" "$WORK/out" || { echo "$s: hash_serialized_3 differs" >&2; exit 1; }
	t "$s" "muhash" "$BIN/utxod" chainstate --network regtest --backend "$s" --datadir "$PL" --hash-type muhash --log-level warn
	grep -q "$MUH" "$WORK/out" || { echo "$s: muhash differs" >&2; exit 1; }
	t "$s" "dump" "$BIN/utxod" snapshot dump --network regtest --backend "$s" --datadir "$PL" -o "$WORK/dump-$s.dat" --log-level warn
	cmp "$WORK/dump-$s.dat" "$GEN/utxo.dat" || { echo "$s: the dump differs from the loaded file" >&2; exit 1; }
	echo "| $s | datadir size after the load (MiB): $plsize without the index, $ixsize with it | | | | |" >>"$ROWS"
	rm -rf "$PL" "$WORK/dump-$s.dat"
done
{
	echo "# Scale: load, index, digests and dump of $N mainnet-shaped coins"
	echo
	echo "Reproduce: \`make bench-scale N=$N\` (bench/scripts/scale-bench.sh; set by \`mainnetgen --coins $N --seed 1\`, headers from"
	echo "height 1 to 880,000, $(wc -c <"$GEN/utxo.dat") bytes). $(nproc) cpus ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)), shared;"
	echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%d)."
	echo "Each step is one process under /usr/bin/time: CPU is user + system, RSS the peak resident set; every load checks"
	echo "hash_serialized_3, the loaded indexes pass \`utxod index verify\`, both digests equal expect.json and every dump is"
	echo "byte-identical with the loaded file. Default --cache-mb (450)."
	echo
	echo "| store | step | wall s | CPU s | peak RSS MiB | M coins/s |"
	echo "|---|---|---:|---:|---:|---:|"
	cat "$ROWS"
	if [ -s "$SROWS" ]; then
		echo
		echo "## Serving the loaded datadir"
		echo
		echo "\`scalebench serve\` (bench/cmd/scalebench) starts \`utxod serve\` on the datadir loaded with the index and drives it over"
		echo "loopback from its own process, which shares the CPUs with the server (CPU per request below splits the two)."
		echo "Lookups: closed-loop keep-alive connections, keys drawn from the snapshot over the"
		echo "whole key space, interleaved rounds, median round (min–max). Blocks POSTed: ${BLOCKS:+those of $(basename "$BLOCKS")}${BLOCKS:-none}."
		echo "\`scalebench scan\` runs on the plain load before its index is built. Reproduce:"
		echo "\`make bench-scale N=$N SCALE_STORES=\"$STORES\"${SERVE_FLAGS:+ SCALE_SERVE_FLAGS=\"$SERVE_FLAGS\"}\`."
		echo
		echo "| store | measurement | figure | goal |"
		echo "|---|---|---|---|"
		cat "$SROWS"
	fi
} >"$OUT"
[ "${KEEP:-}" = 1 ] || rm -rf "$GEN"
cat "$OUT"
