#!/bin/bash
# bench/results/scale.md, "Reads that overlap the scripts": one run of an arm on a copy of one loaded datadir whose
# tables are hard links (pebble and RocksDB never change a table file) and whose other files are copied; serve
# started, the 40 blocks POSTed one by one (timed by curl), serve stopped, the digests after them checked.
#   MODE=cold|warm|hot STORE=pebble|rocksdb|bbolt bash bench/scripts/scale-blocks-runs.sh DIR BLK GEN LABEL BIN
# DIR/base-STORE (STORE defaults to pebble) is the loaded datadir (snapshot load --index scripthash); BLK the blocks cut out of GEN/blocks.dat as
# scale-bench.sh cuts them (BLK/list, BLK/HEIGHT.KIND); GEN the mainnetgen directory (expect.json); BIN the arm's
# utxod. cold: the copy's pages dropped first (scalebench dropcache, from DIR/bin/scalebench); warm: the copy read
# in first; hot (the default): the page cache as the run before left it. GAP: seconds between POSTs (default 0). Appends to DIR/blocks.log: serve's
# /usr/bin/time (wall user sys maxrss KiB, major and minor page faults), p50 and max of each kind, and the digests against blocks.after.
set -u
W=$1 BLK=$2 G=$3 ARM=$4 BIN=$5
S=${STORE:-pebble} DD=$W/arm-$ARM
log() { echo "$(date -u +%T) $ARM: $* (load $(cut -d' ' -f1-3 /proc/loadavg))" >>"$W/blocks.log"; }
rm -rf "$DD"
cp -al "$W/base-$S" "$DD"
find "$DD" -type f ! -name '*.sst' -exec sh -c 'cp --remove-destination "$1" "$1.tmp" && mv "$1.tmp" "$1"' _ {} \;
case "${MODE:-hot}" in
cold) "$W/bin/scalebench" dropcache "$DD" --check >>"$W/blocks.log" 2>&1 ;;
warm) find "$DD" -type f -exec cat {} + >/dev/null ;;
esac
log "mode ${MODE:-hot}"
/usr/bin/time -f "%e %U %S %M %F %R" -o "$W/time.$ARM" "$BIN" serve --network regtest --backend "$S" --datadir "$DD" \
	--listen 127.0.0.1:0 --cookie-file "$W/cookie.$ARM" --log-level warn >"$W/serve.$ARM.out" 2>"$W/serve.$ARM.err" &
tpid=$!
until addr=$(sed -n 's|.*listening on http://\([^ ]*\) .*|\1|p' "$W/serve.$ARM.err") && [ -n "$addr" ]; do sleep 0.05; done
until curl -sf "http://$addr/healthz" >/dev/null; do sleep 0.05; done
: >"$W/posts.$ARM"
while read -r _ _ kind h; do
	r=$(curl -s -o "$W/post.$ARM" -w '%{http_code} %{time_total}' -H "Authorization: Bearer $(cat "$W/cookie.$ARM")" \
		-H 'Content-Type: application/octet-stream' --data-binary "@$BLK/$h.$kind" "http://$addr/v1/blocks")
	[ "${r% *}" = 200 ] || { log "block $h: $r $(cat "$W/post.$ARM")"; break; }
	echo "$kind $h ${r#* }" >>"$W/posts.$ARM"
	sleep "${GAP:-0}"
done <"$BLK/list"
kill "$(pgrep -P $tpid)"
wait $tpid
log "serve: $(cat "$W/time.$ARM")"
for k in old recent; do
	grep "^$k " "$W/posts.$ARM" | awk '{print $3*1000}' | sort -n |
		awk -v k=$k -v a="$ARM" '{v[NR]=$1} END {printf "%s %s n=%d p50=%.0f max=%.0f\n", a, k, NR, (v[NR/2]+v[NR/2+1])/2, v[NR]}' >>"$W/blocks.log"
done
"$BIN" chainstate --network regtest --backend "$S" --datadir "$DD" --hash-type hash_serialized_3 --json --log-level warn >"$W/hs3.$ARM"
log "after: $(jq -r .hash_serialized_3 "$W/hs3.$ARM") want $(jq -r .blocks.after.hash_serialized_3 "$G/expect.json")"
rm -rf "$DD"
