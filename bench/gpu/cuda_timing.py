"""How the torch side of the GPU benches times a call, with CUDA events (one definition for
torch_topk.py, torch_sort.py, torch_reduce_scan.py and torch_copy.py)."""
import statistics

import torch


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
