#!/usr/bin/env python3
"""torch.topk on the cases of bench/topk-webgpu.ts, timed with CUDA events; prints one JSON object
(and writes $OUT/torch-topk.json when OUT is set, or --out=DIR).

f32, largest=True, sorted=True, indices returned (torch always returns them). Per case:
- singleMs: median over many single calls, events recorded around each call (after warm-up);
- batchedMs: median over several batches of N back-to-back calls, events around the batch, / N;
- copySameBytesMs: y.copy_(x) of the same tensor, batched the same way;
and once: a 256 MiB copy for the device bandwidth (read + write bytes / time).
torch has no per-row sizes or per-row k: attention runs on the padded 512x8192 matrix with -inf
beyond each row's size (k=256), the MoE router with per-token k on 4096x128 with k=8 (the max k).

Run on the device: python3 bench/gpu/torch_topk.py [--single-cols=16777216] [--runs=101]
"""
import json
import os
import statistics
import sys

import torch

args = dict(a.lstrip("-").split("=", 1) if "=" in a else (a.lstrip("-"), "1") for a in sys.argv[1:])
RUNS = int(args.get("runs", 101))
BATCH_MS = float(args.get("batch-ms", 60))
SINGLE_COLS = int(args.get("single-cols", 16777216))
dev = torch.device("cuda")
torch.backends.cuda.matmul.allow_tf32 = False
gen = torch.Generator(device=dev).manual_seed(1234)


def rand(rows, cols):
    return torch.rand((rows, cols), generator=gen, device=dev, dtype=torch.float32) * 2 - 1


def cases():
    yield "4096x256 k=8", rand(4096, 256), 8, 4096 * 256
    yield "16384x64 k=2", rand(16384, 64), 2, 16384 * 64
    yield "64x32768 k=2048", rand(64, 32768), 2048, 64 * 32768
    yield "128x4096 k=64", rand(128, 4096), 64, 128 * 4096
    yield f"1x{SINGLE_COLS} k=100", rand(1, SINGLE_COLS), 100, SINGLE_COLS
    x = rand(512, 8192)
    sizes = torch.arange(512, device=dev) * 16 + 16
    mask = torch.arange(8192, device=dev)[None, :] >= sizes[:, None]
    x.masked_fill_(mask, float("-inf"))
    yield "attention 512x(16..8192) k=256", x, 256, int(sizes.sum().item())
    yield "moe 4096x128 k=1..8/token", rand(4096, 128), 8, 4096 * 128


def single_ms(fn, runs=RUNS):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    out = []
    for _ in range(runs):
        s.record()
        fn()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e))
    return statistics.median(out)


def batched_ms(fn, est_ms):
    n = max(5, min(1000, int(BATCH_MS / max(est_ms, 0.002))))
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    out = []
    for _ in range(7):
        s.record()
        for _ in range(n):
            fn()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e) / n)
    return statistics.median(out), n


big = torch.empty((256 << 20) // 4, device=dev)
big_out = torch.empty_like(big)
copy_est = single_ms(lambda: big_out.copy_(big), 21)
copy_big, _ = batched_ms(lambda: big_out.copy_(big), copy_est)
copy_gbps = 2 * big.numel() * 4 / (copy_big * 1e6)
del big, big_out

results = []
for label, x, k, valid in cases():
    y = torch.empty_like(x)
    c1 = single_ms(lambda: y.copy_(x), 21)
    copy_same, _ = batched_ms(lambda: y.copy_(x), c1)
    fn = lambda: torch.topk(x, k, dim=1, largest=True, sorted=True)
    single = single_ms(fn)
    batched, n = batched_ms(fn, single)
    results.append({
        "case": label,
        "torchMs": round(batched, 5),
        "torchSingleMs": round(single, 5),
        "torchN": n,
        "copySameBytesMs": round(copy_same, 5),
        "readGBps": round(valid * 4 / (batched * 1e6), 1),
        "bwFraction": round(valid * 4 / (batched * 1e6) / copy_gbps, 3),
    })
    print(json.dumps(results[-1]), file=sys.stderr)
    del x, y

meta = {
    "torch": torch.__version__,
    "cuda": torch.version.cuda,
    "gpu": torch.cuda.get_device_name(0),
    "copy256MiB": {"ms": round(copy_big, 5), "GBpsReadPlusWrite": round(copy_gbps, 1)},
    "runs": RUNS,
}
doc = json.dumps({"meta": meta, "results": results}, indent=1)
print(doc)
out = args.get("out", os.environ.get("OUT"))
if out:
    with open(os.path.join(out, "torch-topk.json"), "w") as f:
        f.write(doc)
