"""What the torch side of the GPU benches shares (torch_topk.py, torch_sort.py, torch_reduce_scan.py
and torch_copy.py): their command-line options, how a call is timed with CUDA events, and the report
they print and write."""
import json
import os
import statistics
import sys

import torch


def cli_args():
    """--name=value options (a bare --name is "1")."""
    return dict(a.lstrip("-").split("=", 1) if "=" in a else (a.lstrip("-"), "1") for a in sys.argv[1:])


def write_report(name, results, args, runs, **meta):
    """Prints {"meta", "results"} as JSON and writes it to DIR/<name>.json for --out=DIR or $OUT."""
    head = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0), "runs": runs, **meta}
    doc = json.dumps({"meta": head, "results": results}, indent=1)
    print(doc)
    out = args.get("out", os.environ.get("OUT"))
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, f"{name}.json"), "w") as f:
            f.write(doc)


def single_ms(fn, runs, warmup=10):
    """Median time of single calls: events around each call, waited for before the next."""
    for _ in range(warmup):
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


def batched_ms(fn, est_ms, batch_ms):
    """Median over 7 batches of N back-to-back calls, / N (N from a single call's estimate to fill batch_ms); returns (ms, N)."""
    n = max(5, min(1000, int(batch_ms / max(est_ms, 0.002))))
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
