#!/usr/bin/env python3
"""Merge topk-webgpu.json (segkit WebGPU + tfjs-webgpu + copy kernel, one Dawn device) and
torch-topk.json (torch.topk / torch.argmax, CUDA events) from DIR into one table with ratios, the
speed issue's targets, and an SVG chart (segkit / torch time per case). With a second segkit run
(--before=FILE, e.g. the same bench built from an earlier commit) the table and the chart show
before and after side by side. --basis=gpu charts and judges the targets on segkit's GPU time
(timestamp queries) instead of its batched wall time.

Writes DIR/compare.md, DIR/compare.json and DIR/chart.svg; prints the Markdown.

Usage: python3 bench/gpu/compare.py DIR [--before=DIR/before-topk-webgpu.json] [--after=FILE] [--basis=gpu]
           [--chart=PATH] [--title=TEXT]
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chart import ratio_chart  # noqa: E402

pos = [a for a in sys.argv[1:] if not a.startswith("--")]
opts = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
d = pos[0] if pos else "bench/results"


def load(path):
    return json.load(open(path)) if path and os.path.exists(path) else None


after = load(opts.get("after", os.path.join(d, "topk-webgpu.json"))) or {"meta": {}, "results": []}
before = load(opts.get("before", os.path.join(d, "before-topk-webgpu.json")))
th = load(os.path.join(d, "torch-topk.json")) or {"meta": {}, "results": []}
torch_by = {r["case"]: r for r in th["results"]}
before_by = {r["case"]: r for r in (before or {"results": []})["results"]}


def torch_row(case):
    if case in torch_by:
        return torch_by[case]
    if case.startswith("1x") and "k=100" in case:
        return next((r for c, r in torch_by.items() if c.startswith("1x") and c.endswith("k=100")), None)
    return None


def f(x, nd=3):
    return "" if x is None else (f"{x:.{nd}f}" if isinstance(x, float) else str(x))


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def seg_ms(r):
    """segkit's batched time: 'trust' where the case has device-only parameters and it was timed."""
    return r.get("segkitMs")


wm, tm = after.get("meta", {}), th.get("meta", {})
copy_gbps = (wm.get("copy") or {}).get("GBpsReadPlusWrite")
lines = []
head = ("| case | workload | variant (launches) | segkit ms | host ms/call | plan.run ms | GPU ms | torch ms | torch.argmax ms "
        "| segkit / torch | GPU / torch | segkit read GB/s | % of copy | tfjs-webgpu ms | tfjs / segkit |")
lines += [head, "|" + "|".join("---" for _ in range(head.count("|") - 1)) + "|"]
rows = []
for r in after["results"]:
    t = torch_row(r["case"]) or {}
    ms = seg_ms(r)
    keys_bytes = (r.get("keysMiB") or 0) * 2**20
    gbps = None if not ms else keys_bytes / (ms * 1e6)
    row = {
        "case": r["case"], "id": r.get("id"), "workload": r.get("workload"), "variant": r.get("variant"), "launches": r.get("launches"),
        "segkitMs": ms, "segkitHostMs": r.get("segkitHostMs"), "segkitPlanRunMs": r.get("segkitPlanRunMs"), "segkitGpuMs": r.get("segkitGpuMs"),
        "segkitTrustMs": r.get("segkitTrustMs"), "segkitTrustGpuMs": r.get("segkitTrustGpuMs"),
        "torchMs": t.get("torchMs"), "argmaxMs": t.get("argmaxMs"), "tfjsMs": r.get("tfjsMs"),
        "overTorch": ratio(ms, t.get("torchMs")), "gpuOverTorch": ratio(r.get("segkitGpuMs"), t.get("torchMs")),
        "overArgmax": ratio(ms, t.get("argmaxMs")), "keysBytes": keys_bytes, "readGBps": gbps, "copyFraction": ratio(gbps, copy_gbps),
        "mismatches": r.get("mismatches"), "error": r.get("segkitError") or r.get("tfjsError"), "note": r.get("note"),
    }
    b = before_by.get(r["case"])
    if b is not None:
        row["beforeMs"] = seg_ms(b)
        row["beforeGpuMs"] = b.get("segkitGpuMs")
        row["beforeVariant"] = f"{b.get('variant')} ({b.get('launches')})"
        row["beforeOverTorch"] = ratio(seg_ms(b), t.get("torchMs"))
    rows.append(row)
    lines.append("| " + " | ".join([
        r["case"], r.get("workload") or "", f"{r.get('variant')} ({r.get('launches')})", f(ms), f(r.get("segkitHostMs")), f(r.get("segkitPlanRunMs")),
        f(r.get("segkitGpuMs")), f(t.get("torchMs")), f(t.get("argmaxMs")), f(row["overTorch"], 2), f(row["gpuOverTorch"], 2),
        f(gbps, 0), "" if row["copyFraction"] is None else f"{100 * row['copyFraction']:.1f}%", f(r.get("tfjsMs")),
        f(ratio(r.get("tfjsMs"), ms), 1)]) + " |")

trust = [r for r in rows if r["segkitTrustMs"] is not None]
if trust:
    lines += ["", "Device-only parameters under `guaranteeChecks: 'trust'` (no device check):", "",
              "| case | segkit ms ('validate') | segkit ms ('trust') | GPU ms ('trust') | torch ms | 'trust' / torch |", "|---|---|---|---|---|---|"]
    for r in trust:
        lines.append(f"| {r['case']} | {f(r['segkitMs'])} | {f(r['segkitTrustMs'])} | {f(r['segkitTrustGpuMs'])} | {f(r['torchMs'])} | {f(ratio(r['segkitTrustMs'], r['torchMs']), 2)} |")

if before is not None:
    bm = before.get("meta", {})
    lines += ["", f"Before / after (before: {bm.get('build', 'earlier build')}):", "",
              "| case | before: variant (launches) | before ms | before GPU ms | after: variant (launches) | after ms | after GPU ms | after / before | before / torch | after / torch |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "beforeMs" not in r:
            continue
        lines.append(f"| {r['case']} | {r['beforeVariant']} | {f(r['beforeMs'])} | {f(r['beforeGpuMs'])} | {r['variant']} ({r['launches']}) | {f(r['segkitMs'])} | {f(r['segkitGpuMs'])} "
                     f"| {f(ratio(r['segkitMs'], r['beforeMs']), 2)} | {f(r['beforeOverTorch'], 2)} | {f(r['overTorch'], 2)} |")

lines.append("")
lines.append(f"copy kernel (WebGPU, {((wm.get('copy') or {}).get('bytes') or 0) >> 20} MiB): {copy_gbps} GB/s read+write; "
             f"torch copy_ 256 MiB: {(tm.get('copy256MiB') or {}).get('GBpsReadPlusWrite')} GB/s read+write; "
             f"empty submit round trip {wm.get('emptySubmitRoundTripUs')} us")
lines.append(f"adapter: {wm.get('adapter')}; torch {tm.get('torch')} CUDA {tm.get('cuda')} on {tm.get('gpu')}")
for row in rows:
    if row["error"]:
        lines.append(f"error in {row['case']}: {row['error']}")
    if row["note"]:
        lines.append(f"note on {row['case']}: {row['note']}")
    if row["mismatches"]:
        lines.append(f"MISMATCHES in {row['case']}: {row['mismatches']}")

# Forced variants and tunings.
vrows = [r for r in after["results"] if r.get("variants")]
if vrows:
    lines += ["", "Forced variants (env tuning), GPU ms from timestamps / plan.run ms batched; * = the policy's choice:", "",
              "| case | single-tile | reduce | radix-select | torch ms |", "|---|---|---|---|---|"]
    for r in vrows:
        cells = []
        for v in ("single-tile", "reduce", "radix-select"):
            x = r["variants"].get(v, {})
            star = "*" if r.get("variant") == v else ""
            cells.append("n/a" if "error" in x or not x else f"{star}{f(x.get('gpuMs'), 4)} / {f(x.get('planRunMs'), 4)}" + ("" if not x.get("mismatches") else f" ({x['mismatches']} mismatches)"))
        t = torch_row(r["case"]) or {}
        lines.append(f"| {r['case']} | " + " | ".join(cells) + f" | {f(t.get('torchMs'), 4)} |")
trows = [r for r in after["results"] if r.get("tunings")]
if trows:
    labels = list(dict.fromkeys(k for r in trows for k in r["tunings"]))
    lines += ["", "Policy tunings (env tuning), GPU ms / plan.run ms batched (variant):", "",
              "| case | " + " | ".join(labels) + " | policy's choice GPU ms |", "|---|" + "---|" * (len(labels) + 1)]
    for r in trows:
        cells = []
        for lab in labels:
            x = r["tunings"].get(lab, {})
            cells.append("n/a" if "error" in x or not x else f"{f(x.get('gpuMs'), 4)} / {f(x.get('planRunMs'), 4)} ({x.get('variant')})" + ("" if not x.get("mismatches") else f" ({x['mismatches']} mismatches)"))
        lines.append(f"| {r['case']} | " + " | ".join(cells) + f" | {f(r.get('segkitGpuMs'), 4)} |")

# The speed issue's targets: on segkit's batched wall time, or with --basis=gpu on its GPU time (a
# call whose clock sagged reads wall times several times its GPU times; bench/gpu/clocks.py).
gpu_basis = opts.get("basis") == "gpu"
basis = "GPU" if gpu_basis else "segkit"
by = {}
for r in rows:
    if not r["id"]:
        continue
    ms = r["segkitGpuMs"] if gpu_basis else r["segkitMs"]
    gbps = None if not ms else r["keysBytes"] / (ms * 1e6)
    by[r["id"]] = {**r, "segkitMs": ms, "overTorch": ratio(ms, r["torchMs"]), "overArgmax": ratio(ms, r["argmaxMs"]), "readGBps": gbps, "copyFraction": ratio(gbps, copy_gbps)}
targets = []


def tgt(name, ok, detail):
    targets.append({"target": name, "met": ok, "detail": detail})


for cid in ("vocab-k50", "anchor-256x262144", "indexer-64k", "indexer-128k", "indexer-decode-1", "indexer-decode-8", "indexer-decode-4x64k", "single"):
    r = by.get(cid)
    if r and r["overTorch"] is not None:
        tgt(f"{r['case']} (rows >= 64K): >= 2x torch.topk", r["overTorch"] <= 0.5, f"{basis} {f(r['segkitMs'])} ms vs torch {f(r['torchMs'])} ms: {f(1 / r['overTorch'], 2)}x")
r = by.get("single")
if r and r["copyFraction"] is not None:
    tgt(f"{r['case']}: >= 25% of copy bandwidth", r["copyFraction"] >= 0.25, f"{100 * r['copyFraction']:.1f}% ({f(r['readGBps'], 0)} GB/s of {copy_gbps})")
for cid in ("greedy-k1", "greedy-1row"):
    r = by.get(cid)
    if r and r["overArgmax"] is not None:
        tgt(f"{r['case']}: within 1.5x of torch.argmax", r["overArgmax"] <= 1.5, f"{basis} {f(r['segkitMs'])} ms vs argmax {f(r['argmaxMs'])} ms: {f(r['overArgmax'], 2)}x")
    if r and r["copyFraction"] is not None and cid == "greedy-k1":
        tgt(f"{r['case']}: >= 50% of copy bandwidth", r["copyFraction"] >= 0.5, f"{100 * r['copyFraction']:.1f}%")
for cid in ("router-16", "router-8"):
    r = by.get(cid)
    if r and r["overTorch"] is not None:
        tgt(f"{r['case']}: at or below torch.topk", r["overTorch"] <= 1, f"{f(r['overTorch'], 2)}x")
r = by.get("ragged-device")
if r and r["overTorch"] is not None:
    tgt(f"{r['case']}: below torch (padded)", r["overTorch"] < 1, f"'validate' {f(r['overTorch'], 2)}x; 'trust' {f(ratio(r['segkitTrustMs'], r['torchMs']), 2)}x")
for r in rows:
    after_ms, before_ms = (r["segkitGpuMs"], r.get("beforeGpuMs")) if gpu_basis else (r["segkitMs"], r.get("beforeMs"))
    if before_ms and after_ms and r["torchMs"]:
        if before_ms <= r["torchMs"]:
            tgt(f"{r['case']}: no regression where segkit already beat torch", after_ms <= r["torchMs"] and after_ms <= before_ms * 1.1,
                f"{f(before_ms)} -> {f(after_ms)} ms ({basis})")
if targets:
    lines += ["", "| target | met | numbers |", "|---|---|---|"]
    for t in targets:
        lines.append(f"| {t['target']} | {'n/a' if t['met'] is None else 'met' if t['met'] else 'MISSED'} | {t['detail']} |")


# --basis=gpu charts segkit's GPU time (timestamps) over torch's instead of its batched wall time:
# for a call whose wall times the GPU's clock distorted (clocks.py shows the stretches).
ratio_chart([{"case": r["case"], "over": r["gpuOverTorch"] if gpu_basis else r["overTorch"],
              "beforeOver": ratio(r.get("beforeGpuMs"), r.get("torchMs")) if gpu_basis else r.get("beforeOverTorch")} for r in rows],
            opts.get("chart", os.path.join(d, "chart.svg")),
            opts.get("title", f"segkit top-k vs torch on {tm.get('gpu', 'the GPU')}"),
            f"segkit {'GPU time' if gpu_basis else 'time per call (batched)'} / torch.topk's (log scale; left of 1 = segkit faster)",
            wm.get("adapter", {}).get("description", "") if isinstance(wm.get("adapter"), dict) else "")

md = "\n".join(lines)
print(md)
open(os.path.join(d, "compare.md"), "w").write(md + "\n")
json.dump({"webgpuMeta": wm, "torchMeta": tm, "rows": rows, "targets": targets}, open(os.path.join(d, "compare.json"), "w"), indent=1)
