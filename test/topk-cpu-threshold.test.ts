import { describe, expect, it } from 'vitest';
import { DeviceBatchedTopK, cpuBackend, env, p } from '../src/index.js';
import { referenceOfRows, rng } from './helpers.js';
import { orderedKey } from '../src/algorithms/batched-top-k/keys.js';
import { radixSample, radixSampleBits, radixSampleCap, radixSamplePosition, radixSampleRankMaxJ, radixSampleRun, radixState, radixStateWords } from '../src/algorithms/batched-top-k/policy.js';
import { planInternals } from '../src/dispatch/plan.js';

/*
 * radix-select's sampled threshold for pass 0 (src/algorithms/batched-top-k/cpu/radix-select.ts):
 * long segments with small k, where the strided sample represents the keys, misleads high (fewer
 * than k keys reach it: the full pass 0 runs) or low (many reach it), or lands on ties (also of -0
 * and +0), with NaNs that the f32 compare against T must keep ('max') or leave ('min'); both
 * directions, f32 and u32 keys, on one thread and with every launch split with a worker.
 */
function keysFor(style: string, rows: number, cols: number, seed: number): Float32Array {
  const n = rows * cols;
  const keys = new Float32Array(n);
  const next = rng(seed);
  // The kernels' sample positions within each segment (policy.ts radixSample, radixSamplePosition).
  const m = Math.floor(Math.min(8192, Math.max(256, cols >>> 5)) / radixSampleRun) * radixSampleRun;
  const step = Math.floor(cols / m);
  const sampled = new Set<number>();
  for (let r = 0; r < rows; r++) for (let i = 0; i < m; i++) sampled.add(r * cols + radixSamplePosition(i, step));
  for (let i = 0; i < n; i++) {
    if (style === 'uniform') keys[i] = next() * 2 - 1;
    else if (style === 'sample-high') keys[i] = sampled.has(i) ? 100 + next() : next(); // T too high: few reach it
    else if (style === 'sample-low') keys[i] = sampled.has(i) ? -100 - next() : next(); // T too low: many reach it
    else if (style === 'ties') keys[i] = Math.floor(next() * 4); // T lands on a tie
    else if (style === 'specials') keys[i] = i % 7 === 0 ? NaN : i % 11 === 0 ? -0 : next() - 0.5;
    // A few NaNs off the sample (so T is a number and the NaNs must still reach it for 'max').
    else if (style === 'sparse-nan') keys[i] = i % 997 === 5 && !sampled.has(i) ? NaN : next() * 2 - 1;
    // Mostly -0 and +0 (T lands on zero: both must reach it, ties by index), a few other numbers and NaNs.
    else {
      const u = next();
      keys[i] = i % 997 === 5 && !sampled.has(i) ? NaN : u < 0.005 ? u + 1 : u < 0.01 ? -u - 1 : i % 2 === 0 ? -0 : 0;
    }
  }
  return keys;
}

const backends = [
  ['1 thread', () => cpuBackend({ workers: 0 })],
  ['worker-split launches', () => cpuBackend({ workers: 1, parallelThreshold: 0 })],
  // The collect's scalar loop (runtimes without WebAssembly SIMD), against the same reference.
  ['1 thread, scalar', () => cpuBackend({ workers: 0, simd: false })],
] as const;

describe('radix-select pass 0 with a sampled threshold', () => {
  for (const [name, make] of backends) {
    it(`agrees with referenceTopK bit for bit (${name})`, async () => {
      const backend = make();
      for (const style of ['uniform', 'sample-high', 'sample-low', 'ties', 'specials', 'sparse-nan', 'signed-zeros']) {
        // Several pass-0 tiles per segment, and one (8x4096, 3x2000: the collect picks the best
        // candidates itself, filter pass 0 returns).
        for (const [rows, cols, k] of [[3, 5000, 40], [1, 70000, 100], [2, 9000, 17], [8, 4096, 64], [3, 2000, 30]] as const) {
          for (const direction of ['max', 'min'] as const) {
            for (const ordering of ['sorted', 'unsorted'] as const) {
              const keys = keysFor(style, rows, cols, rows * 7 + cols + k);
              const keysIn = backend.upload(keys);
              const keysOut = backend.alloc('f32', rows * k);
              const valuesOut = backend.alloc('i32', rows * k);
              const args = { keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.constantOption(direction), numSegments: p.uniform(rows) };
              const environment = env({ backend, tuning: { variant: 'radix-select' }, requirements: { outputOrdering: ordering } });
              await DeviceBatchedTopK.select(args, environment);
              const expected = referenceOfRows(keys, rows, cols, k, direction, k);
              let gotKeys = new Uint32Array((await backend.download(keysOut)).buffer);
              let gotValues = new Uint32Array((await backend.download(valuesOut)).buffer);
              let expectedKeys = expected.keys;
              let expectedValues = expected.values;
              if (ordering === 'unsorted') {
                // The same set per row: compare (index, key) pairs in index order.
                const canon = (ks: Uint32Array, vs: Uint32Array) => {
                  const outK = new Uint32Array(ks.length);
                  const outV = new Uint32Array(vs.length);
                  for (let r = 0; r < rows; r++) {
                    const order = Array.from({ length: k }, (_, j) => r * k + j).sort((x, y) => vs[x]! - vs[y]!);
                    order.forEach((from, j) => {
                      outK[r * k + j] = ks[from]!;
                      outV[r * k + j] = vs[from]!;
                    });
                  }
                  return [outK, outV] as const;
                };
                [gotKeys, gotValues] = canon(gotKeys, gotValues);
                [expectedKeys, expectedValues] = canon(expectedKeys, expectedValues);
              }
              const label = `${style} ${rows}x${cols} k=${k} ${direction} ${ordering}`;
              expect(Array.from(gotKeys), label).toEqual(Array.from(expectedKeys));
              expect(Array.from(gotValues), label).toEqual(Array.from(expectedValues));
              keysIn.destroy();
              keysOut.destroy();
              valuesOut.destroy();
            }
          }
        }
      }
      backend.destroy();
    }, 120_000);
  }
});

describe("radix-init's sampled threshold", () => {
  // The threshold is state the WGSL twin computes alike (twin.test.ts compares it); a wrong one
  // changes no output (a high one falls back, a low one only costs time), so it is checked here.
  it("keeps the leading bits of the j-th largest of the invocations' largest samples for j up to radixSampleRankMaxJ, of the sample's j-th largest past it (one pass, or quickselect; 11- and 8-bit digits; workgroups of 256 and 64; the rank bounded halfway to the pick's tile where the pick is built)", async () => {
    // A GPU's workgroup memory: 11-bit digits with tiles of 4096.
    const backend = cpuBackend({ workers: 0, capabilities: { workgroupStorageBytes: 49152 } });
    // The pick built (its tile bounds the rank: radixSampleMidRank) or not.
    for (const [style, radixBits, workgroupSize, radixPick] of [['uniform', 11, 256, 'never'], ['uniform', 8, 64, 'always'], ['ties', 11, 256, 'always'], ['ties', 11, 64, 'never'], ['specials', 11, 256, 'never'], ['specials', 8, 256, 'always'], ['signed-zeros', 11, 64, 'always']] as const) {
      // Two rounds of 11-bit digits keep 22 bits; three of 8-bit digits 24.
      const dropped = 32 - radixSampleBits(radixBits);
      // j = 12, 13, 9, 9 (ranked), 32 (one pass), 102 (quickselect), and for 2x65536 k=2048 104 or, with
      // the pick's tile of 4096, 96 (quickselect).
      for (const [rows, cols, k] of [[3, 5000, 40], [2, 70000, 100], [2, 9000, 17], [1, 4096, 1], [2, 70000, 500], [1, 40000, 2000], [2, 65536, 2048]] as const) {
        for (const direction of ['max', 'min'] as const) {
          const keys = keysFor(style, rows, cols, rows * 5 + cols + k);
          const bits = new Uint32Array(keys.buffer);
          const keysIn = backend.upload(keys);
          const keysOut = backend.alloc('f32', rows * k);
          const valuesOut = backend.alloc('i32', rows * k);
          const args = { keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.constantOption(direction), numSegments: p.uniform(rows) };
          const plan = DeviceBatchedTopK.plan(args, env({ backend, tuning: { variant: 'radix-select', policy: { radixBits, workgroupSize, radixPick, tileItems: 4096 } } }));
          const temp = backend.alloc('u8', plan.tempStorageBytes);
          const internals = planInternals(plan);
          await internals.runPrefix(temp, plan.launches.findIndex((launch) => launch.kernel === 'radix-init') + 1);
          const words = new Uint32Array((await backend.download(temp)).buffer);
          const state = internals.layout.slot('segmentState').offset >>> 2;
          for (let r = 0; r < rows; r++) {
            const shape = radixSample(cols, k, radixSampleCap(workgroupSize), radixPick === 'always' ? 4096 : 0)!;
            if (cols === 65536) expect(shape.j).toBe(radixPick === 'always' ? 96 : 104);
            const sample = Array.from({ length: shape.m }, (_, i) => orderedKey(bits[r * cols + radixSamplePosition(i, shape.step)]!, 'f32', direction));
            // Invocation t of the init holds samples t, t + workgroupSize, ...; one without any counts as key 0.
            const largest = Array.from({ length: workgroupSize }, (_, t) => Math.max(0, ...sample.filter((_, i) => i % workgroupSize === t)));
            const ranked = shape.j <= Math.min(radixSampleRankMaxJ, workgroupSize);
            const exact = (ranked ? largest : sample).sort((a, b) => b - a)[shape.j - 1]!;
            const label = `${style} ${rows}x${cols} k=${k} ${direction} ${radixBits}-bit, workgroups of ${workgroupSize}, pick ${radixPick}, row ${r} (j = ${shape.j}${ranked ? ', ranked' : ''})`;
            const threshold = ((exact >>> dropped) * 2 ** dropped) >>> 0;
            expect(words[state + r * radixStateWords + radixState.mode], label).toBe(threshold === 0 ? 0 : 1);
            expect(words[state + r * radixStateWords + radixState.threshold], label).toBe(threshold);
          }
          temp.destroy();
          plan.destroy();
          keysIn.destroy();
          keysOut.destroy();
          valuesOut.destroy();
        }
      }
    }
    backend.destroy();
  });
});
