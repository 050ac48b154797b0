import { describe, expect, it } from 'vitest';
import { DeviceBatchedTopK, cpuBackend, env, p } from '../src/index.js';
import { deviceMemory, slabThread, wasmScratchBytes } from '../src/backends/cpu/memory.js';
import { simdAvailable, simdCollectReaching, simdCollectStep } from '../src/algorithms/batched-top-k/cpu/simd.js';
import { radixState, radixStateWords } from '../src/algorithms/batched-top-k/policy.js';
import { planInternals } from '../src/dispatch/plan.js';
import { referenceOfRows, rng } from './helpers.js';

/*
 * Radix-select's pass-0 collect on the CPU: the WebAssembly SIMD loop (src/algorithms/batched-top-k/
 * cpu/simd.ts) against the scalar predicate, position for position, over NaN (of both signs, with
 * payloads), -0 and +0, infinities, subnormals and keys equal to the threshold, with the keys copied
 * into the module's memory and read in place in a heap slab (a worker's backend); and, where one pass-0
 * tile covers a segment, the collect's own pick of the best candidates (the state it leaves stays
 * the WGSL twin's). The scalar twin of the whole path runs in topk-cpu-threshold.test.ts
 * (`simd: false`).
 */

const specials = [NaN, -NaN, -0, 0, Infinity, -Infinity, 1e-45, -1e-45, 1.1754942e-38, 3.4028235e38, -3.4028235e38, 1, -1, 0.5];

/** Keys with specials and many repeats of a few values (so thresholds land on ties). */
function keysFor(n: number, seed: number): Float32Array {
  const next = rng(seed);
  const keys = new Float32Array(n);
  const bits = new Uint32Array(keys.buffer);
  for (let i = 0; i < n; i++) {
    const r = next();
    if (r < 0.15) keys[i] = specials[Math.floor(next() * specials.length)]!;
    else if (r < 0.2) bits[i] = 0x7f800001 + Math.floor(next() * 0x7fffff) + (next() < 0.5 ? 0x80000000 : 0); // NaN payloads, both signs
    else if (r < 0.5) keys[i] = Math.round(next() * 8) - 4;
    else keys[i] = next() * 2 - 1;
  }
  return keys;
}

describe('radix-select collect: SIMD loop', () => {
  it('runs here (Node has WebAssembly SIMD)', () => {
    expect(simdAvailable()).toBe(true);
  });

  for (const where of ['copied in', 'in place in a heap slab'] as const) {
    it(`finds the positions the scalar predicate finds, in index order, for both directions (keys ${where})`, () => {
      const backend = cpuBackend({ workers: where === 'copied in' ? 0 : 1 });
      const threshold = new Float32Array(1);
      // Past one call's keys (4096), and every key reaching (-Infinity, 'max'): calls that stop where the scratch region's positions run out.
      for (const n of [simdCollectStep, 3 * simdCollectStep, 4096, 4096 + simdCollectStep, 9000 - (9000 % simdCollectStep)]) {
        const keys = keysFor(n + 40, n);
        const array = backend.upload(keys);
        const memory = deviceMemory(array);
        expect(memory.slab === undefined, where).toBe(where === 'copied in');
        // What follows this thread's scratch region in the slab (another thread's region, or the slab's end) stays as it was.
        const after = memory.slab === undefined ? undefined : new Int32Array(memory.slab.memory.buffer).subarray((slabThread(memory.slab)!.scratch + wasmScratchBytes) >> 2).subarray(0, 256).fill(-9);
        for (const t of [-0, 0, Infinity, -Infinity, 1, -1, 0.5, keys[7]!, 1e-45, -3.4028235e38]) {
          if (t !== t) continue; // the caller compares against a NaN's ordered key instead
          threshold[0] = t;
          for (const min of [false, true]) {
            // A segment starting 8 keys before the range: positions are segment-local.
            const from = 20;
            const start = 12;
            const dst = new Int32Array(n + 8).fill(-7);
            const count = simdCollectReaching(memory.i32, memory.slab, from, n, start, threshold[0]!, min, dst, 3);
            const expected: number[] = [];
            for (let q = from; q < from + n; q++) if (min ? keys[q]! <= threshold[0]! : !(keys[q]! < threshold[0]!)) expected.push(q - start);
            const label = `n ${n}, t ${t}, ${min ? 'min' : 'max'}`;
            expect(count, label).toBe(expected.length);
            expect(Array.from(dst.subarray(3, 3 + count)), label).toEqual(expected);
            expect(dst[0], `${label}: nothing written before the output`).toBe(-7);
            if (after !== undefined) expect(after.every((w) => w === -9), `${label}: nothing written past the scratch region`).toBe(true);
          }
        }
        array.destroy();
      }
      backend.destroy();
    });
  }
});

describe('radix-select with one pass-0 tile per segment', () => {
  for (const simd of [true, false]) {
    it(`the collect picks the best candidates; filter pass 0 only counts them (${simd ? 'SIMD' : 'scalar'})`, async () => {
      const backend = cpuBackend({ workers: 0, simd });
      const [rows, cols, k] = [9, 4096, 64];
      const next = rng(5);
      const keys = new Float32Array(rows * cols).map(() => next() * 2 - 1);
      const keysIn = backend.upload(keys);
      const keysOut = backend.alloc('f32', rows * k);
      const valuesOut = backend.alloc('i32', rows * k);
      const args = { keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.constantOption('max'), numSegments: p.uniform(rows) };
      const plan = DeviceBatchedTopK.plan(args, env({ backend }));
      expect(plan.variant).toBe('radix-select');
      const internals = planInternals(plan);
      const temp = backend.alloc('u8', plan.tempStorageBytes);
      const launchesThrough = (kernel: string) => plan.launches.findIndex((launch) => launch.kernel === kernel) + 1;
      const state = internals.layout.slot('segmentState').offset >>> 2;
      const selected = internals.layout.slot('selected').offset >>> 2;
      const expected = referenceOfRows(keys, rows, cols, k, 'max', k);
      // After pass 0: the selection in rank order in `selected`, but not yet counted (as on the GPU,
      // whose filter pass 0 picks it).
      await internals.runPrefix(temp, launchesThrough('radix-histogram'));
      let words = new Int32Array((await backend.download(temp)).buffer);
      for (let r = 0; r < rows; r++) {
        expect(words[state + r * radixStateWords + radixState.mode], `row ${r}: sampled`).toBe(1);
        expect(words[state + r * radixStateWords + radixState.selectedByPass], `row ${r}`).toBe(0);
        expect(Array.from(words.subarray(selected + r * k, selected + (r + 1) * k)), `row ${r}`).toEqual(Array.from(expected.values.subarray(r * k, (r + 1) * k), (v) => v | 0));
      }
      await internals.runPrefix(temp, launchesThrough('radix-filter'));
      words = new Int32Array((await backend.download(temp)).buffer);
      for (let r = 0; r < rows; r++) expect(words[state + r * radixStateWords + radixState.selectedByPass], `row ${r}`).toBe(k);
      await plan.run(temp);
      expect(Array.from(new Uint32Array((await backend.download(keysOut)).buffer))).toEqual(Array.from(expected.keys));
      expect(Array.from(new Uint32Array((await backend.download(valuesOut)).buffer))).toEqual(Array.from(expected.values));
      temp.destroy();
      plan.destroy();
      backend.destroy();
    });
  }

  it("finalize writes the collect's pick from the key bits it kept (NaN payloads and -0 as they were), in rank or index order", async () => {
    const backend = cpuBackend({ workers: 0 });
    const [rows, cols, k] = [9, 4096, 64];
    const next = rng(7);
    const keys = new Float32Array(rows * cols);
    const bits = new Uint32Array(keys.buffer);
    for (let i = 0; i < keys.length; i++) {
      const r = next();
      // NaN payloads of both signs, -0 and +0, ties among the largest keys.
      if (r < 0.002) bits[i] = (next() < 0.5 ? 0xffc00000 : 0x7fc00000) + Math.floor(next() * 1000);
      else keys[i] = r < 0.01 ? (i % 2 === 0 ? -0 : 0) : r < 0.03 ? 0.99 : next() * 2 - 1;
    }
    const keysIn = backend.upload(keys);
    const keysOut = backend.alloc('f32', rows * k);
    const valuesOut = backend.alloc('i32', rows * k);
    for (const direction of ['max', 'min'] as const) {
      const expected = referenceOfRows(keys, rows, cols, k, direction, k);
      for (const [ordering, radixCandidateSelect] of [['sorted', true], ['unsorted', true], ['unsorted', false]] as const) {
        const environment = env({ backend, requirements: { outputOrdering: ordering }, tuning: { variant: 'radix-select', policy: { radixCandidateSelect } } });
        await DeviceBatchedTopK.select({ keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.constantOption(direction), numSegments: p.uniform(rows) }, environment);
        const gotKeys = new Uint32Array((await backend.download(keysOut)).buffer);
        const gotValues = new Uint32Array((await backend.download(valuesOut)).buffer);
        for (let r = 0; r < rows; r++) {
          const label = `${direction} ${ordering} radixCandidateSelect ${radixCandidateSelect} row ${r}`;
          const pairs = (ks: Uint32Array, vs: Uint32Array) => {
            const list = Array.from({ length: k }, (_, j) => [vs[r * k + j]!, ks[r * k + j]!] as const);
            return ordering === 'sorted' ? list : list.sort((a, b) => a[0] - b[0]);
          };
          expect(pairs(gotKeys, gotValues), label).toEqual(pairs(expected.keys, expected.values));
          if (ordering === 'unsorted') expect(Array.from(gotValues.subarray(r * k, (r + 1) * k)), `${label}: index order`).toEqual(Array.from(gotValues.subarray(r * k, (r + 1) * k)).sort((a, b) => a - b));
        }
      }
    }
    keysIn.destroy();
    keysOut.destroy();
    valuesOut.destroy();
    backend.destroy();
  });
});
