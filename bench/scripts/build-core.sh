#!/bin/sh
# Builds Bitcoin Core's bitcoind (and bitcoin-cli) from source, as ../shared/README.md describes:
# the copy of Core master under libbitcoinkernel-sys/bitcoin/ in github:sedited/rust-bitcoinkernel.
# Opt-in (benchmarks and bench/../testkit/coreinterop only; CI never needs it). Idempotent: a finished build
# is reused. Prints the path of bitcoind on its last line of stdout.
#
#   bench/scripts/build-core.sh [MIRROR]
#
# MIRROR: the bare git mirror of sedited/rust-bitcoinkernel (default: $CORE_MIRROR, else
# /work/.mirror/sedited+rust-bitcoinkernel/repo). CORE_DIR (default /tmp/core) holds src/ and build/.
# CORE_JOBS (default 2) and nice -n 10: the host is shared. About 20 minutes on 2 cores.
set -eu
CORE_DIR=${CORE_DIR:-/tmp/core}
MIRROR=${1:-${CORE_MIRROR:-/work/.mirror/sedited+rust-bitcoinkernel/repo}}
JOBS=${CORE_JOBS:-2}
BITCOIND=$CORE_DIR/build/bin/bitcoind

if [ -x "$BITCOIND" ] && [ -x "$CORE_DIR/build/bin/bitcoin-cli" ]; then
	echo "$BITCOIND"
	exit 0
fi

need=""
for t in cmake g++ make pkg-config; do command -v $t >/dev/null 2>&1 || need=1; done
[ -f /usr/include/boost/version.hpp ] || need=1
if [ -n "$need" ]; then
	echo "build-core: installing build-essential cmake pkgconf libboost-dev" >&2
	if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO=sudo; fi
	$SUDO apt-get install -y build-essential cmake pkgconf libboost-dev >&2 ||
		{ $SUDO apt-get update >&2 && $SUDO apt-get install -y build-essential cmake pkgconf libboost-dev >&2; }
fi

if [ ! -f "$CORE_DIR/src/CMakeLists.txt" ]; then
	[ -d "$MIRROR" ] || { echo "build-core: no mirror at $MIRROR (fetch github:sedited/rust-bitcoinkernel)" >&2; exit 2; }
	mkdir -p "$CORE_DIR/src"
	git --git-dir="$MIRROR" archive HEAD:libbitcoinkernel-sys/bitcoin | tar -x -C "$CORE_DIR/src"
fi

if [ ! -f "$CORE_DIR/build/CMakeCache.txt" ]; then
	nice -n 10 cmake -S "$CORE_DIR/src" -B "$CORE_DIR/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_GUI=OFF \
		-DENABLE_WALLET=OFF -DBUILD_TESTS=OFF -DBUILD_BENCH=OFF -DBUILD_FUZZ_BINARY=OFF -DWITH_ZMQ=OFF \
		-DENABLE_IPC=OFF -DBUILD_TX=OFF -DBUILD_UTIL=OFF -DBUILD_BITCOIN_BIN=OFF >&2
fi
start=$(date +%s)
nice -n 10 cmake --build "$CORE_DIR/build" -j"$JOBS" --target bitcoind bitcoin-cli >&2
echo "build-core: built in $(( $(date +%s) - start )) s" >&2
"$BITCOIND" -version | head -1 >&2
echo "$BITCOIND"
