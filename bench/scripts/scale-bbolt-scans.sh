#!/bin/bash
# bench/results/scale.md, "bbolt's records in chunks": hash_serialized_3 with the datadir's pages dropped first
# (scalebench dropcache) then again, the dump the same way (byte-identical with the snapshot), and scalebench scan, for
# each arm in the order given. Each arm is LABEL:DATADIR:BIN, DATADIR a bbolt plain load (snapshot load, no index)
# made by BIN. Appends "| label | step | wall | user | sys | peak RSS MiB | major faults | minor faults |" to
# DIR/bbolt-scans.rows; DIR/bin/scalebench is scalebench.
#   bash bench/scripts/scale-bbolt-scans.sh DIR GEN C:/x/pl-C:/x/utxod-C F:/x/pl-F:/x/utxod-F F:… C:…
set -u
W=$1 G=$2; shift 2
HS3=$(jq -r .hash_serialized_3 "$G/expect.json")
ROWS=$W/bbolt-scans.rows
t() {
	a=$1 step=$2; shift 2
	/usr/bin/time -f "%e %U %S %M %F %R" -o "$W/time.s" "$@" >"$W/out.s" 2>"$W/err.s" || { echo "$a $step failed: $(tail -3 "$W/err.s")" >>"$ROWS"; return 1; }
	read -r wall user sys rss maj min <"$W/time.s"
	echo "| $a | $step | $wall | $user | $sys | $((rss / 1024)) | $maj | $min |" >>"$ROWS"
}
for arm in "$@"; do
	IFS=: read -r a dd bin <<<"$arm"
	for step in hash_serialized_3 dump; do
		"$W/bin/scalebench" dropcache "$dd" >/dev/null 2>&1
		for mode in cold again; do
			if [ $step = dump ]; then
				rm -f "$W/dump.s"
				t "$a" "dump $mode" "$bin" snapshot dump --network regtest --backend bbolt --datadir "$dd" -o "$W/dump.s" --log-level warn
				cmp -s "$W/dump.s" "$G/utxo.dat" || echo "$a dump DIFFERS" >>"$ROWS"
				rm -f "$W/dump.s"
			else
				t "$a" "hash_serialized_3 $mode" "$bin" chainstate --network regtest --backend bbolt --datadir "$dd" --hash-type hash_serialized_3 --log-level warn
				grep -q "$HS3" "$W/out.s" || echo "$a hash_serialized_3 DIFFERS" >>"$ROWS"
			fi
		done
	done
	"$W/bin/scalebench" scan --utxod "$bin" --datadir "$dd" --snapshot "$G/utxo.dat" --expect "$G/expect.json" \
		--server-args "--backend bbolt" --label "bbolt-$a" >>"$ROWS" 2>"$W/scan.$a.err"
done
