#!/usr/bin/env python3
"""Merge topk-webgpu.json (segkit WebGPU + tfjs-webgpu + copy kernel, one Dawn device) and
torch-topk.json (torch.topk, CUDA events) from DIR into one table with ratios and the issue-5 targets.
Writes DIR/compare.md and DIR/compare.json; prints the Markdown.

Usage: python3 bench/gpu/compare.py DIR
"""
import json
import os
import sys

d = sys.argv[1] if len(sys.argv) > 1 else "bench/results"


def load(name):
    p = os.path.join(d, name)
    return json.load(open(p)) if os.path.exists(p) else None


wg = load("topk-webgpu.json") or {"meta": {}, "results": []}
th = load("torch-topk.json") or {"meta": {}, "results": []}
torch_by = {r["case"]: r for r in th["results"]}


def torch_row(case):
    if case in torch_by:
        return torch_by[case]
    if case.startswith("1x"):
        return next((r for c, r in torch_by.items() if c.startswith("1x")), None)
    return None


def f(x, nd=3):
    return "" if x is None else (f"{x:.{nd}f}" if isinstance(x, float) else str(x))


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


rows = []
for r in wg["results"]:
    t = torch_row(r["case"]) or {}
    rows.append({
        "case": r["case"],
        "variant": r.get("variant"),
        "launches": r.get("launches"),
        "segkitMs": r.get("segkitMs"),
        "torchMs": t.get("torchMs"),
        "tfjsMs": r.get("tfjsMs"),
        "segkitOverTorch": ratio(r.get("segkitMs"), t.get("torchMs")),
        "xVsTfjs": ratio(r.get("tfjsMs"), r.get("segkitMs")),
        "segkitSingleMs": r.get("segkitSingleMs"),
        "segkitGpuMs": r.get("segkitGpuMs"),
        "tfjsGpuMs": r.get("tfjsGpuMs"),
        "segkitHostMs": r.get("segkitHostMs"),
        "segkitPlanRunMs": r.get("segkitPlanRunMs"),
        "torchSingleMs": t.get("torchSingleMs"),
        "tfjsSingleMs": r.get("tfjsSingleMs"),
        "xVsTfjsSingle": ratio(r.get("tfjsSingleMs"), r.get("segkitSingleMs")),
        "copySameBytesMs": r.get("copySameBytesMs"),
        "segkitBw": r.get("bwFraction"),
        "torchBw": t.get("bwFraction"),
        "mismatches": r.get("mismatches"),
        "error": r.get("segkitError") or r.get("tfjsError"),
        "note": r.get("note"),
    })

cols = [("case", "case"), ("variant", "variant"), ("launches", "launches"),
        ("segkitMs", "segkit ms"), ("torchMs", "torch ms"), ("tfjsMs", "tfjs-webgpu ms"),
        ("segkitOverTorch", "segkit/torch"), ("xVsTfjs", "tfjs/segkit"),
        ("segkitHostMs", "segkit host ms/call"), ("segkitPlanRunMs", "segkit plan.run ms"),
        ("segkitGpuMs", "segkit GPU ms (ts)"), ("tfjsGpuMs", "tfjs GPU ms (ts)"),
        ("segkitSingleMs", "segkit 1 call+sync ms"), ("torchSingleMs", "torch 1 call ms"),
        ("tfjsSingleMs", "tfjs 1 call+data() ms"), ("xVsTfjsSingle", "tfjs/segkit (1 call)"),
        ("copySameBytesMs", "copy same bytes ms"), ("segkitBw", "segkit bw frac"), ("torchBw", "torch bw frac"),
        ("mismatches", "mismatches")]
# Compact table first (the one BENCHMARKS.md quotes), then every column.
lines = [
    "| case | variant (launches) | segkit ms | segkit host ms/call | segkit GPU ms | torch ms | tfjs-webgpu ms | tfjs GPU ms "
    "| segkit / torch | segkit GPU / torch | tfjs / segkit | tfjs GPU / segkit GPU | segkit read GB/s | torch read GB/s |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
]
for r in wg["results"]:
    t = torch_row(r["case"]) or {}
    lines.append("| " + " | ".join([
        r["case"], f"{r.get('variant')} ({r.get('launches')})", f(r.get("segkitMs"), 3), f(r.get("segkitHostMs"), 3), f(r.get("segkitGpuMs"), 3),
        f(t.get("torchMs"), 3), f(r.get("tfjsMs"), 3), f(r.get("tfjsGpuMs"), 3),
        f(ratio(r.get("segkitMs"), t.get("torchMs")), 2), f(ratio(r.get("segkitGpuMs"), t.get("torchMs")), 2),
        f(ratio(r.get("tfjsMs"), r.get("segkitMs")), 1), f(ratio(r.get("tfjsGpuMs"), r.get("segkitGpuMs")), 1),
        f(r.get("readGBps"), 1), f(t.get("readGBps"), 1)]) + " |")
lines.append("")
lines += ["| " + " | ".join(h for _, h in cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
for row in rows:
    lines.append("| " + " | ".join(f(row[k], 2 if k in ("segkitOverTorch", "xVsTfjs", "xVsTfjsSingle") else 4 if k.endswith("Ms") else 3) for k, _ in cols) + " |")

wm, tm = wg.get("meta", {}), th.get("meta", {})
lines.append("")
lines.append(f"copy kernel (WebGPU, {(wm.get('copy', {}).get('bytes') or 0) >> 20} MiB): {wm.get('copy', {}).get('GBpsReadPlusWrite')} GB/s read+write; "
             f"torch copy_ 256 MiB: {tm.get('copy256MiB', {}).get('GBpsReadPlusWrite')} GB/s read+write; "
             f"empty submit round trip {wm.get('emptySubmitRoundTripUs')} us")
lines.append(f"adapter: {wm.get('adapter')}; torch {tm.get('torch')} CUDA {tm.get('cuda')} on {tm.get('gpu')}")
for row in rows:
    if row["error"]:
        lines.append(f"error in {row['case']}: {row['error']}")
    if row["note"]:
        lines.append(f"note on {row['case']}: {row['note']}")

# forced variants (--variants): GPU time per variant, from timestamps
vrows = [r for r in wg["results"] if r.get("variants")]
if vrows:
    lines.append("")
    lines.append("Forced variants (env tuning), GPU ms from timestamps / plan.run ms batched; * = the policy's choice:")
    lines.append("")
    lines.append("| case | single-tile | reduce | radix-select | torch ms |")
    lines.append("|---|---|---|---|---|")
    for r in vrows:
        cells = []
        for v in ("single-tile", "reduce", "radix-select"):
            x = r["variants"].get(v, {})
            star = "*" if r.get("variant") == v else ""
            cells.append("n/a" if "error" in x or not x else f"{star}{f(x.get('gpuMs'), 4)} / {f(x.get('planRunMs'), 4)}" + ("" if not x.get("mismatches") else f" ({x['mismatches']} mismatches)"))
        t = torch_row(r["case"]) or {}
        lines.append(f"| {r['case']} | " + " | ".join(cells) + f" | {f(t.get('torchMs'), 4)} |")

# issue-5 targets
by = {r["case"]: r for r in rows}
targets = []


def tgt(name, ok, detail):
    targets.append({"target": name, "met": ok, "detail": detail})


r = by.get("4096x256 k=8")
if r:
    tgt("4096x256 k=8: segkit <= torch.topk", None if r["segkitOverTorch"] is None else r["segkitOverTorch"] <= 1,
        f"segkit {f(r['segkitMs'], 4)} ms vs torch {f(r['torchMs'], 4)} ms (x{f(r['segkitOverTorch'], 2)})")
r = by.get("64x32768 k=2048")
if r:
    tgt("64x32768 k=2048: segkit <= torch.topk", None if r["segkitOverTorch"] is None else r["segkitOverTorch"] <= 1,
        f"segkit {f(r['segkitMs'], 4)} ms vs torch {f(r['torchMs'], 4)} ms (x{f(r['segkitOverTorch'], 2)})")
r = next((x for x in rows if x["case"].startswith("1x")), None)
if r:
    tgt(f"{r['case']}: >= 50% of copy bandwidth", None if r["segkitBw"] is None else r["segkitBw"] >= 0.5,
        f"segkit {f(r['segkitBw'])} of copy, torch {f(r['torchBw'])}")
for r in rows:
    tgt(f"{r['case']}: >= 10x vs tfjs-webgpu", None if r["xVsTfjs"] is None else r["xVsTfjs"] >= 10,
        f"batched x{f(r['xVsTfjs'], 1)}, single call x{f(r['xVsTfjsSingle'], 1)}")
lines.append("")
lines.append("| target | met | numbers |")
lines.append("|---|---|---|")
for t in targets:
    lines.append(f"| {t['target']} | {'n/a' if t['met'] is None else 'met' if t['met'] else 'MISSED'} | {t['detail']} |")

md = "\n".join(lines)
print(md)
open(os.path.join(d, "compare.md"), "w").write(md + "\n")
json.dump({"webgpuMeta": wm, "torchMeta": tm, "rows": rows, "targets": targets}, open(os.path.join(d, "compare.json"), "w"), indent=1)
