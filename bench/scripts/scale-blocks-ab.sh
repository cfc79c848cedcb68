#!/bin/bash
# bench/results/scale.md, 185 M block rows: per arm, its own copy of one plain load (ARM's datadir DIR/pl-ARM, made
# by the caller with cp -a); the datadir's pages dropped, serve started, old blocks 1-10 POSTed (cold), a clean stop,
# serve again, old blocks 11-20 and the 20 recent ones (warm). Each POST timed by curl.
#   bash bench/scripts/scale-blocks-ab.sh DIR BLK ARM...
# DIR holds bin/utxod-ARM, bin/scalebench and pl-ARM; BLK the blocks cut out of blocks.dat as scale-bench.sh cuts
# them (BLK/list, BLK/HEIGHT.KIND). Writes DIR/posts-ab (arm phase height seconds), DIR/ab.log (each serve's
# /usr/bin/time: wall user sys maxrss KiB) and a CPU profile per serve (DIR/cpu.ARM.PHASE).
set -u
W=$1 BLK=$2
shift 2
log() { echo "$(date -u +%T) $* (load $(cut -d' ' -f1-3 /proc/loadavg))" >>"$W/ab.log"; }
start() { # arm phase
	rm -f "$W/serve.err"
	/usr/bin/time -f "%e %U %S %M" -o "$W/time.ab.$1.$2" "$W/bin/utxod-$1" serve --network regtest --backend pebble \
		--datadir "$W/pl-$1" --listen 127.0.0.1:0 --cookie-file "$W/cookie" --log-level warn --cpuprofile "$W/cpu.$1.$2" \
		>"$W/serve.out" 2>"$W/serve.err" &
	tpid=$!
	until addr=$(sed -n 's|.*listening on http://\([^ ]*\) .*|\1|p' "$W/serve.err") && [ -n "$addr" ]; do sleep 0.05; done
	until curl -sf "http://$addr/healthz" >/dev/null; do sleep 0.05; done
}
stop() { kill "$(pgrep -P $tpid)"; wait $tpid; log "serve $1 $2: $(cat "$W/time.ab.$1.$2")"; }
post() { # arm phase from to
	sed -n "$3,$4p" "$BLK/list" | while read -r _ _ kind h; do
		r=$(curl -s -o "$W/post" -w '%{http_code} %{time_total}' -H "Authorization: Bearer $(cat "$W/cookie")" \
			-H 'Content-Type: application/octet-stream' --data-binary "@$BLK/$h.$kind" "http://$addr/v1/blocks")
		[ "${r% *}" = 200 ] || { log "block $h: $r $(cat "$W/post")"; exit 1; }
		echo "$1 $2 $h ${r#* }" >>"$W/posts-ab"
	done
}
for arm in "$@"; do
	"$W/bin/scalebench" dropcache "$W/pl-$arm" >>"$W/ab.log" 2>&1
	start "$arm" cold; post "$arm" cold 1 10; stop "$arm" cold
	start "$arm" warm; post "$arm" warm 11 20; post "$arm" recent 21 40; stop "$arm" warm
done
