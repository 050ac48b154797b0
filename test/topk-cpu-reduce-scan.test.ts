import { describe, expect, it } from 'vitest';
import { DeviceBatchedTopK, cpuBackend, env, p } from '../src/index.js';
import { referenceOfRows, rng } from './helpers.js';

/*
 * The 'reduce' scan of f32 keys on the CPU (src/algorithms/batched-top-k/cpu/reduce.ts): ranges of
 * 128 keys or more are scanned 32 keys at a time against a float mask of the list's last entry, and
 * ranges of at most 128 keys per result start from a floor sampled from every 16th key (the second
 * best), falling back to the whole scan when fewer than k keys reach it. Inputs that mislead the
 * floor (the sampled keys the best: 2 keys reach it), sorted and reversed rows (every key enters, or
 * none after the first), ties (also of -0 and +0), NaNs on and off the sample (a NaN floor), and rows
 * shorter than the mask's words; both directions, on one thread and with the launch split with a
 * worker.
 */
function keysFor(style: string, rows: number, cols: number, seed: number): Float32Array {
  const n = rows * cols;
  const keys = new Float32Array(n);
  const next = rng(seed);
  for (let i = 0; i < n; i++) {
    const j = i % cols; // position in the row: the floor samples j % 16 === 0
    if (style === 'uniform') keys[i] = next() * 2 - 1;
    else if (style === 'sample-high') keys[i] = j % 16 === 0 ? 100 + next() : next(); // floor too high: fallback
    else if (style === 'sample-low') keys[i] = j % 16 === 0 ? -100 - next() : next(); // floor too low: every key reaches it
    else if (style === 'ascending') keys[i] = j;
    else if (style === 'descending') keys[i] = -j;
    else if (style === 'ties') keys[i] = Math.floor(next() * 3);
    else if (style === 'all-equal') keys[i] = 1.5;
    else if (style === 'specials') keys[i] = i % 7 === 0 ? NaN : i % 11 === 0 ? -0 : i % 13 === 0 ? Infinity : next() - 0.5;
    else if (style === 'nan-samples') keys[i] = j % 32 === 0 ? NaN : next(); // half the samples NaN: a NaN floor for 'max'
    else if (style === 'sparse-nan') keys[i] = j % 97 === 5 ? NaN : next() * 2 - 1; // NaNs off the sample
    // Mostly -0 and +0 (the floor and the list's last entry land on zero: both equal, ties by index).
    else {
      const u = next();
      keys[i] = j % 97 === 5 ? NaN : u < 0.01 ? u + 1 : u < 0.02 ? -u - 1 : i % 2 === 0 ? -0 : 0;
    }
  }
  return keys;
}

const backends = [
  ['1 thread', () => cpuBackend({ workers: 0 })],
  ['worker-split launches', () => cpuBackend({ workers: 1, parallelThreshold: 0 })],
] as const;

const styles = ['uniform', 'sample-high', 'sample-low', 'ascending', 'descending', 'ties', 'all-equal', 'specials', 'nan-samples', 'sparse-nan', 'signed-zeros'];

describe("reduce's word-mask scan and sampled floor (f32 keys)", () => {
  for (const [name, make] of backends) {
    it(`agrees with referenceTopK bit for bit (${name})`, async () => {
      const backend = make();
      // [rows, cols, kMax]: floored (cols <= 128 k), masked only (cols > 128 k), shorter than the mask's words, a partial last word.
      for (const [rows, cols, kMax] of [[40, 256, 8], [33, 144, 3], [17, 1000, 5], [25, 100, 6], [19, 173, 8]] as const) {
        // Per-segment k from 1 to kMax (k = 1 and 2 take the locals' path, the others the list).
        const ks = Array.from({ length: rows }, (_, i) => 1 + (i % kMax));
        for (const style of styles) {
          for (const direction of ['max', 'min'] as const) {
            const keys = keysFor(style, rows, cols, rows * 7 + cols + kMax);
            const keysIn = backend.upload(keys);
            const keysOut = backend.alloc('f32', rows * kMax);
            const valuesOut = backend.alloc('i32', rows * kMax);
            const args = {
              keysIn,
              keysOut,
              valuesOut,
              segmentSizes: p.uniform(cols),
              k: p.perSegment(new Int32Array(ks), { min: 1, max: kMax }),
              selectDirection: p.constantOption(direction),
              numSegments: p.uniform(rows),
            };
            const environment = env({ backend, tuning: { variant: 'reduce' } });
            const plan = DeviceBatchedTopK.plan(args, environment);
            expect(plan.variant).toBe('reduce');
            plan.destroy();
            await DeviceBatchedTopK.select(args, environment);
            const expected = referenceOfRows(keys, rows, cols, ks, direction, kMax);
            const label = `${style} ${rows}x${cols} kMax=${kMax} ${direction}`;
            expect(Array.from(new Uint32Array((await backend.download(keysOut)).buffer)), label).toEqual(Array.from(expected.keys));
            expect(Array.from(new Uint32Array((await backend.download(valuesOut)).buffer)), label).toEqual(Array.from(expected.values));
            keysIn.destroy();
            keysOut.destroy();
            valuesOut.destroy();
          }
        }
      }
      backend.destroy();
    }, 120_000);
  }
});
