#!/usr/bin/env python3
"""Summarizes the SM clock samples that bench/gpu/run-all.sh records (clocks.csv, nvidia-smi every 200 ms).

Prints how long the SM clock spent in each band while the suites ran, and the stretches below 1500 MHz
that lasted 1 s or more: a kernel timed then reads slow (the H200 boosts to 1980 MHz; between bursts of
Dawn work the driver drops it to 345 MHz within about a second).

    python3 bench/gpu/clocks.py OUT/clocks.csv
"""
import sys


def main(path: str) -> None:
    samples = []
    with open(path) as f:
        for line in f:
            parts = [p.strip() for p in line.split(',')]
            if len(parts) < 4 or not parts[2].endswith('MHz'):
                continue
            samples.append((parts[0], int(parts[2].split()[0])))
    if not samples:
        print('clocks: no samples')
        return
    bands = [(0, 600), (600, 1500), (1500, 1900), (1900, 10_000)]
    counts = {b: sum(1 for _, mhz in samples if b[0] <= mhz < b[1]) for b in bands}
    print(f'clocks: {len(samples)} samples of the SM clock (200 ms apart): ' + ', '.join(f'{lo}-{hi if hi < 10_000 else "max"} MHz {n}' for (lo, hi), n in counts.items()))
    run_start, run_len = None, 0
    for stamp, mhz in samples + [('', 10_000)]:
        if mhz < 1500:
            if run_start is None:
                run_start, run_len = stamp, 0
            run_len += 1
        else:
            if run_start is not None and run_len >= 5:
                print(f'clocks: below 1500 MHz for {run_len * 0.2:.1f} s from {run_start}')
            run_start = None


if __name__ == '__main__':
    main(sys.argv[1])
