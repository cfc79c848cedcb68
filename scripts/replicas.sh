#!/usr/bin/env bash
# One utxod primary and two read replicas behind HAProxy on one machine,
# without docker (docs/replicas.md).
#
#   scripts/replicas.sh start    build, start source (unless SOURCE), primary, replicas, haproxy
#   scripts/replicas.sh status   /healthz of every node and of the load balancer
#   scripts/replicas.sh demo     start, then show reads spreading, equal digests, a SIGKILLed
#                                replica resuming; then stop
#   scripts/replicas.sh stop     stop what start started (by the pids it recorded)
#
# Environment:
#   SOURCE     REST URL of the node to follow: a bitcoind started with -rest
#              (e.g. http://127.0.0.1:8332); empty: a stand-in serving the bundled
#              mainnet sample (testkit/cmd/corerest), growing one block a second
#   NETWORK    main (default), testnet3, testnet4, signet, regtest
#   BASE_PORT  8400: haproxy on BASE_PORT, primary +1, replicas +2 and +3, stand-in source +4
#   WORKDIR    datadirs, logs and pid files (default ./replicas-run)
#   BACKEND    pebble (default), rocksdb (needs librocksdb-dev and TAGS=rocksdb), bbolt
#   INSTALL=1  install haproxy with apt-get if it is missing (otherwise the script says how)
set -euo pipefail

cd "$(dirname "$0")/.."
SOURCE=${SOURCE:-}
NETWORK=${NETWORK:-main}
BASE_PORT=${BASE_PORT:-8400}
WORKDIR=${WORKDIR:-./replicas-run}
BACKEND=${BACKEND:-pebble}
TAGS=${TAGS:-}
BIN=${BIN:-bin}

LB=127.0.0.1:$BASE_PORT
PRIMARY=127.0.0.1:$((BASE_PORT + 1))
R1=127.0.0.1:$((BASE_PORT + 2))
R2=127.0.0.1:$((BASE_PORT + 3))
FAKE=127.0.0.1:$((BASE_PORT + 4))

die() { echo "replicas.sh: $*" >&2; exit 1; }

need_haproxy() {
	command -v haproxy >/dev/null && return
	if [ "${INSTALL:-0}" = 1 ]; then
		apt-get install -y haproxy || die "apt-get install -y haproxy failed"
		return
	fi
	die "haproxy is not installed: apt-get install -y haproxy (Debian/Ubuntu), or run with INSTALL=1"
}

build() {
	mkdir -p "$BIN"
	go build ${TAGS:+-tags "$TAGS"} -o "$BIN/utxod" ./cmd/utxod
	[ -n "$SOURCE" ] || go build -o "$BIN/corerest" ./testkit/cmd/corerest
}

# run NAME CMD...: start CMD in the background, log to WORKDIR/NAME.log, pid in WORKDIR/NAME.pid.
run() {
	local name=$1
	shift
	"$@" >"$WORKDIR/$name.log" 2>&1 &
	echo $! >"$WORKDIR/$name.pid"
}

wait_http() { # URL
	for _ in $(seq 1 200); do
		curl -fsS -o /dev/null "$1" 2>/dev/null && return
		sleep 0.1
	done
	die "$1 does not answer (see $WORKDIR/*.log)"
}

serve() { # NAME ADDR FOLLOW [FLAGS...]
	local name=$1 addr=$2 follow=$3
	shift 3
	run "$name" "$BIN/utxod" serve --network "$NETWORK" --backend "$BACKEND" --datadir "$WORKDIR/$name" \
		--listen "$addr" --follow "$follow" --follow-poll "${POLL:-200ms}" --follow-flush 10s "$@"
	wait_http "http://$addr/healthz"
}

start() {
	need_haproxy
	command -v curl >/dev/null || die "curl is needed (apt-get install -y curl)"
	build
	mkdir -p "$WORKDIR"
	if [ -z "$SOURCE" ]; then
		[ "$NETWORK" = main ] || die "the stand-in source serves mainnet blocks: set SOURCE for $NETWORK"
		run source "$BIN/corerest" --network main --blocks testdata/mainnet/blk_0_to_14131.dat \
			--listen "$FAKE" --reveal 3001 --grow 1s
		SOURCE=http://$FAKE
		wait_http "$SOURCE/rest/chaininfo.json"
	fi
	echo "$SOURCE" >"$WORKDIR/source.url"
	# The primary validates everything from the source and keeps every block
	# (--archive) so that replicas can follow it from genesis.
	serve primary "$PRIMARY" "$SOURCE" --archive
	serve replica1 "$R1" "http://$PRIMARY"
	serve replica2 "$R2" "http://$PRIMARY"
	LB_ADDR=$LB PRIMARY_ADDR=$PRIMARY REPLICA1_ADDR=$R1 REPLICA2_ADDR=$R2 \
		run haproxy haproxy -db -f deploy/haproxy/haproxy.cfg
	wait_http "http://$LB/healthz"
	echo "source   $SOURCE"
	echo "primary  http://$PRIMARY   (writes: Authorization: Bearer \$(cat $WORKDIR/primary/.cookie))"
	echo "replicas http://$R1 http://$R2"
	echo "reads    http://$LB   (e.g. curl -si http://$LB/v1/chainstate | grep -i x-utxod-server)"
}

status() {
	for n in "haproxy $LB" "primary $PRIMARY" "replica1 $R1" "replica2 $R2"; do
		set -- $n
		printf '%-9s %s\n' "$1" "$(curl -fsS "http://$2/healthz" 2>/dev/null || echo down)"
	done
}

stop() {
	for name in haproxy replica2 replica1 primary source; do
		f="$WORKDIR/$name.pid"
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid"
			for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		fi
		rm -f "$f"
	done
}

height() { curl -fsS "http://$1/v1/tip" | sed -n 's/.*"height":\([0-9-]*\).*/\1/p'; }

digest() { curl -fsS "http://$1/v1/chainstate?hash_type=hash_serialized_3" | sed 's/"height":[0-9]*,//'; }

# in_sync_all: every node in sync and at the same height.
in_sync_all() {
	local h
	h=$(height "$PRIMARY")
	for a in "$PRIMARY" "$R1" "$R2"; do
		curl -fsS "http://$a/healthz" | grep -q '"in_sync":true' || return 1
		[ "$(height "$a")" = "$h" ] || return 1
	done
}

demo() {
	trap stop EXIT
	start
	echo "--- waiting for every node to be in sync (HAProxy sends a replica reads once /healthz says so twice)"
	for _ in $(seq 1 600); do in_sync_all && break; sleep 0.1; done
	sleep 1.5
	echo "--- reads through haproxy (X-Utxod-Server names the node that answered)"
	for _ in $(seq 1 6); do curl -fsS -D - -o /dev/null "http://$LB/v1/tip" | tr -d '\r' | grep -i '^x-utxod-server'; done
	echo "--- the same digests on every node (one chainstate read from all three at one height)"
	# The stand-in source grows: freeze it by comparing at whatever height all agree.
	for _ in $(seq 1 300); do
		in_sync_all && [ "$(digest "$PRIMARY")" = "$(digest "$R1")" ] && [ "$(digest "$R1")" = "$(digest "$R2")" ] && break
		sleep 0.05
	done
	for a in "$PRIMARY" "$R1" "$R2"; do echo "$a $(curl -fsS "http://$a/v1/chainstate?hash_type=hash_serialized_3")"; done
	echo "--- SIGKILL replica2 while it follows, restart it on its datadir"
	kill -KILL "$(cat "$WORKDIR/replica2.pid")"
	sleep 1
	serve replica2 "$R2" "http://$PRIMARY"
	echo "replica2 reopened at height $(height "$R2"); primary at $(height "$PRIMARY")"
	for _ in $(seq 1 600); do in_sync_all && break; sleep 0.1; done
	echo "replica2 caught up: height $(height "$R2"); primary $(height "$PRIMARY")"
	curl -fsS "http://$R2/healthz"; echo
}

case "${1:-}" in
start) start ;;
status) status ;;
stop) stop ;;
demo) demo ;;
*) sed -n '2,22p' "$0"; exit 2 ;;
esac
