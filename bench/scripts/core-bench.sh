#!/bin/sh
# Bitcoin Core beside utxod (bench/results/core.md; opt-in: needs a bitcoind from bench/scripts/build-core.sh).
#
#   bench/scripts/core-bench.sh BITCOIND [ROUNDS] [INPUTS]
#
# 1. full validation: valbench --bitcoind (btcd, utxod pebble, Core; rotating) on the early corpus of INPUTS inputs;
# 2. assume-valid: the same corpus buried under 2017 coinbase-only blocks, every arm told the tip is valid
#    (btcd --checkpoint, utxod --assume-valid, Core -assumevalid);
# 3. corebench: dumptxoutset vs snapshot dump, snapshot load, follow vs import, scantxoutset vs /v1/scan,
#    REST getutxos / /v1/utxos/batch under wrk.
# Binaries go to $BIN (default bin), outputs to $OUT (default bin/core-out). The host is assumed shared:
# every figure is a median of ROUNDS interleaved runs with its min–max.
set -eu
BITCOIND=${1:?usage: core-bench.sh BITCOIND [ROUNDS] [INPUTS]}
ROUNDS=${2:-3}
INPUTS=${3:-440000}
BIN=${BIN:-bin}
OUT=${OUT:-$BIN/core-out}
GO=${GO:-go}
mkdir -p "$BIN" "$OUT"
$GO build -o "$BIN/utxod" ./cmd/utxod
$GO build -o "$BIN/chaingen" ./testkit/cmd/chaingen
$GO build -o "$BIN/btcdreplay" ./bench/cmd/btcdreplay
$GO build -o "$BIN/valbench" ./bench/cmd/valbench
$GO build -o "$BIN/corebench" ./bench/cmd/corebench
full=$OUT/early-$INPUTS.dat
buried=$OUT/early-$INPUTS-bury2017.dat
[ -f "$full" ] || "$BIN/chaingen" --profile early --target-inputs "$INPUTS" --seed 1 --out "$full" --json > "$full.json"
[ -f "$buried" ] || "$BIN/chaingen" --profile early --target-inputs "$INPUTS" --seed 1 --bury 2017 --out "$buried" --json > "$buried.json"
tip=$(sed -n 's/.*"tip": *"\([0-9a-f]*\)".*/\1/p' "$buried.json")
height=$(sed -n 's/.*"height": *\([0-9]*\).*/\1/p' "$buried.json")

"$BIN/valbench" --corpus "$full" --rounds "$ROUNDS" --stores pebble --utxod "$BIN/utxod" --btcdreplay "$BIN/btcdreplay" \
	--bitcoind "$BITCOIND" --no-floor --out "$OUT/full" --label "full validation; $(git rev-parse --short HEAD)"
"$BIN/valbench" --corpus "$buried" --rounds "$ROUNDS" --stores pebble --utxod "$BIN/utxod" --btcdreplay "$BIN/btcdreplay" \
	--bitcoind "$BITCOIND" --core-assumevalid "$tip" --utxod-args "--assume-valid $tip" --btcd-args "--checkpoint $height:$tip" \
	--no-floor --out "$OUT/assumevalid" --label "assume-valid at the tip; $(git rev-parse --short HEAD)"
"$BIN/corebench" --bitcoind "$BITCOIND" --utxod "$BIN/utxod" --corpus "$full" --rounds "$ROUNDS" --out "$OUT/corebench"
