#!/bin/bash
# bench/results/scale.md, "Opening a datadir with 880,000 headers": the cost of
# opening a loaded datadir, per store, for each utxod binary given (arms
# interleaved, their order reversed every other round):
#   chainstate   utxod chainstate --hash-type none under /usr/bin/time
#   start        utxod serve until /healthz answers 200 and a /v1/tip was read
#   restart      SIGKILL of that serve, then the same again
# wall s, CPU s (user + system; for serve, read from /proc one second after
# healthy) and peak RSS (VmHWM) per run, one line each on stdout.
#   bash bench/scripts/open-bench.sh ROUNDS DATADIRS BIN...
# DATADIRS is a prefix: DATADIRS-pebble, -rocksdb, -bbolt, each made by
#   utxod snapshot load utxo.dat --datadir DATADIRS-STORE --backend STORE --network regtest \
#     --expect-hash HS3 --headers headers.dat   (the set of mainnetgen --coins N --seed 1)
# Env: STORES (pebble rocksdb bbolt), PORT (18430).
set -u
ROUNDS=${1:?usage: open-bench.sh ROUNDS DATADIRS BIN...}
DD=${2:?}
shift 2
ARMS=("$@")
PORT=${PORT:-18430}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# serve_once BIN STORE TAG: one start of serve to healthy, then SIGKILL.
serve_once() {
	local bin=$1 s=$2 tag=$3 t0 t1 pid hwm cpu
	t0=$(date +%s.%N)
	"$bin" serve --datadir "$DD-$s" --backend "$s" --network regtest --listen 127.0.0.1:$PORT --log-level warn >/dev/null 2>"$TMP/err" &
	pid=$!
	until [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT/healthz)" = 200 ]; do
		kill -0 $pid 2>/dev/null || { echo "serve died: $(tail -3 "$TMP/err")" >&2; return 1; }
		sleep 0.05
	done
	curl -sf http://127.0.0.1:$PORT/v1/tip >/dev/null || { echo "no /v1/tip" >&2; return 1; }
	t1=$(date +%s.%N)
	sleep 1
	hwm=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
	cpu=$(awk '{printf "%.2f", ($14 + $15) / 100}' /proc/$pid/stat)
	kill -9 $pid
	wait $pid 2>/dev/null
	echo "$bin $s $tag wall=$(echo "$t1 - $t0" | bc) cpu=$cpu peak_rss_mib=$((hwm / 1024))"
}

for r in $(seq 1 "$ROUNDS"); do
	order=("${ARMS[@]}")
	if [ $((r % 2)) = 0 ]; then
		order=()
		for ((i = ${#ARMS[@]} - 1; i >= 0; i--)); do order+=("${ARMS[i]}"); done
	fi
	for s in ${STORES:-pebble rocksdb bbolt}; do
		for bin in "${order[@]}"; do
			/usr/bin/time -f "%e %U %S %M" -o "$TMP/time" "$bin" chainstate --datadir "$DD-$s" --backend "$s" --network regtest --hash-type none --log-level warn >/dev/null || exit 1
			read -r w u y m <"$TMP/time"
			echo "$bin $s chainstate wall=$w cpu=$(echo "$u + $y" | bc) peak_rss_mib=$((m / 1024))"
			serve_once "$bin" "$s" start || exit 1
			serve_once "$bin" "$s" restart || exit 1
		done
	done
done
