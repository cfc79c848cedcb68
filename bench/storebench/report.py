#!/usr/bin/env python3
"""Tables (markdown on stdout) and the growth chart (SVG) from the JSON files run.sh writes.

    python3 bench/storebench/report.py [OUT_DIR] [SVG_PATH]
"""
import glob
import json
import math
import os
import statistics
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/storebench-out"
SVG = sys.argv[2] if len(sys.argv) > 2 else "bench/results/storage-growth.svg"
STORES = ["pebble", "rocksdb", "bbolt"]

runs = {}
for f in glob.glob(os.path.join(OUT, "*.json")):
    with open(f) as fh:
        d = json.load(fh)
    runs[d["name"]] = d


def get(prefix):
    return [runs[k] for k in sorted(runs) if k.startswith(prefix)]


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def rng(xs, fmt="{:.0f}"):
    if not xs:
        return "–"
    return (fmt + " ({}–{})").format(med(xs), fmt.format(min(xs)), fmt.format(max(xs)))


def loads(rs):
    ls = [r["load"] for r in rs]
    return "{:.1f}–{:.1f}".format(min(ls), max(ls)) if ls else "–"


print("## Connect (cache 16 MiB)\n")
print("| corpus | store | blocks/s | inputs/s | flush p95 ms | flushes | UTXOs | load |")
print("|---|---|---:|---:|---:|---:|---:|---|")
ratios = {}
for corpus in ["mainnet", "gen1m"]:
    meds = {}
    for s in STORES:
        rs = get(f"connect-{corpus}-{s}-")
        if not rs:
            continue
        res = [r["result"] for r in rs]
        meds[s] = med([x["blocks_per_s"] for x in res])
        print("| {} | {} | {} | {} | {} | {} | {} | {} |".format(
            corpus, s, rng([x["blocks_per_s"] for x in res], "{:.1f}"), rng([x["inputs_per_s"] for x in res]),
            rng([x["flush_p95_ms"] for x in res], "{:.1f}"), res[0]["flushes"], res[0]["utxos"], loads(rs)))
    if meds:
        fast = max(meds, key=meds.get)
        slow = min(meds, key=meds.get)
        ratios[corpus] = (slow, fast, meds[fast] / meds[slow])
print()
for c, (slow, fast, r) in ratios.items():
    print(f"- {c}: slowest {slow} vs fastest {fast}: {r:.2f}x (median blocks/s)")

print("\n## RSS per cached output (cache 4 GiB, one final flush)\n")
print("| corpus | store | build | UTXOs | txids | cache estimate B/output | cache RSS B/output (drop) | cache heap B/output (drop) | RSS after flush − baseline B/output | peak − baseline RSS B/output | load |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
for corpus in ["mainnet", "gen1m"]:
    for s in STORES:
        for b in ["before", "after"]:
            r = runs.get(f"rss-{corpus}-{s}-{b}")
            if not r:
                continue
            x = r["result"]
            print("| {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} |".format(
                corpus, s, b, x["utxos"], x["transactions"], x["cache_estimate_per_output"], x.get("cache_rss_per_output", 0),
                x.get("cache_heap_per_output", 0), x["rss_per_output"], x["peak_rss_per_output"], r["load"]))

print("\n## Random reads via Chainstate.Coin (1M-output chain, 100k sampled outpoints)\n")
print("| store | cold, page cache warm ns/op | cold, datadir evicted from page cache ns/op | cached ns/op | load |")
print("|---|---:|---:|---:|---|")
for s in STORES:
    w = get(f"read-warmpc-{s}-")
    c = get(f"read-coldpc-{s}-")
    if not w:
        continue
    cached = [r["result"]["cached_ns_per_op"] for r in w + c]
    print("| {} | {} | {} | {} | {} |".format(s, rng([r["result"]["cold_ns_per_op"] for r in w]),
                                            rng([r["result"]["cold_ns_per_op"] for r in c]), rng(cached), loads(w + c)))

print("\n## Bytes on disk\n")
print("| store | UTXOs | txids | datadir after replay | after compaction | B/output compacted | `c` logical B/output | other keys+values (undo, 288 blocks, index) | compaction |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
for s in STORES:
    z = runs.get(f"size-{s}")
    sm = runs.get(f"sample-{s}")
    if not z or not sm:
        continue
    z, sm = z["result"], sm["result"]
    print("| {} | {} | {} | {:,} | {:,} | {:.1f} | {:.1f} | {:,} | {} |".format(
        s, sm["outputs"], sm["records"], z["bytes"], z["compacted_bytes"], z["compacted_bytes"] / sm["outputs"],
        sm["coin_logical_bytes_per_output"], sm["other_bytes"], z["compaction"]))

print("\n## Growth (cache 450 MiB, flush every 50 blocks)\n")
print("| store | UTXOs | height | s | blocks/s (segment) | inputs/s (segment) | flushes | flush mean ms | flush max ms | RSS MiB | RSS B/output |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
series = {}
for s in STORES + [x + "-1e7" for x in STORES]:
    r = runs.get(f"growth10-{s[:-4]}") if s.endswith("-1e7") else runs.get(f"growth-{s}")
    if not r:
        continue
    pts = []
    for c in r["result"].get("checkpoints", []):
        print("| {} | {:,} | {} | {:.1f} | {:.1f} | {:.0f} | {} | {:.0f} | {:.0f} | {:.0f} | {:.0f} |".format(
            s, c["utxos"], c["height"], c["seconds"], c["seg_blocks_per_s"], c["seg_inputs_per_s"], c["seg_flushes"],
            c["seg_flush_mean_ms"], c["seg_flush_max_ms"], c["rss"] / 2**20, c["rss"] / c["utxos"]))
        pts.append(c)
    x = r["result"]
    print("| {} | {:,} (end) | {} | {:.1f} | {:.1f} overall | {:.0f} overall | {} | p95 {:.0f} | {:.0f} | peak {:.0f} | |".format(
        s, x["utxos"], x["height"], x["seconds"], x["blocks_per_s"], x["inputs_per_s"], x["flushes"], x["flush_p95_ms"],
        x["flush_max_ms"], x["rss_peak"] / 2**20))
    series[s] = pts

# SVG: three panels sharing a log-scale x axis (UTXO set size).
if series:
    colors = {"pebble": "#1f77b4", "rocksdb": "#d62728", "bbolt": "#2ca02c",
              "pebble-1e7": "#9ecae1", "rocksdb-1e7": "#fcbba1", "bbolt-1e7": "#a1d99b"}
    panels = [("seg_inputs_per_s", "inputs/s (segment)"), ("seg_flush_mean_ms", "flush mean ms (segment)"),
              ("rss_per_output", "RSS bytes / UTXO (log scale)")]
    W, H, PW, PH, L, T = 990, 360, 260, 220, 60, 50
    xs = [c["utxos"] for pts in series.values() for c in pts]
    x0, x1 = math.log10(min(xs)), math.log10(max(xs))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W/2}" y="20" text-anchor="middle" font-size="14">utxod import as the UTXO set grows '
           f'(generated chain, cache 450 MiB, flush every 50 blocks)</text>']
    for i, (key, title) in enumerate(panels):
        ox = L + i * (PW + 60)
        vals = []
        for pts in series.values():
            for c in pts:
                v = c["rss"] / c["utxos"] if key == "rss_per_output" else c[key]
                vals.append(v)
        logy = key == "rss_per_output"
        ymax = max(vals) * 1.1 if vals else 1
        ymin = 10 ** math.floor(math.log10(min(vals))) if logy else 0
        ymax = 10 ** math.ceil(math.log10(max(vals))) if logy else ymax

        def ypos(v):
            if logy:
                return T + PH - PH * (math.log10(v) - math.log10(ymin)) / (math.log10(ymax) - math.log10(ymin))
            return T + PH - PH * v / ymax
        out.append(f'<text x="{ox + PW/2}" y="{T - 8}" text-anchor="middle">{title}</text>')
        out.append(f'<rect x="{ox}" y="{T}" width="{PW}" height="{PH}" fill="none" stroke="#999"/>')
        ticks = [10 ** e for e in range(int(math.log10(ymin)), int(math.log10(ymax)) + 1)] if logy else [ymax * k / 4 for k in range(5)]
        for yv in ticks:
            y = ypos(yv)
            out.append(f'<line x1="{ox}" x2="{ox + PW}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
            out.append(f'<text x="{ox - 4}" y="{y + 4:.1f}" text-anchor="end">{yv:.0f}</text>')
        for e in range(math.ceil(x0), math.floor(x1) + 1):
            x = ox + PW * (e - x0) / (x1 - x0)
            out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{T}" y2="{T + PH}" stroke="#eee"/>')
            out.append(f'<text x="{x:.1f}" y="{T + PH + 14}" text-anchor="middle">10^{e}</text>')
        out.append(f'<text x="{ox + PW/2}" y="{T + PH + 30}" text-anchor="middle">UTXOs (log scale)</text>')
        for s, pts in series.items():
            coords = []
            for c in pts:
                if key == "seg_flush_mean_ms" and c["seg_flushes"] == 0:
                    continue  # no flush in that segment
                v = c["rss"] / c["utxos"] if key == "rss_per_output" else c[key]
                x = ox + PW * (math.log10(c["utxos"]) - x0) / (x1 - x0)
                y = ypos(v)
                coords.append(f"{x:.1f},{y:.1f}")
            out.append(f'<polyline points="{" ".join(coords)}" fill="none" stroke="{colors[s]}" stroke-width="2"/>')
            for p in coords:
                px, py = p.split(",")
                out.append(f'<circle cx="{px}" cy="{py}" r="2.5" fill="{colors[s]}"/>')
    for j, s in enumerate(series):
        label = s.replace("-1e7", " (whole chain, to 10^7)") if s.endswith("-1e7") else s + " (to 3·10^6)"
        lx, ly = L + (j % 3) * 280, H - 34 + (j // 3) * 16
        out.append(f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{colors[s]}"/>')
        out.append(f'<text x="{lx + 16}" y="{ly}">{label}</text>')
    out.append("</svg>")
    with open(SVG, "w") as fh:
        fh.write("\n".join(out) + "\n")
    print(f"\n(chart written to {SVG})")
