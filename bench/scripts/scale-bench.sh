#!/bin/sh
# bench/results/scale.md: a mainnet-shaped set of N coins (testkit/cmd/mainnetgen,
# headers from height 1 to 880,000) through every step of a snapshot's life on
# each store, each step a whole process under /usr/bin/time (wall, CPU, peak RSS):
#   load+index  snapshot load --headers --index scripthash (then index verify, untimed)
#   load        snapshot load --headers, no index
#   index build utxod index build on that datadir
#   hash_serialized_3, muhash   utxod chainstate --hash-type ... (checked against expect.json)
#   dump        snapshot dump (cmp byte-identical with the loaded file)
#   blocks      on the loaded and indexed datadir, utxod serve takes blocks.dat's blocks (the
#               generator's, real signatures, every script verified) one POST /v1/blocks each,
#               timed per POST by curl; p50/p99/max per kind (old coins, recent coins), then both
#               digests of the chainstate against expect.json's blocks.after and index verify
# and the datadir's size on disk with and without the index; then what a user
# does with the loaded datadir (bench/cmd/scalebench, the serving table):
#   scan        POST /v1/scan on the plain load, before its index is built
#   serve       on the plain load once its index is built: outpoint and address
#               lookups under load (BLOCKS POSTed meanwhile), paging the largest
#               whale, restarts after SIGKILL, a cold page cache
#   sh bench/scripts/scale-bench.sh N [STORES]
# Env: BIN (bin), WORK (/work/tmp-scale-bench), OUT (bench/results/scale.md),
# GEN_FLAGS (more mainnetgen flags: --old-blocks, --recent-blocks, --block-txs),
# KEEP=1 keeps the generated set, SERVE=0 skips scalebench, SERVE_FLAGS (extra
# flags of scalebench serve), BLOCKS (a Core blk-framed file extending the
# set's tip; default GEN/blocks.dat). Needs bin/utxod (-tags rocksdb),
# bin/mainnetgen, bin/scalebench, jq and curl.
set -eu
N=${1:?usage: scale-bench.sh N [STORES]}
STORES=${2:-"pebble rocksdb bbolt"}
BIN=${BIN:-bin}
WORK=${WORK:-/work/tmp-scale-bench}
OUT=${OUT:-bench/results/scale.md}
GEN=$WORK/gen-$N
mkdir -p "$WORK"
if [ ! -f "$GEN/expect.json" ]; then
	"$BIN/mainnetgen" --coins "$N" --seed 1 --network regtest --out "$GEN" ${GEN_FLAGS:-} 2>"$WORK/gen.err" || { cat "$WORK/gen.err" >&2; exit 1; }
fi
[ -f "$GEN/blocks.dat" ] || { echo "$GEN has no blocks.dat: delete it to generate it again" >&2; exit 1; }
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
BROWS=$WORK/brows
: >"$BROWS"
# The blocks, one file each, cut out of blocks.dat once.
BLK=$WORK/blk-$N
rm -rf "$BLK" && mkdir -p "$BLK"
jq -r '.blocks.list[] | "\(.offset) \(.bytes) \(.kind) \(.height)"' "$GEN/expect.json" >"$BLK/list"
while read -r off len kind h; do
	tail -c +$((off + 1)) "$GEN/blocks.dat" | head -c "$len" >"$BLK/$h.$kind"
done <"$BLK/list"
BLKTXS=$(jq -r '.blocks.txs_per_block' "$GEN/expect.json")
# blocks STORE DATADIR: serve the datadir, POST every block in order, one row per kind.
blocks() {
	s=$1 dd=$2
	/usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$BIN/utxod" serve --network regtest --backend "$s" --datadir "$dd" \
		--listen 127.0.0.1:0 --cookie-file "$WORK/cookie" --log-level warn >"$WORK/out" 2>"$WORK/err" &
	tpid=$!
	i=0
	until addr=$(sed -n 's|.*listening on http://\([^ ]*\) .*|\1|p' "$WORK/err") && [ -n "$addr" ]; do
		i=$((i + 1)); [ $i -lt 600 ] || { echo "$s: serve did not start" >&2; cat "$WORK/err" >&2; exit 1; }
		sleep 0.1
	done
	: >"$WORK/posts"
	while read -r off len kind h; do
		r=$(curl -s -o "$WORK/post" -w '%{http_code} %{time_total}' -H "Authorization: Bearer $(cat "$WORK/cookie")" \
			-H 'Content-Type: application/octet-stream' --data-binary "@$BLK/$h.$kind" "http://$addr/v1/blocks")
		[ "${r% *}" = 200 ] || { echo "$s: block $h ($kind): $r" >&2; cat "$WORK/post" >&2; kill "$(pgrep -P $tpid)"; exit 1; }
		echo "$kind ${r#* }" >>"$WORK/posts"
	done <"$BLK/list"
	kill "$(pgrep -P $tpid)"
	wait $tpid || true
	read -r wall user sys rss <"$WORK/time"
	for kind in old recent; do
		grep "^$kind " "$WORK/posts" | awk '{ print $2 * 1000 }' | sort -n | awk -v s="$s" -v k="$kind" -v t="$BLKTXS" -v r="$rss" '
			{ v[NR] = $1 }
			function q(p,  i) { i = int(p * NR + 0.999999); if (i < 1) i = 1; return v[i] }
			END { if (NR) printf "| %s | %s coins | %d | %d / %d | %.0f | %.0f | %.0f | %.0f |\n", s, k, NR, t, 2 * t, q(0.5), q(0.99), v[NR], r / 1024 }' >>"$BROWS"
	done
	"$BIN/utxod" chainstate --network regtest --backend "$s" --datadir "$dd" --hash-type hash_serialized_3 --json --log-level warn >"$WORK/out"
	for k in hash_serialized_3 muhash txouts; do
		[ "$(jq -r ".$k" "$WORK/out")" = "$(jq -r ".blocks.after.$k" "$GEN/expect.json")" ] || { echo "$s: $k after the blocks differs from expect.json" >&2; exit 1; }
	done
	[ "$(jq -r .bestblock "$WORK/out")" = "$(jq -r .blocks.tip_hash "$GEN/expect.json")" ] || { echo "$s: the tip is not the last block" >&2; exit 1; }
	"$BIN/utxod" index verify --datadir "$dd" --log-level warn >/dev/null || { echo "$s: index verify after the blocks failed" >&2; exit 1; }
}
for s in $STORES; do
	IX=$WORK/ix-$s PL=$WORK/pl-$s
	rm -rf "$IX" "$PL" "$IX.snapshot-loading" "$PL.snapshot-loading" "$WORK/dump-$s.dat"
	common="--backend $s --network regtest --expect-hash $HS3 --headers $GEN/headers.dat --log-level warn"
	t "$s" "load + index" "$BIN/utxod" snapshot load "$GEN/utxo.dat" --datadir "$IX" $common --index scripthash
	ixsize=$(size "$IX")
	"$BIN/utxod" index verify --datadir "$IX" --log-level warn >/dev/null || { echo "$s: index verify failed" >&2; exit 1; }
	blocks "$s" "$IX"
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
	rm -f "$WORK/dump-$s.dat"
	# Serving runs on the plain load once its index is built: the same state as the indexed load, whose
	# tip the blocks step has moved past blocks.dat.
	if [ "${SERVE:-1}" != 0 ]; then
		# shellcheck disable=SC2086 # word splitting intended
		"$BIN/scalebench" serve --utxod "$BIN/utxod" --datadir "$PL" $serveargs --label "$s" \
			${BLOCKS:+--blocks "$BLOCKS"} ${SERVE_FLAGS:-} >>"$SROWS" 2>"$WORK/serve.err" || { echo "$s scalebench serve failed:" >&2; tail -20 "$WORK/serve.err" >&2; exit 1; }
	fi
	rm -rf "$PL"
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
	echo
	echo "Blocks on the loaded, indexed datadir through \`utxod serve\`, one POST /v1/blocks each (mainnetgen's blocks.dat:"
	echo "$(jq -r '.blocks.list | map(select(.kind == "old")) | length' "$GEN/expect.json") blocks spending random old coins, then"
	echo "$(jq -r '.blocks.list | map(select(.kind == "recent")) | length' "$GEN/expect.json") spending mostly the previous blocks' outputs,"
	echo "a tenth old coins; every script verified). Milliseconds per POST (curl's time_total); both digests after the last"
	echo "block equal expect.json's, and \`utxod index verify\` passes. RSS is serve's peak."
	echo
	echo "| store | blocks spending | blocks | txs / inputs per block | p50 ms | p99 ms | max ms | serve peak RSS MiB |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|"
	cat "$BROWS"
	if [ -s "$SROWS" ]; then
		echo
		echo "## Serving the loaded datadir"
		echo
		echo "\`scalebench serve\` (bench/cmd/scalebench) starts \`utxod serve\` on the plain load once its index is built and drives it over"
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
rm -rf "$BLK"
[ "${KEEP:-}" = 1 ] || rm -rf "$GEN"
cat "$OUT"
