#!/bin/sh
# Makes sure the Debian packages a make target needs are installed.
#   scripts/deps.sh PACKAGE...
# Each package is probed by what the build uses from it (a header and
# library, pkg-config, a command), not by dpkg, so a library installed
# another way counts. Missing ones are installed when this runs as root with
# apt-get (one apt-get update, then one apt-get install); otherwise the
# script stops with the exact command to run.
set -eu

have() {
	case "$1" in
	librocksdb-dev)
		printf '#include <rocksdb/c.h>\nint main(void){rocksdb_options_t *o = rocksdb_options_create(); rocksdb_options_destroy(o); return 0;}\n' |
			${CC:-cc} -x c - -o /dev/null -lrocksdb >/dev/null 2>&1 ;;
	libsecp256k1-dev)
		command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libsecp256k1 ;;
	pkg-config) command -v pkg-config >/dev/null 2>&1 ;;
	*) command -v "$1" >/dev/null 2>&1 ;; # packages named after their command (wrk, haproxy)
	esac
}

missing=""
for p in "$@"; do
	have "$p" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
missing=${missing# }

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "deps: installing$(printf ' %s' $missing) (apt-get)" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update
	apt-get install -y --no-install-recommends $missing
	for p in $missing; do
		have "$p" || { echo "deps: $p still missing after apt-get install" >&2; exit 1; }
	done
	exit 0
fi

echo "deps: missing Debian packages: $missing" >&2
if command -v apt-get >/dev/null 2>&1; then
	echo "deps: run:  sudo apt-get update && sudo apt-get install -y --no-install-recommends $missing" >&2
else
	echo "deps: install them (names as in Debian) with your system's package manager, then run make again" >&2
fi
exit 1
