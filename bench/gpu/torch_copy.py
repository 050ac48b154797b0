#!/usr/bin/env python3
"""torch's batched copies on the shapes of bench/lib/copy-shapes.ts (4096 buffers of 1..256, 256 of
4K..64K, one of 16M; u32 data as int32), timed with CUDA events; prints one JSON object (and writes
$OUT/torch-copy.json when OUT is set, or --out=DIR). The peers the copy issue names for the H200:

- loopMs: a Python loop of dst[a:b].copy_(src[c:d]), one slice copy per buffer;
- gatherMs: one gather: a flat index of every copied element (built once, outside the timing) then
  dst.index_copy_(0, dstIndex, src.index_select(0, srcIndex));
- catMs: dst[destination order] = torch.cat(source slices) (the slices joined, then one copy);
- copySameBytesMs: y.copy_(x) of the total bytes, for the bandwidth the issue's >= 50% target is relative to.

The layout follows copy-shapes.ts (buffers apart in a shuffled order, sources anywhere) from its own
seeded generator, so sizes match in distribution, not value for value. Medians over --runs calls.

Run on the device: python3 bench/gpu/torch_copy.py [--runs=21]
"""
import json
import random
import sys

import torch
from cuda_timing import cli_args, single_ms, write_report

args = cli_args()
RUNS = int(args.get("runs", 21))
dev = torch.device("cuda")


def shape(name, n, lo, hi, seed):
    r = random.Random(seed)
    sizes = [r.randint(lo, hi) for _ in range(n)]
    order = list(range(n))
    r.shuffle(order)
    dst = [0] * n
    at = 0
    for i in order:
        dst[i] = at
        at += sizes[i]
    src = [r.randint(0, at - s) for s in sizes]
    return name, sizes, src, dst, at




results = []
for name, sizes, src_off, dst_off, total in [
    shape("4096 x 1..256", 4096, 1, 256, 1),
    shape("256 x 4K..64K", 256, 4096, 65536, 2),
    shape("1 x 16M", 1, 1 << 24, 1 << 24, 3),
]:
    src = torch.arange(total, dtype=torch.int32, device=dev)
    dst = torch.zeros(total, dtype=torch.int32, device=dev)
    buffers = list(zip(sizes, src_off, dst_off))

    def loop():
        for s, a, d in buffers:
            dst[d : d + s].copy_(src[a : a + s])

    src_index = torch.cat([torch.arange(a, a + s, device=dev) for s, a, _ in buffers])
    dst_index = torch.cat([torch.arange(d, d + s, device=dev) for s, _, d in buffers])

    def gather():
        dst.index_copy_(0, dst_index, src.index_select(0, src_index))

    by_dst = sorted(range(len(buffers)), key=lambda i: dst_off[i])

    def cat():
        dst[: total] = torch.cat([src[src_off[i] : src_off[i] + sizes[i]] for i in by_dst])

    y = torch.empty_like(src)
    row = {"shape": name, "buffers": len(sizes), "items": total}
    for key, fn in (("loopMs", loop), ("gatherMs", gather), ("catMs", cat), ("copySameBytesMs", lambda: y.copy_(src))):
        ms = single_ms(fn, RUNS, warmup=1)
        row[key] = ms
        row[key.replace("Ms", "GBs")] = total * 8 / (ms * 1e6)
    loop()
    expected = torch.zeros_like(dst)
    for s, a, d in buffers:
        expected[d : d + s] = src[a : a + s]
    row["correct"] = bool(torch.equal(dst, expected))
    results.append(row)
    print(json.dumps(row), file=sys.stderr)

write_report("torch-copy", results, args, RUNS)
