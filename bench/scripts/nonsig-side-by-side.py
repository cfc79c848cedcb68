#!/usr/bin/env python3
# Issue 19's assume-valid side-by-side run (bench/results/assumevalid.md): btcd
# with a checkpoint at the tip against utxod's defaults (reading one block
# ahead while scripts are assumed valid) on every store, arms rotating (round r starts r arms later, as
# bench.Order: no arm runs twice in a row),
# fresh datadir per run, /usr/bin/time's wall, user+sys CPU and peak RSS;
# medians, and every utxod run's muhash / txouts / transactions printed.
#
#   python3 bench/scripts/nonsig-side-by-side.py ROUNDS
#   env: CORPUS (the buried corpus), TIP (its tip hash), HEIGHT, INPUTS,
#        UTXOD, BTCDREPLAY, WORK (scratch directory)
import os, subprocess, sys, statistics, shutil, json
rounds=int(sys.argv[1])
B=os.environ.get('CORPUS','/work/corpus/early440k-bury2017.dat')
BT=os.environ.get('TIP','429581e30a4ebad9f9f56d75ce762665549335154ff62dd2f8cfcf55100cde6d')
H=os.environ.get('HEIGHT','2933'); INPUTS=int(os.environ.get('INPUTS','440210'))
U=os.environ.get('UTXOD','bin/utxod'); BR=os.environ.get('BTCDREPLAY','bin/btcdreplay')
D=os.path.join(os.environ.get('WORK','/tmp'),'nonsig-sbs-datadir')
def utx(store, extra): return [U,'import','--network','regtest','--backend',store,'--datadir',D,'--json','--hash-type','muhash','--log-level','warn','--assume-valid',BT]+extra+[B]
arms=[('btcd --checkpoint',[BR,'--network','regtest','--json','--log-level','warn','--progress','0','--checkpoint',H+':'+BT,'--datadir',D,B])]
for s in ['pebble','rocksdb','bbolt']:
    arms.append((f'utxod {s}',utx(s,[])))
res={a[0]:[] for a in arms}; outs={}
for r in range(rounds):
    k=r%len(arms)
    for label,cmd in arms[k:]+arms[:k]:
        shutil.rmtree(D,ignore_errors=True)
        p=subprocess.run(['/usr/bin/time','-f','%e %U %S %M']+cmd,capture_output=True,text=True)
        if p.returncode: print(label,p.stderr[-2000:]); sys.exit(1)
        w,u,s,m=p.stderr.strip().split('\n')[-1].split()
        res[label].append((float(w),float(u)+float(s),int(m)/1024)); outs[label]=p.stdout
bw=statistics.median(x[0] for x in res['btcd --checkpoint'])
print('| arm | wall s (rounds) | median wall | median CPU s | CPU per input | peak RSS MiB | btcd / arm wall |')
print('|---|---|---:|---:|---:|---:|---:|')
for label,v in res.items():
    w=statistics.median(x[0] for x in v); c=statistics.median(x[1] for x in v); m=statistics.median(x[2] for x in v)
    print(f"| {label} | {' '.join('%.2f'%x[0] for x in v)} | {w:.2f} | {c:.2f} | {c/INPUTS*1e6:.1f} µs | {m:.0f} | {bw/w:.2f}× |")
for label,o in outs.items():
    if label.startswith('utxod'):
        j=json.loads(o); print(label, j.get('muhash'), j.get('txouts'), j.get('transactions'))
