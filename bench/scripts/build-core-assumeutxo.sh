#!/bin/sh
# A second bitcoind whose regtest assumeutxo table (m_assumeutxo_data in src/kernel/chainparams.cpp) has one more
# entry: a chaingen corpus's tip, so that Core's loadtxoutset accepts a snapshot of it (regtest's own entries, heights
# 110, 200 and 299, are chains of Core's functional-test framework that a chaingen corpus cannot reproduce).
# Opt-in, for bench/cmd/corebench --bitcoind-assumeutxo only; needs bench/scripts/build-core.sh's build first.
#
#   bench/scripts/build-core-assumeutxo.sh HEIGHT BLOCKHASH HASH_SERIALIZED_3 CHAIN_TX_COUNT
#
# The values come from `utxod snapshot verify FILE --json` (base_hash, hash_serialized_3) and Core's getchaintxstats
# (txcount). Patches the source in place, rebuilds bitcoind (one file and the link), copies it to
# $CORE_DIR/bitcoind-assumeutxo-HEIGHT, restores the source and rebuilds the stock binary. Prints the copy's path.
set -eu
CORE_DIR=${CORE_DIR:-/tmp/core}
JOBS=${CORE_JOBS:-2}
HEIGHT=$1 BLOCKHASH=$2 HS3=$3 NTX=$4
OUTBIN=$CORE_DIR/bitcoind-assumeutxo-$HEIGHT
F=$CORE_DIR/src/src/kernel/chainparams.cpp
if [ -x "$OUTBIN" ]; then echo "$OUTBIN"; exit 0; fi
cp "$F" "$F.orig"
trap 'mv "$F.orig" "$F"' EXIT
python3 - "$F" "$HEIGHT" "$BLOCKHASH" "$HS3" "$NTX" <<'PY'
import sys
p, h, bh, hs, n = sys.argv[1:]
s = open(p).read()
anchor = "                // For use by test/functional/feature_assumeutxo.py and test/functional/tool_bitcoin_chainstate.py"
i = s.index(anchor)
entry = ("                // utxod bench: a chaingen corpus tip (bench/scripts/build-core-assumeutxo.sh)\n"
         "                .height = %s,\n"
         "                .hash_serialized = AssumeutxoHash{uint256{\"%s\"}},\n"
         "                .m_chain_tx_count = %s,\n"
         "                .blockhash = uint256{\"%s\"},\n"
         "            },\n            {\n") % (h, hs, n, bh)
s = s[:i] + entry + s[i:]
open(p, "w").write(s)
PY
nice -n 10 cmake --build "$CORE_DIR/build" -j"$JOBS" --target bitcoind >&2
cp "$CORE_DIR/build/bin/bitcoind" "$OUTBIN"
mv "$F.orig" "$F"
trap - EXIT
touch "$F"
nice -n 10 cmake --build "$CORE_DIR/build" -j"$JOBS" --target bitcoind >&2
echo "$OUTBIN"
