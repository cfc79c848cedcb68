#!/bin/sh
# Installs the published Esplora clients @mempool/mempool.js and
# @bitcoinerlab/explorer (npm, pinned) for the api package's
# TestMempoolJSClient and TestExplorerClient and prints the directory to pass
# as UTXOD_MEMPOOLJS. Usage: scripts/mempooljs.sh [dir]
set -eu
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/utxod-mempooljs}
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || npm init -y >/dev/null
[ -d node_modules/@mempool/mempool.js ] || npm install --no-audit --no-fund @mempool/mempool.js@3.0.0 >/dev/null
[ -d node_modules/@bitcoinerlab/explorer ] || npm install --no-audit --no-fund @bitcoinerlab/explorer@1.0.0 >/dev/null
pwd
