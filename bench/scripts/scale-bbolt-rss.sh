#!/bin/bash
# bench/results/scale.md, "bbolt's flush": a bbolt load + index of GEN's set in DIR/Q-bbolt, then serve taking the
# blocks of BLK (cut as scale-bench.sh cuts them) while /proc/PID/status is sampled every 0.2 s: the peak RssAnon and
# RssFile (KiB) at the start, after the last block and after the shutdown flush, the flushes (ms, keys) and the digests
# after the blocks go to DIR/bboltrss.log; a CPU profile of serve to DIR/cpu.Q.
#   BIN=utxod bash bench/scripts/scale-bbolt-rss.sh DIR GEN BLK
W=$1 G=$2 BLK=$3; DD=$W/Q-bbolt
HS3=$(jq -r .hash_serialized_3 $G/expect.json)
log() { echo "$(date -u +%T) $* (load $(cut -d' ' -f1-3 /proc/loadavg))" >> $W/bboltrss.log; }
rm -rf $DD
$BIN snapshot load $G/utxo.dat --datadir $DD --backend bbolt --network regtest --expect-hash $HS3 --headers $G/headers.dat --log-level warn --json --index scripthash > /dev/null 2> $W/err.Q || { log "load failed"; exit 1; }
log "loaded"
rm -f $W/serve.Q.err
$BIN serve --network regtest --backend bbolt --datadir $DD --listen 127.0.0.1:0 --cookie-file $W/cookie.Q --log-level debug --cpuprofile $W/cpu.Q > /dev/null 2> $W/serve.Q.err &
spid=$!
( ma=0; mf=0; while kill -0 $spid 2>/dev/null; do
    read a f < <(awk '/RssAnon/{a=$2} /RssFile/{f=$2} END{print a, f}' /proc/$spid/status 2>/dev/null)
    [ -n "$a" ] && [ "$a" -gt "$ma" ] && ma=$a; [ -n "$f" ] && [ "$f" -gt "$mf" ] && mf=$f
    echo "$ma $mf" > $W/bboltrss.peak; sleep 0.2; done ) &
until addr=$(sed -n 's|.*listening on http://\([^ ]*\) .*|\1|p' $W/serve.Q.err) && [ -n "$addr" ]; do sleep 0.05; done
until curl -sf http://$addr/healthz >/dev/null; do sleep 0.05; done
log "serving: $(cat $W/bboltrss.peak) KiB anon file"
: > $W/posts.Q
while read -r off len kind h; do
  r=$(curl -s -o $W/post.Q -w '%{http_code} %{time_total}' -H "Authorization: Bearer $(cat $W/cookie.Q)" -H 'Content-Type: application/octet-stream' --data-binary "@$BLK/$h.$kind" "http://$addr/v1/blocks")
  [ "${r% *}" = 200 ] || { log "block $h: $r $(cat $W/post.Q)"; break; }
  echo "$kind $h ${r#* }" >> $W/posts.Q
done < $BLK/list
log "blocks done: $(cat $W/bboltrss.peak) KiB anon file"
kill $spid; wait $spid
sleep 0.5
log "after shutdown: $(cat $W/bboltrss.peak) KiB anon file (peak RssAnon, RssFile)"
for k in old recent; do grep "^$k " $W/posts.Q | awk '{print $3*1000}' | sort -n | awk -v k=$k '{v[NR]=$1} END {printf "bbolt %s n=%d p50=%.0f max=%.0f\n", k, NR, (v[NR/2]+v[NR/2+1])/2, v[NR]}' >> $W/bboltrss.log; done
log "flushes ms: $(grep msg=flushed $W/serve.Q.err | grep -o "ms=[0-9]*" | cut -d= -f2 | tr "\n" " ") keys: $(grep "flush committed" $W/serve.Q.err | grep -o "keys=[0-9]*" | cut -d= -f2 | tr "\n" " ")"
$BIN chainstate --network regtest --backend bbolt --datadir $DD --hash-type hash_serialized_3 --json --log-level warn > $W/hs3.Q
log "after: $(jq -c '{hash_serialized_3, muhash, txouts}' $W/hs3.Q) want $(jq -c '.blocks.after|{hash_serialized_3, muhash, txouts}' $G/expect.json)"
rm -rf $DD
log done
