#!/usr/bin/env python3
"""torch.topk on the cases of bench/topk-webgpu.ts, timed with CUDA events; prints one JSON object
(and writes $OUT/torch-topk.json when OUT is set, or --out=DIR).

f32, largest=True, sorted=True, indices returned (torch always returns them); for k >= 256 also
sorted=False (unsortedMs). Per case:
- singleMs: median over many single calls, events recorded around each call (after warm-up);
- batchedMs: median over several batches of N back-to-back calls, events around the batch, / N;
- copySameBytesMs: y.copy_(x) of the same tensor, batched the same way;
and once: a 256 MiB copy for the device bandwidth (read + write bytes / time).
- argmaxMs (k = 1 cases): torch.argmax(x, dim=1), batched the same way: what greedy decoding calls.
torch has no per-row sizes or per-row k: attention runs on the padded 512x8192 matrix with -inf
beyond each row's size (k=256), the ragged case on the padded 128x65536 matrix (k=512), the MoE
routers with per-token k on 4096x128 with k=8 (the max k). Labels match bench/lib/cases.ts.

Run on the device: python3 bench/gpu/torch_topk.py [--single-cols=16777216] [--runs=101]
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
torch.backends.cuda.matmul.allow_tf32 = False
gen = torch.Generator(device=dev).manual_seed(1234)


def rand(rows, cols):
    return torch.rand((rows, cols), generator=gen, device=dev, dtype=torch.float32) * 2 - 1


def dense(rows, cols, k):
    return f"{rows}x{cols} k={k}", rand(rows, cols), k, rows * cols


def masked(rows, stride, sizes):
    x = rand(rows, stride)
    sizes = torch.tensor(sizes, device=dev)
    mask = torch.arange(stride, device=dev)[None, :] >= sizes[:, None]
    x.masked_fill_(mask, float("-inf"))
    return x, int(sizes.sum().item())


def ragged_sizes(rows, stride):
    """The sizes of bench/lib/cases.ts raggedCase (the same LCG)."""
    s, out = 0x2468ACE, []
    for _ in range(rows):
        s = (s * 1664525 + 1013904223) % 2**32
        out.append(1 + s % stride)
    return out


def cases():
    yield dense(4096, 256, 8)
    yield dense(16384, 64, 2)
    yield dense(64, 32768, 2048)
    yield dense(128, 4096, 64)
    yield dense(1, SINGLE_COLS, 100)
    x, valid = masked(512, 8192, [i * 16 + 16 for i in range(512)])
    yield "attention 512x(16..8192) k=256", x, 256, valid
    yield "moe 4096x128 k=1..8/token", rand(4096, 128), 8, 4096 * 128
    if args.get("set") == "cpu":
        return
    yield dense(64, 151936, 50)
    yield dense(256, 262144, 256)
    yield dense(64, 151936, 1)
    yield dense(1, 128256, 1)
    yield dense(64, 65536, 2048)
    yield dense(32, 131072, 2048)
    yield dense(16384, 16, 1)
    yield dense(16384, 8, 2)
    yield dense(16384, 256, 8)
    yield "moe 4096x128 k=1..8/token, device k", rand(4096, 128), 8, 4096 * 128
    x, valid = masked(128, 65536, ragged_sizes(128, 65536))
    yield "ragged 128x(1..65536) k=512, device sizes", x, 512, valid
    # bench/lib/cases.ts extras for reduce's chunk rule and its lists of 8 over long rows
    # (greedy-8row, single-k8, vocab-k8, vocab-k4, rows64k-k8).
    yield dense(8, 151936, 1)
    yield dense(1, SINGLE_COLS, 8)
    yield dense(64, 151936, 8)
    yield dense(64, 151936, 4)
    yield dense(128, 65536, 8)
    # indexer-64k-k1024, indexer-64k-k512 (radix-select's wider workgroups)
    yield dense(64, 65536, 1024)
    yield dense(64, 65536, 512)
    # indexer-decode-1, indexer-decode-8, indexer-decode-4x64k (a few query rows while decoding)
    yield dense(1, 131072, 2048)
    yield dense(8, 131072, 2048)
    yield dense(4, 65536, 2048)


big = torch.empty((256 << 20) // 4, device=dev)
big_out = torch.empty_like(big)
copy_est = single_ms(lambda: big_out.copy_(big), 21)
copy_big, _ = batched_ms(lambda: big_out.copy_(big), copy_est, BATCH_MS)
copy_gbps = 2 * big.numel() * 4 / (copy_big * 1e6)
del big, big_out

results = []
for label, x, k, valid in cases():
    y = torch.empty_like(x)
    c1 = single_ms(lambda: y.copy_(x), 21)
    copy_same, _ = batched_ms(lambda: y.copy_(x), c1, BATCH_MS)
    fn = lambda: torch.topk(x, k, dim=1, largest=True, sorted=True)
    single = single_ms(fn, RUNS)
    batched, n = batched_ms(fn, single, BATCH_MS)
    extra = {}
    if k >= 256:
        # Unsorted output (what a sparse-attention indexer takes), beside segkit's unsorted tunings.
        un = lambda: torch.topk(x, k, dim=1, largest=True, sorted=False)
        un1 = single_ms(un, RUNS)
        extra["unsortedMs"] = round(batched_ms(un, un1, BATCH_MS)[0], 5)
    if k == 1:
        am = lambda: torch.argmax(x, dim=1)
        am1 = single_ms(am, RUNS)
        extra["argmaxMs"] = round(batched_ms(am, am1, BATCH_MS)[0], 5)
        extra["argmaxSingleMs"] = round(am1, 5)
    results.append({
        "case": label,
        "torchMs": round(batched, 5),
        "torchSingleMs": round(single, 5),
        "torchN": n,
        "copySameBytesMs": round(copy_same, 5),
        "readGBps": round(valid * 4 / (batched * 1e6), 1),
        "bwFraction": round(valid * 4 / (batched * 1e6) / copy_gbps, 3),
        **extra,
    })
    print(json.dumps(results[-1]), file=sys.stderr)
    del x, y

write_report("torch-topk", results, args, RUNS, copy256MiB={"ms": round(copy_big, 5), "GBpsReadPlusWrite": round(copy_gbps, 1)})
