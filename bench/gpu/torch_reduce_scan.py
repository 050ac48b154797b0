#!/usr/bin/env python3
"""torch's segmented reductions and row scans on the shapes of bench/reduce-cpu.ts and bench/scan-cpu.ts,
timed with CUDA events; prints one JSON object (and writes $OUT/torch-reduce-scan.json when OUT is set,
or --out=DIR). The peers the reduce/scan issue names for the H200:

- reductions over rows: torch.sum / amin / amax / argmax(dim=1) on the dense (padded) matrix, and
  torch.segment_reduce(lengths=...) on the packed values (sum, min, max; it has no argmax);
- scans: torch.cumsum(dim=1) on the dense matrix;
- copySameBytesMs: y.copy_(x) of the same input, for the bandwidth the issue's target is relative to.

Shapes: MoE 65536x16; ragged 2048 rows of 1..4096 in rows of 4096 (padding holds the op's identity, so
the dense ops agree with the packed ones); one segment of 16M. f32. Per case: the median over many
single calls, events recorded around each call, after warm-up.

Run on the device: python3 bench/gpu/torch_reduce_scan.py [--runs=101] [--long=16777216]
"""
import json
import sys

import torch
from cuda_timing import cli_args, single_ms, write_report

args = cli_args()
RUNS = int(args.get("runs", 101))
LONG = int(args.get("long", 16777216))
dev = torch.device("cuda")
gen = torch.Generator(device=dev).manual_seed(1234)




def shapes():
    yield "MoE 65536x16", torch.rand((65536, 16), generator=gen, device=dev) * 2 - 1, None
    lengths = torch.randint(1, 4097, (2048,), generator=gen, device=dev)
    yield "ragged 2048 rows of 1..4096", torch.rand((2048, 4096), generator=gen, device=dev) * 2 - 1, lengths
    yield f"one segment of {LONG}", torch.rand((1, LONG), generator=gen, device=dev) * 2 - 1, None


IDENTITY = {"sum": 0.0, "min": float("inf"), "max": float("-inf"), "argMax": float("-inf")}
DENSE = {
    "sum": lambda x: torch.sum(x, dim=1),
    "min": lambda x: torch.amin(x, dim=1),
    "max": lambda x: torch.amax(x, dim=1),
    "argMax": lambda x: torch.argmax(x, dim=1),
}

results = []
for label, x, lengths in shapes():
    rows, cols = x.shape
    items = int(lengths.sum().item()) if lengths is not None else rows * cols
    mask = None if lengths is None else torch.arange(cols, device=dev)[None, :] >= lengths[:, None]
    packed = x.reshape(-1) if mask is None else x[~mask]
    seg_lengths = lengths if lengths is not None else torch.full((rows,), cols, device=dev, dtype=torch.int64)
    y = torch.empty_like(x)
    row = {"shape": label, "items": items, "copySameBytesMs": single_ms(lambda: y.copy_(x), RUNS)}
    for op, fn in DENSE.items():
        dense = x if mask is None else x.masked_fill(mask, IDENTITY[op])
        row[f"{op}DenseMs"] = single_ms(lambda: fn(dense), RUNS)
    for op in ("sum", "min", "max"):
        try:
            row[f"{op}SegmentReduceMs"] = single_ms(lambda: torch.segment_reduce(packed, "sum" if op == "sum" else op, lengths=seg_lengths, unsafe=True), RUNS)
        except RuntimeError as error:  # segment_reduce's CUDA kernels do not take every shape
            row[f"{op}SegmentReduceMs"] = f"error: {error}".splitlines()[0]
    dense0 = x if mask is None else x.masked_fill(mask, 0.0)
    row["cumsumMs"] = single_ms(lambda: torch.cumsum(dense0, dim=1), RUNS)
    row["copyGBps"] = round(2 * x.numel() * 4 / (row["copySameBytesMs"] * 1e6), 1)
    results.append(row)
    print(json.dumps(row), file=sys.stderr)

write_report("torch-reduce-scan", results, args, RUNS)
