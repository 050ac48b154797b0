#!/usr/bin/env python3
"""torch.sort, torch.argsort and torch.topk (k >= 4096, sorted) on the cases of bench/sort-webgpu.ts,
timed with CUDA events; prints one JSON object (and writes $OUT/torch-sort.json when OUT is set, or
--out=DIR). f32, ascending sort along rows (values and indices), argsort (indices only), topk largest
sorted. singleMs: median of single calls with events around each; batchedMs: median over batches of
N back-to-back calls, / N.

Run on the device: python3 bench/gpu/torch_sort.py [--single-cols=16777216] [--runs=101]
  [--shapes=32x131072,512x16384r] (more sort cases, rows x cols, as bench/sort-webgpu.ts's; a trailing r,
  ragged there, is the padded rows x cols here) [--topk=4x1048576:131072] (more top-k cases, as its --topk)
"""
import json
import sys

import torch
from cuda_timing import batched_ms, cli_args, single_ms, write_report

args = cli_args()
RUNS = int(args.get("runs", 101))
BATCH_MS = float(args.get("batch-ms", 60))
SINGLE_COLS = int(args.get("single-cols", 16777216))
dev = torch.device("cuda")
gen = torch.Generator(device=dev).manual_seed(1234)


def rand(rows, cols):
    return torch.rand((rows, cols), generator=gen, device=dev, dtype=torch.float32) * 2 - 1


SHAPES = [(f"{r}x{c}", r, c) for r, c in [(4096, 256), (256, 4096), (64, 32768), (1, SINGLE_COLS)]]
for shape in [s for s in args.get("shapes", "").split(",") if s]:
    rows, cols = (int(v) for v in shape.rstrip("r").split("x"))
    SHAPES.append((shape, rows, cols))

results = []
for shape, rows, cols in SHAPES:
    x = rand(rows, cols)
    for name, fn in [("torch.sort", lambda: torch.sort(x, dim=1, stable=True)), ("torch.argsort", lambda: torch.argsort(x, dim=1, stable=True))]:
        single = single_ms(fn, RUNS)
        batched, n = batched_ms(fn, single, BATCH_MS)
        results.append({"case": f"sort {shape}", "op": name, "batchedMs": round(batched, 5), "singleMs": round(single, 5), "n": n, "Gkeys/s": round(rows * cols / (batched * 1e6), 2)})
        print(json.dumps(results[-1]), file=sys.stderr)
    del x
TOPK = [(64, 32768, 4096), (16, 65536, 10000)]
for spec in [s for s in args.get("topk", "").split(",") if s]:
    shape, k = spec.split(":")
    rows, cols = (int(v) for v in shape.split("x"))
    TOPK.append((rows, cols, int(k)))
for rows, cols, k in TOPK:
    x = rand(rows, cols)
    fn = lambda: torch.topk(x, k, dim=1, largest=True, sorted=True)
    single = single_ms(fn, RUNS)
    batched, n = batched_ms(fn, single, BATCH_MS)
    results.append({"case": f"topk {rows}x{cols} k={k}", "op": "torch.topk", "batchedMs": round(batched, 5), "singleMs": round(single, 5), "n": n, "Gkeys/s": round(rows * cols / (batched * 1e6), 2)})
    print(json.dumps(results[-1]), file=sys.stderr)
    del x

write_report("torch-sort", results, args, RUNS)
