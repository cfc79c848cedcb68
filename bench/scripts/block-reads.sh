#!/bin/sh
# bench/results/scale.md "Overlapping a block's reads": the blocks of a
# mainnetgen set (20 spending random old coins, then 20 spending recent ones)
# POSTed one at a time to utxod serve on a fresh copy (cp -a) of one loaded
# datadir, two binaries interleaved (A B, then B A), each run with the copy's
# pages dropped from the page cache (cold) or read in (warm) before serve
# starts; each POST timed by curl, the digests checked after every run.
#   sh bench/scripts/block-reads.sh GEN DATADIR BIN_A BIN_B [ROUNDS]
# GEN: mainnetgen --out dir; DATADIR: its utxo.dat loaded (snapshot load
# --headers), left untouched. Env: WORK (/work/tmp-block-reads/run),
# SCALEBENCH (bin/scalebench), MODES ("cold warm"). Prints one line per POST:
# arm mode round kind ms.
set -eu
GEN=$1 BASE=$2 A=$3 B=$4 ROUNDS=${5:-3}
WORK=${WORK:-/work/tmp-block-reads/run}
SCALEBENCH=${SCALEBENCH:-bin/scalebench}
BLK=$WORK/blk D=$WORK/datadir
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null' EXIT
rm -rf "$BLK" "$D" && mkdir -p "$BLK"
jq -r '.blocks.list[] | "\(.offset) \(.bytes) \(.kind) \(.height)"' "$GEN/expect.json" >"$BLK/list"
while read -r off len kind h; do
	tail -c +$((off + 1)) "$GEN/blocks.dat" | head -c "$len" >"$BLK/$h.$kind"
done <"$BLK/list"
# run ARM BIN MODE ROUND
run() {
	arm=$1 bin=$2 mode=$3 round=$4
	cp -a "$BASE" "$D"
	find "$D" -type f -exec sync {} +
	if [ "$mode" = cold ]; then
		"$SCALEBENCH" dropcache "$D" --check >&2
	else
		find "$D" -type f -exec cat {} + >/dev/null
	fi
	rm -f "$WORK/err" "$WORK/cookie" # not the last run's address
	"$bin" serve --network regtest --datadir "$D" --listen 127.0.0.1:0 --cookie-file "$WORK/cookie" \
		--log-level warn >"$WORK/out" 2>"$WORK/err" &
	pid=$!
	i=0
	until addr=$(sed -n 's|.*listening on http://\([^ ]*\) .*|\1|p' "$WORK/err" 2>/dev/null) && [ -n "$addr" ] && [ -s "$WORK/cookie" ]; do
		i=$((i + 1)); [ $i -lt 600 ] || { echo "serve did not start" >&2; cat "$WORK/err" >&2; exit 1; }
		sleep 0.1
	done
	while read -r off len kind h; do
		res=$(curl -s -o "$WORK/post" -w '%{http_code} %{time_total}' -H "Authorization: Bearer $(cat "$WORK/cookie")" \
			-H 'Content-Type: application/octet-stream' --data-binary "@$BLK/$h.$kind" "http://$addr/v1/blocks")
		[ "${res% *}" = 200 ] || { echo "$arm: block $h: $res" >&2; cat "$WORK/post" >&2; exit 1; }
		echo "$arm $mode $round $kind ${res#* }" | awk '{ printf "%s %s %s %s %.0f\n", $1, $2, $3, $4, $5 * 1000 }'
	done <"$BLK/list"
	kill $pid
	wait $pid || true
	pid=
	"$bin" chainstate --network regtest --datadir "$D" --hash-type hash_serialized_3 --json --log-level warn >"$WORK/out"
	for k in hash_serialized_3 muhash txouts; do
		[ "$(jq -r ".$k" "$WORK/out")" = "$(jq -r ".blocks.after.$k" "$GEN/expect.json")" ] ||
			{ echo "$arm: $k after the blocks differs from expect.json" >&2; exit 1; }
	done
	rm -rf "$D"
}
r=1
while [ $r -le "$ROUNDS" ]; do
	for mode in ${MODES:-cold warm}; do
		if [ $((r % 2)) = 1 ]; then
			run A "$A" $mode $r
			run B "$B" $mode $r
		else
			run B "$B" $mode $r
			run A "$A" $mode $r
		fi
	done
	r=$((r + 1))
done
