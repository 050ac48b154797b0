/**
 * The top-k conformance suite, written once and run on every backend (as tfjs's shared op suite):
 * random and adversarial cases compared bit for bit with `referenceTopK`, every applicable variant
 * forced through tuning, every parameter kind, both layouts, and bad input leaving outputs untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, type DeviceArray, type Env, type Requirements, type TopKPlan, type TopKPolicy, type TopKVariant, DeviceBatchedCopy, DeviceBatchedTopK, GuaranteeViolationError, SegkitRangeError, SegkitUsageError, cpuBackend, env, p, referenceTopK, topKPolicyFor, topKVariants } from '../../src/index.js';
import { orderedKey } from '../../src/algorithms/batched-top-k/keys.js';
import { radixSample, radixSampleCap, radixSamplePosition, radixSampleWideOf, radixState, radixStateWords, rowRadixMinParallelism } from '../../src/algorithms/batched-top-k/policy.js';
import { selectionMergeLayout } from '../../src/algorithms/batched-top-k/problem.js';
import { defaultRadixScanLaunchMinTiles } from '../../src/algorithms/segmented-sort/problem.js';
import {
  type Allowed,
  type NumericKind,
  type OptionKind,
  type TopKCase,
  bits,
  bitsOf,
  buildCase,
  runCase,
  specialF32Bits,
  starts,
  topKViolations,
  untouchedBits,
} from './topk-cases.js';
import { referenceOfRows, rng } from '../helpers.js';
import { makeCase } from './topk-cases.js';
import { defineTopKPlanLifecycle } from './topk-plan.suite.js';

/** Item `i`'s ordered key in segment 0 of case `c`. */
const orderedKeyOf = (c: TopKCase, i: number) => orderedKey(c.keys[starts(c)[0]! + i]!, c.keyType, c.directions[0]!);

const randomSizes = (n: number, max: number, seed: number, min = 0) => {
  const random = rng(seed);
  return Array.from({ length: n }, () => min + Math.floor(random() * (max - min + 1)));
};

/** The sorted reference outputs with each segment's selection put in index order (values: segment-local i32 indices). */
function inIndexOrder(c: Pick<TopKCase, 'sizes' | 'k'>, expected: { keys: Uint32Array; values: Uint32Array }, kMax: number): { keys: Uint32Array; values: Uint32Array } {
  const out = { keys: expected.keys.slice(), values: expected.values.slice() };
  c.sizes.forEach((size, s) => {
    const take = Math.min(c.k[s]!, kMax, size);
    const slots = Array.from({ length: take }, (_, j) => s * kMax + j).sort((a, b) => (expected.values[a]! | 0) - (expected.values[b]! | 0));
    slots.forEach((from, j) => {
      out.keys[s * kMax + j] = expected.keys[from]!;
      out.values[s * kMax + j] = expected.values[from]!;
    });
  });
  return out;
}

/** Defines the suite for one backend. `makeBackend` is called once; `destroy()` runs after. */
/** How a backend runs the suite. */
export interface ConformanceOptions {
  /**
   * Each new pipeline costs seconds (lavapipe compiles WGSL through LLVM): the parameter-kind matrix
   * runs 3 of its 10 direction-kind and layout pairs per size-kind and k-kind pair, in rotation, so
   * each size kind still meets every pair (with 5 k kinds, 15 slots cover the 10 pairs).
   */
  readonly compilesSlowly?: boolean;
}

export function defineTopKConformance(backendName: string, makeBackend: () => Promise<Backend>, options: ConformanceOptions = {}): void {
  describe(`DeviceBatchedTopK conformance on ${backendName}`, () => {
    let backend: Backend;
    beforeAll(async () => {
      backend = await makeBackend();
    });
    afterAll(() => backend?.destroy());

    defineTopKPlanLifecycle(() => backend, makeBackend);

    async function expectReference(c: TopKCase, variant?: TopKVariant): Promise<TopKVariant> {
      return (await expectReferencePlan(c, variant)).variant;
    }

    /** Runs a case (optionally under a forced variant and policy values) against the reference; returns the plan. */
    async function expectReferencePlan(c: TopKCase, variant?: TopKVariant, policy?: Partial<TopKPolicy>): Promise<TopKPlan> {
      const built = buildCase(backend, c);
      try {
        const { plan, keys, values } = await runCase(backend, built, { variant, policy });
        const n = c.sizes.length * built.kMax;
        const label = `${c.name}: ${plan.variant}${policy ? ` ${JSON.stringify(policy)}` : ''}`;
        expect(keys.subarray(0, n), `${label}: keys`).toEqual(built.expected.keys.subarray(0, n));
        if (values !== undefined) expect(values.subarray(0, n), `${label}: values`).toEqual(built.expected.values.subarray(0, n));
        return plan;
      } finally {
        for (const a of built.owned) a.destroy();
      }
    }

    /** Runs a case with the natural choice and with every variant forced that applies. */
    async function expectAllVariants(c: TopKCase, mustApply: TopKVariant[] = []): Promise<void> {
      const natural = await expectReference(c);
      const ran: TopKVariant[] = [natural];
      for (const variant of ['single-tile', 'reduce', 'row-radix', 'radix-select'] as const) {
        if (variant === natural) continue;
        try {
          await expectReference(c, variant);
          ran.push(variant);
        } catch (error) {
          if (!(error instanceof SegkitUsageError) || !/cannot run for these parameters/.test(error.message)) throw error;
        }
      }
      for (const v of mustApply) expect(ran, `${c.name}: variants run`).toContain(v);
    }

    describe('random and adversarial keys, every variant', () => {
      for (const keyType of ['f32', 'i32', 'u32'] as const) {
        for (const flavour of ['random', 'ties', 'special'] as const) {
          it(`${keyType} ${flavour}: small k, mixed sizes`, async () => {
            await expectAllVariants(makeCase({ name: 'small-k', keyType, flavour, sizes: randomSizes(40, 300, 3), k: 5, seed: 11 }), ['reduce', 'radix-select']);
          });
          it(`${keyType} ${flavour}: larger k, both directions per segment`, async () => {
            const sizes = randomSizes(12, 900, 5);
            const dirs = sizes.map((_, i) => (i % 3 === 0 ? 'min' : 'max') as 'max' | 'min');
            await expectAllVariants(makeCase({ name: 'larger-k', keyType, flavour, sizes, k: 40, directions: dirs, seed: 13 }), ['single-tile', 'radix-select']);
          });
        }
      }
    });

    describe('sizes at tile boundaries', () => {
      it('around tileItems, reduceChunkItems and radixTileItems', async () => {
        const policy = topKPolicyFor(backend.capabilities);
        const edges = [policy.tileItems, policy.reduceChunkItems, policy.radixTileItems];
        const sizes = [...new Set(edges.flatMap((e) => [e - 1, e, e + 1, 2 * e + 1]))].sort((a, b) => a - b);
        await expectAllVariants(makeCase({ name: 'tile-edges-k3', flavour: 'ties', sizes, k: 3, seed: 17 }));
        await expectAllVariants(makeCase({ name: 'tile-edges-k33', flavour: 'special', sizes, k: 33, directions: 'min', seed: 19 }));
      });
      it('a constant segment size equal to the tile', async () => {
        const { tileItems } = topKPolicyFor(backend.capabilities);
        await expectAllVariants(makeCase({ name: 'const-tile', sizes: [tileItems, tileItems, tileItems], sizeKind: 'constant', k: 16, seed: 23 }), ['single-tile']);
      });
      it('one long segment split across workgroups', async () => {
        await expectAllVariants(makeCase({ name: 'long', sizes: [50_000], k: 7, flavour: 'ties', seed: 29 }), ['reduce', 'radix-select']);
        await expectReference(makeCase({ name: 'long-k100', sizes: [60_000], k: 100, seed: 31 }));
      });
    });

    describe('policy values', () => {
      it('short segments get one invocation each (routers with 8 or 16 experts)', async () => {
        const { reduceSmallSegmentItems } = topKPolicyFor(backend.capabilities);
        // More segments than one workgroup holds, sizes 0..reduceSmallSegmentItems, both directions.
        const sizes = randomSizes(300, reduceSmallSegmentItems, 53);
        const directions = sizes.map((_, i) => (i % 5 === 0 ? 'min' : 'max') as 'max' | 'min');
        for (const k of [1, 2, 5, 8]) {
          for (const flavour of ['random', 'ties', 'special'] as const) {
            const plan = await expectReferencePlan(makeCase({ name: `router-k${k}-${flavour}`, flavour, sizes, k, directions, seed: 59 + k }));
            expect(plan.launches.map((l) => l.name).join(' '), `k=${k}`).toMatch(/reduce\[[^\]]*per-invocation\]/);
          }
        }
        // Per-segment k, and longer segments forced onto one invocation each.
        const ks = sizes.map((_, i) => 1 + (i % 8));
        await expectReferencePlan(makeCase({ name: 'router-k-per-segment', sizes, k: ks, kBound: 8, seed: 61 }));
        const plan = await expectReferencePlan(makeCase({ name: 'long-per-invocation', flavour: 'ties', sizes: randomSizes(70, 700, 67), k: 7, seed: 71 }), undefined, { reduceSmallSegmentItems: 700 });
        expect(plan.launches.some((l) => l.name.includes('per-invocation'))).toBe(true);
      });

      it('routers of 16 and 8 experts: whole quads per invocation, workgroups narrowed to spread the segments (ties, NaN, -0)', async () => {
        // reduceWorkgroups 1024: 3000 segments narrow the workgroups to one subgroup; constant sizes
        // keep every segment's start on a quad; 13 experts put starts at every offset modulo 4.
        for (const [experts, k] of [[16, 1], [8, 2], [13, 2]] as const) {
          for (const flavour of ['ties', 'special'] as const) {
            const sizes = Array.from({ length: 3000 }, () => experts);
            const directions = sizes.map((_, i) => (i % 3 === 0 ? 'min' : 'max') as 'max' | 'min');
            const plan = await expectReferencePlan(makeCase({ name: `router-${experts}-k${k}-${flavour}`, flavour, sizes, sizeKind: 'constant', k, directions, seed: 89 + experts }), 'reduce', { reduceWorkgroups: 1024 });
            expect(plan.launches.some((l) => l.name.includes('per-invocation'))).toBe(true);
          }
        }
      });

      it('long segments split into chunks of any size, read four keys at a time from any start', async () => {
        // Packed segments start at every offset modulo 4; chunks of 1000 items split quads.
        const sizes = [1, 4097, 3, 12_345, 2, 9000, 5];
        for (const reduceChunkItems of [1000, 4096]) {
          await expectReferencePlan(makeCase({ name: `chunks-${reduceChunkItems}`, flavour: 'ties', sizes, k: 6, seed: 73 }), 'reduce', { reduceChunkItems });
          await expectReferencePlan(makeCase({ name: `chunks-k1-${reduceChunkItems}`, flavour: 'special', sizes, k: 1, directions: 'min', seed: 79 }), 'reduce', { reduceChunkItems });
        }
      });
    });

    describe('reduce over long segments', () => {
      it('chunks lengthen until the grid is about reduceChunkWorkgroups workgroups, merged in a launch of their own or by the last chunk workgroup (k = 1 greedy decoding, ties, NaN, -0, k > size)', async () => {
        // 5 segments and 15 workgroups: 3 chunks for the longest, each several loop trips long, from
        // starts at every offset modulo 4; a segment shorter than k.
        const sizes = [70_001, 3, 40_962, 0, 16_385];
        for (const reduceLastChunkMerges of ['always', 'never'] as const) {
          for (const k of [1, 2, 8]) {
            for (const flavour of ['ties', 'special'] as const) {
              const directions = sizes.map((_, i) => (i % 2 === (k === 2 ? 0 : 1) ? 'min' : 'max') as 'max' | 'min');
              const plan = await expectReferencePlan(makeCase({ name: `wave-k${k}-${flavour}-${reduceLastChunkMerges}`, flavour, sizes, k, directions, seed: 83 + k }), 'reduce', { reduceChunkWorkgroups: 15, reduceLastChunkMerges });
              expect(plan.launches.map((l) => l.purpose).join(' | ')).toMatch(/3 workgroups per segment \(chunks of \d+ keys/);
              expect(plan.launches.some((l) => l.name.startsWith(reduceLastChunkMerges === 'always' ? 'topk/reduce-chunk-merge[' : 'topk/reduce-merge['))).toBe(true);
            }
          }
        }
      });
    });

    describe('radix-select: the sampled threshold of pass 0', () => {
      /** Keys whose sampled positions (policy.ts radixSample) mislead the threshold high or low, or land on ties. */
      function keysFor(style: string, rows: number, cols: number, seed: number, sample?: { m: number; step: number }): Float32Array {
        const keys = new Float32Array(rows * cols);
        const random = rng(seed);
        const run = 8; // policy.ts radixSampleRun: runs of 8 neighbours, a run every 8 step keys
        const m = sample?.m ?? Math.floor(Math.min(8192, Math.max(256, cols >>> 5)) / run) * run;
        const step = sample?.step ?? Math.floor(cols / m);
        const sampled = (i: number) => {
          const at = i % cols;
          const runIndex = Math.floor(at / (run * step));
          const within = at - runIndex * run * step;
          return within < run && runIndex * run + within < m;
        };
        for (let i = 0; i < keys.length; i++) {
          if (style === 'uniform') keys[i] = random() * 2 - 1;
          else if (style === 'sample-high') keys[i] = sampled(i) ? 100 + random() : random(); // few reach T: pass 0's last workgroup histograms the rest
          else if (style === 'sample-low') keys[i] = sampled(i) ? -100 - random() : random(); // most reach T
          else if (style === 'ties') keys[i] = Math.floor(random() * 4); // T lands on a tie
          else keys[i] = i % 7 === 0 ? NaN : i % 11 === 0 ? -0 : random() - 0.5; // specials
        }
        return keys;
      }
      /** The first segment's state words after a run: [mode, T, keys that reached T, pass-0 workgroups that arrived]. */
      async function stateAfter(plan: TopKPlan, temp: DeviceArray<'u8'>): Promise<number[]> {
        const at = /segmentState: \d+ bytes at offset (\d+)/.exec(plan.explain());
        const words = new Uint32Array((await backend.download(temp)).buffer);
        const base = Number(at![1]) / 4;
        return [words[base]!, words[base + 1]!, words[base + 2]!, words[base + 3]!];
      }

      for (const [rows, cols, k] of [[1, 24_000, 60], [3, 5000, 17]] as const) {
        it(`${rows}x${cols} k=${k}: uniform, misleading samples, ties and specials, both directions; a misleading sample in pass 0's last workgroup and in a launch of its own`, async () => {
          const runs = [...['uniform', 'sample-high', 'sample-low', 'ties', 'specials'].map((style) => ({ style, folds: true })), { style: 'sample-high', folds: false }];
          for (const { style, folds } of runs) {
            for (const direction of ['max', 'min'] as const) {
              const data = keysFor(style, rows, cols, rows * 7 + cols + k);
              const keysIn = backend.upload(data);
              const keysOut = backend.alloc('f32', rows * k);
              const valuesOut = backend.alloc('i32', rows * k);
              // A uniform direction: both directions share the pipelines (lavapipe compiles each through LLVM).
              const args = { keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.uniformOption(direction, ['max', 'min']), numSegments: p.uniform(rows) };
              // Row-radix is the natural choice here (it samples nothing): force radix-select.
              // radixFoldFallbackMaxItems 1: the 'radix-fallback' launch takes a misleading sample's histogram.
              const plan = DeviceBatchedTopK.plan(args, env({ backend, tuning: { variant: 'radix-select', ...(folds ? {} : { policy: { radixFoldFallbackMaxItems: 1 } }) } }));
              expect(plan.variant).toBe('radix-select');
              const temp = backend.alloc('u8', plan.tempStorageBytes);
              await plan.run(temp);
              const expected = referenceOfRows(data, rows, cols, k, direction, k);
              const label = `${style} ${direction}${folds ? '' : ', fallback launch'}`;
              expect(bits(await backend.download(keysOut)), label).toEqual(expected.keys);
              expect(bits(await backend.download(valuesOut)), label).toEqual(expected.values);
              const [mode, , reached, arrived] = await stateAfter(plan, temp);
              expect(mode, `${label}: a threshold was sampled`).toBe(1);
              // Folded, every pass-0 workgroup of the segment counted its arrival (the last one checks whether T misled).
              const passZero = plan.launches.find((l) => l.name.includes('/histogram['))!;
              expect(arrived, `${label}: pass-0 workgroups arrived`).toBe(folds ? passZero.grid / rows : 0);
              expect(plan.launches.some((l) => l.name.includes('/fallback[')), `${label}: a fallback launch`).toBe(!folds);
              if (style === 'uniform') expect(reached, `${label}: about 1.5 k keys reached it`).toBeGreaterThanOrEqual(k);
              if (style === 'uniform') expect(reached, `${label}: about 1.5 k keys reached it`).toBeLessThan(cols / 4);
              if (style === 'sample-high' && direction === 'max') expect(reached, `${label}: fewer than k reached it (the keys below T histogrammed)`).toBeLessThan(k);
              for (const a of [keysIn, keysOut, valuesOut, temp]) a.destroy();
            }
          }
        }, 180_000);
      }

      it('a segment sampled by several init workgroups (radixInitWorkgroups: one key in 256, the last to arrive ranks their lists): uniform, misleading samples and ties, both directions; a take whose rank keeps one workgroup', async () => {
        // Past 256 x radixSampleCap keys (2097152 with workgroups of 256) a segment samples one key
        // in 256 over several workgroups: 2.2M keys take two.
        const cols = 2_200_000;
        const policy = topKPolicyFor(backend.capabilities);
        const cap = radixSampleCap(policy.workgroupSize);
        const runs = [
          { style: 'uniform', direction: 'max' as const, k: 2500 },
          { style: 'uniform', direction: 'max' as const, k: 50 },
          { style: 'uniform', direction: 'min' as const, k: 50 },
          // About 60 keys reach a threshold the sample's high keys set: fewer than k.
          { style: 'sample-high', direction: 'max' as const, k: 100 },
          { style: 'ties', direction: 'min' as const, k: 50 },
        ];
        for (const { style, direction, k } of runs) {
          const shape = radixSample(cols, k, cap, 0, false, radixSampleWideOf(policy))!;
          const data = keysFor(style, 1, cols, cols + k, shape);
          const keysIn = backend.upload(data);
          const keysOut = backend.alloc('f32', k);
          const valuesOut = backend.alloc('i32', k);
          const args = { keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.uniformOption(direction, ['max', 'min']), numSegments: p.uniform(1) };
          const plan = DeviceBatchedTopK.plan(args, env({ backend, tuning: { variant: 'radix-select' } }));
          const label = `${style} ${direction} k=${k}`;
          // Two workgroups a segment; a take of 2500 (rank 23 at a step of 256) samples in the first alone.
          expect(plan.launches.find((l) => l.name.includes('/init['))?.grid, `${label}: init's workgroups`).toBe(2);
          expect(shape, label).toMatchObject(k <= 100 ? { step: 256, parts: 2 } : { parts: 1 });
          const temp = backend.alloc('u8', plan.tempStorageBytes);
          await plan.run(temp);
          const expected = referenceOfRows(data, 1, cols, k, direction, k);
          expect(bits(await backend.download(keysOut)), label).toEqual(expected.keys);
          expect(bits(await backend.download(valuesOut)), label).toEqual(expected.values);
          const [mode, , reached] = await stateAfter(plan, temp);
          expect(mode, `${label}: a threshold was sampled`).toBe(1);
          if (style === 'uniform') expect(reached, `${label}: about 1.5 k + 8 step keys reached it`).toBeGreaterThanOrEqual(k);
          if (style === 'uniform') expect(reached, `${label}: about 1.5 k + 8 step keys reached it`).toBeLessThan(k <= 100 ? 4096 : cols / 16);
          if (style === 'sample-high' && direction === 'max') expect(reached, `${label}: fewer than k reached it (the keys below T histogrammed)`).toBeLessThan(k);
          plan.destroy();
          for (const a of [keysIn, keysOut, valuesOut, temp]) a.destroy();
        }
      }, 240_000);

      it("finalize's work in its own launch or in the last filter's last workgroup to finish (radixFinalizeInFilter): the same outputs, with and without the pick, sorted and not", async () => {
        const [rows, cols, k] = [3, 5000, 17];
        /** Each row's (index, key bits) pairs in index order: unsorted output's order. */
        const byIndex = (keys: Uint32Array, values: Uint32Array) => {
          const out = { keys: new Uint32Array(keys.length), values: new Uint32Array(values.length) };
          for (let r = 0; r < rows; r++) {
            const order = Array.from({ length: k }, (_, j) => r * k + j).sort((a, b) => values[a]! - values[b]!);
            order.forEach((from, j) => {
              out.keys[r * k + j] = keys[from]!;
              out.values[r * k + j] = values[from]!;
            });
          }
          return out;
        };
        const runs = [
          ['never', 'never', 'sorted'],
          ['always', 'never', 'sorted'],
          ['always', 'always', 'sorted'],
          ['auto', 'auto', 'sorted'],
          ['always', 'never', 'unsorted'],
          ['auto', 'auto', 'unsorted'],
        ] as const;
        for (const style of ['uniform', 'ties', 'specials', 'sample-high']) {
          const data = keysFor(style, rows, cols, 91 + style.length);
          const sorted = referenceOfRows(data, rows, cols, k, 'max', k);
          for (const [radixFinalizeInFilter, radixPick, outputOrdering] of runs) {
            const expected = outputOrdering === 'sorted' ? sorted : byIndex(sorted.keys, sorted.values);
            const keysIn = backend.upload(data);
            const keysOut = backend.alloc('f32', rows * k);
            const valuesOut = backend.alloc('i32', rows * k);
            const args = { keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.constantOption('max'), numSegments: p.uniform(rows) };
            // Several filter workgroups a segment (radixFilterWorkgroups): the last to arrive finalizes.
            const plan = DeviceBatchedTopK.plan(args, env({ backend, requirements: { outputOrdering }, tuning: { variant: 'radix-select', policy: { radixFinalizeInFilter, radixPick, radixFilterWorkgroups: 3 * rows * 4 } } }));
            const label = `${style}, ${outputOrdering}, radixFinalizeInFilter '${radixFinalizeInFilter}', radixPick '${radixPick}'`;
            // 'auto': the pick is built here (rows of 5000 keys, k = 17) and its candidates fit its tile.
            expect(plan.launches.some((l) => l.name.includes('/filter-finalize[')), `${label}: finalize in the last filter`).toBe(radixFinalizeInFilter !== 'never');
            expect(plan.launches.some((l) => l.name.includes('/finalize[')), `${label}: a finalize launch`).toBe(radixFinalizeInFilter === 'never');
            const temp = backend.alloc('u8', plan.tempStorageBytes);
            await plan.run(temp);
            expect(bits(await backend.download(keysOut)), label).toEqual(expected.keys);
            expect(bits(await backend.download(valuesOut)), label).toEqual(expected.values);
            plan.destroy();
            for (const a of [keysIn, keysOut, valuesOut, temp]) a.destroy();
          }
        }
      }, 180_000);

      it('the spread pick (sorted output, radixPickSpread): every filter workgroup of a segment ranks a share of its candidates, after a plan whose pass 0 writes no keys beside them', async () => {
        for (const [rows, cols, k] of [[3, 5000, 17], [1, 24_000, 60]] as const) {
          for (const style of ['uniform', 'ties', 'specials']) {
            for (const direction of ['max', 'min'] as const) {
              const data = keysFor(style, rows, cols, 13 * rows + k + style.length);
              const expected = referenceOfRows(data, rows, cols, k, direction, k);
              const keysIn = backend.upload(data);
              // The pick left out, then spread over up to 64 filter workgroups a segment: the two plans'
              // pass-0 programs differ only in the keys written beside the candidates (their own pipelines).
              const spread = { radixPickSpread: 2, radixFilterWorkgroups: rows * 64 };
              for (const policy of [{ ...spread, radixPick: 'never' as const }, spread]) {
                const keysOut = backend.alloc('f32', rows * k);
                const valuesOut = backend.alloc('i32', rows * k);
                const args = { keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.uniformOption(direction, ['max', 'min']), numSegments: p.uniform(rows) };
                const plan = DeviceBatchedTopK.plan(args, env({ backend, tuning: { variant: 'radix-select', policy } }));
                const label = `${rows}x${cols} k=${k}, ${style}, ${direction}, ${JSON.stringify(policy)}`;
                if (policy === spread) expect(plan.explain(), label).toContain('ranked by all the segment\'s filter workgroups together where they split each candidate\'s count of better ones 2 ways or more');
                const temp = backend.alloc('u8', plan.tempStorageBytes);
                await plan.run(temp);
                expect(bits(await backend.download(keysOut)), label).toEqual(expected.keys);
                expect(bits(await backend.download(valuesOut)), label).toEqual(expected.values);
                plan.destroy();
                for (const a of [keysOut, valuesOut, temp]) a.destroy();
              }
              keysIn.destroy();
            }
          }
        }
      }, 240_000);
    });

    describe("radix-select: filter pass 0's pick among the candidates (a radix select, or a sort)", () => {
      /*
       * Rows built so the sampled threshold is known exactly: every sampled position (policy.ts
       * radixSamplePosition) holds the least hot key (0, or -0), so the threshold is that key and the
       * candidates are exactly the `hot` hot keys (the sampled positions and the first others); the
       * cold keys lie far below (NaN among them for 'min', where it ranks last). The hot keys' values
       * decide the threshold's ties.
       */
      type Hot = 'ties' | 'all-equal' | 'specials';
      const nanBits = [0x7fc00000, 0x7f800001, 0xffc00001];
      function rowKeys(cols: number, hot: number, take: number, style: Hot, direction: 'max' | 'min', random: () => number): Uint32Array {
        const { workgroupSize } = topKPolicyFor(backend.capabilities);
        const sample = radixSample(cols, take, radixSampleCap(workgroupSize))!;
        const row = new Float32Array(cols);
        const bitsOfRow = new Uint32Array(row.buffer);
        const isHot = new Uint8Array(cols);
        for (let i = 0; i < sample.m; i++) isHot[radixSamplePosition(i, sample.step)] = 1;
        let hotCount = sample.m;
        for (let i = 0; i < cols && hotCount < hot; i++) {
          if (isHot[i] === 0) {
            isHot[i] = 2;
            hotCount++;
          }
        }
        const sign = direction === 'max' ? 1 : -1;
        for (let i = 0; i < cols; i++) {
          if (isHot[i] === 0) {
            // Cold: far below the hot keys (for 'min', far above, and NaN, which ranks last there).
            if (direction === 'min' && random() < 0.1) bitsOfRow[i] = nanBits[i % 3]!;
            else row[i] = sign * (-1e6 - random() * 1e6);
          } else if (isHot[i] === 1 || style === 'all-equal') {
            row[i] = random() < 0.5 ? -0 : 0; // the least hot key, -0 and +0 equal
          } else if (style === 'ties') {
            row[i] = sign * Math.floor(random() * 4); // 0, 1, 2, 3: the threshold falls in a tie
          } else {
            const r = random();
            if (direction === 'max' && r < 0.2) bitsOfRow[i] = nanBits[i % 3]!; // NaN ranks first for 'max'
            else if (r < 0.4) row[i] = sign * Infinity;
            else row[i] = r < 0.7 ? (i % 2 === 0 ? -0 : 0) : sign * 1;
          }
        }
        return bitsOfRow;
      }

      /** The reference's sorted rows, each row's selection put in index order. */
      function byIndex(expected: { keys: Uint32Array; values: Uint32Array }, rows: number, kMax: number, takes: number[]): { keys: Uint32Array; values: Uint32Array } {
        const out = { keys: expected.keys.slice(), values: expected.values.slice() };
        for (let r = 0; r < rows; r++) {
          const slots = Array.from({ length: takes[r]! }, (_, j) => r * kMax + j).sort((a, b) => (expected.values[a]! | 0) - (expected.values[b]! | 0));
          slots.forEach((from, j) => {
            out.keys[r * kMax + j] = expected.keys[from]!;
            out.values[r * kMax + j] = expected.values[from]!;
          });
        }
        return out;
      }

      // Output order and the policy values that choose the pick; 8-bit digits unless set (rows under 64K).
      // Where pipelines compile slowly, the sort (the defaults' sorted pick, tested throughout) is left out.
      // rankSortMinItems 2: the workgroup sorts by ranks within buckets (the pick's sort of every
      // candidate, finalize's sort by index), where the defaults sort fewer than 2048 entries
      // through the bitonic network.
      type Config = [Requirements['outputOrdering'], Partial<TopKPolicy>];
      const configs: Config[] = [
        ['unsorted', {}],
        ['unsorted', { radixBits: 11 }],
        ['sorted', { radixCandidateSelectSorted: true }],
        ['sorted', { radixCandidateSelectSorted: true, radixBits: 11 }],
        ['sorted', { rankSortMinItems: 2 }],
        ['unsorted', { radixCandidateSelect: false, rankSortMinItems: 2 }],
        ...(options.compilesSlowly === true ? [] : ([['unsorted', { radixCandidateSelect: false }], ['sorted', {}]] satisfies Config[])),
      ];

      it('ties at the threshold, all-equal candidates, NaN, -0 and infinities; take 1, take = candidates, candidates = the tile; rows past the index buckets', async () => {
        const { tileItems } = topKPolicyFor(backend.capabilities);
        // Rows of 16384 keys (8-bit digits: index buckets of 64 keys) and 40000 (past buckets of 128: finalize orders the selection).
        const shapes: { cols: number; hot: number; take: number }[] = [
          { cols: 16384, hot: 1200, take: 700 },
          { cols: 16384, hot: tileItems, take: tileItems - 3 },
          { cols: 16384, hot: 1000, take: 1000 },
          { cols: 40000, hot: 1500, take: 1 },
          { cols: 40000, hot: tileItems, take: tileItems },
        ];
        // Where pipelines compile slowly (and run slowly: lavapipe), each style in one direction, specials in both.
        const directions = (style: Hot): ('max' | 'min')[] => (options.compilesSlowly !== true || style === 'specials' ? ['max', 'min'] : style === 'ties' ? ['max'] : ['min']);
        for (const style of ['ties', 'all-equal', 'specials'] as const) {
          for (const direction of directions(style)) {
            const random = rng(shapes.length * 31 + style.length * 7 + direction.length);
            const rows = shapes.length;
            const stride = 40000;
            const data = new Uint32Array(rows * stride);
            shapes.forEach((shape, r) => data.set(rowKeys(shape.cols, shape.hot, shape.take, style, direction, random), r * stride));
            const kMax = Math.max(...shapes.map((shape) => shape.take));
            const takes = shapes.map((shape) => shape.take);
            const expected = referenceTopK({
              keyType: 'f32',
              keys: data,
              segmentStarts: shapes.map((_, r) => r * stride),
              segmentSizes: shapes.map((shape) => shape.cols),
              k: takes,
              directions: shapes.map(() => direction),
              kMax,
              withValues: true,
            });
            const inIndexOrder = byIndex(expected, rows, kMax, takes);
            const keysIn = backend.upload(new Float32Array(data.buffer));
            const keysOut = backend.alloc('f32', rows * kMax);
            const valuesOut = backend.alloc('i32', rows * kMax);
            const args = {
              keysIn,
              keysOut,
              valuesOut,
              segmentSizes: p.perSegment(shapes.map((shape) => shape.cols), { min: 1, max: stride }),
              segmentStride: p.constant(stride),
              k: p.perSegment(takes, { min: 1, max: kMax }),
              selectDirection: p.uniformOption(direction, ['max', 'min']),
              numSegments: p.uniform(rows),
            };
            for (const [outputOrdering, policy] of configs) {
              const label = `${style} ${direction} ${outputOrdering} ${JSON.stringify(policy)}`;
              const plan = DeviceBatchedTopK.plan(args, env({ backend, requirements: { outputOrdering }, tuning: { variant: 'radix-select', policy } }));
              const temp = backend.alloc('u8', plan.tempStorageBytes);
              await plan.run(temp);
              const want = outputOrdering === 'sorted' ? expected : inIndexOrder;
              expect(bits(await backend.download(keysOut)), `${label}: keys`).toEqual(want.keys);
              expect(bits(await backend.download(valuesOut)), `${label}: values`).toEqual(want.values);
              // Every row took the pick: a sampled threshold reached by exactly its hot keys.
              const words = new Uint32Array((await backend.download(temp)).buffer);
              const stateAt = Number(/segmentState: \d+ bytes at offset (\d+)/.exec(plan.explain())![1]) / 4;
              shapes.forEach((shape, r) => {
                expect(words[stateAt + r * radixStateWords + radixState.mode], `${label}, row ${r}: sampled`).toBe(1);
                expect(words[stateAt + r * radixStateWords + radixState.collected], `${label}, row ${r}: candidates`).toBe(shape.hot);
              });
              temp.destroy();
            }
            for (const a of [keysIn, keysOut, valuesOut]) a.destroy();
          }
        }
      }, 900_000);
    });

    describe("radix-select: filter pass 0's pick built or not (tuning.policy.radixPick)", () => {
      /*
       * The pick changes how a selection is found, never which: 'always', 'never' and 'auto' give the
       * reference's bits, sorted and unsorted (index order), over ragged rows with device-only sizes
       * (the short rows sample no threshold; the long ones do, and their candidates fit the tile, so
       * the pick runs there where it is built) and over uniform long rows, which all sample. The
       * state words say where the pick ran: digit 0 selected the whole take and kept nothing.
       */
      const stride = 16384;
      const tiesAndNaN = (count: number, seed: number) => {
        const random = rng(seed);
        return Float32Array.from({ length: count }, () => (random() < 0.03 ? NaN : random() < 0.5 ? Math.round(random() * 4000) / 8 : random() * 1000 - 500));
      };
      const picks = ['always', 'never', 'auto'] as const;

      /** Runs every radixPick under both output orders; returns, per value, the rows where the pick ran. */
      async function expectPicks(
        data: Float32Array,
        sizes: readonly number[],
        k: number,
        direction: 'max' | 'min',
        sizesParam: () => { param: Parameters<typeof DeviceBatchedTopK.plan>[0]['segmentSizes']; owned: DeviceArray[] },
      ): Promise<Record<(typeof picks)[number], boolean[]> & { explain: Record<(typeof picks)[number], string> }> {
        const rows = sizes.length;
        const expected = referenceTopK({
          keyType: 'f32',
          keys: new Uint32Array(data.buffer),
          segmentStarts: sizes.map((_, r) => r * stride),
          segmentSizes: [...sizes],
          k: sizes.map(() => k),
          directions: sizes.map(() => direction),
          kMax: k,
          withValues: true,
        });
        const byIndex = inIndexOrder({ sizes: [...sizes], k: sizes.map(() => k) }, expected, k);
        const keysIn = backend.upload(data);
        const keysOut = backend.alloc('f32', rows * k);
        const valuesOut = backend.alloc('i32', rows * k);
        const { param, owned } = sizesParam();
        const { tileItems } = topKPolicyFor(backend.capabilities);
        const ran = { always: [] as boolean[], never: [] as boolean[], auto: [] as boolean[], explain: { always: '', never: '', auto: '' } };
        try {
          for (const radixPick of picks) {
            for (const outputOrdering of ['sorted', 'unsorted'] as const) {
              const args = { keysIn, keysOut, valuesOut, segmentSizes: param, segmentStride: p.constant(stride), k: p.uniform(k), selectDirection: p.uniformOption(direction, ['max', 'min']), numSegments: p.uniform(rows) };
              const plan = DeviceBatchedTopK.plan(args, env({ backend, requirements: { outputOrdering }, tuning: { variant: 'radix-select', policy: { radixPick } } }));
              const temp = backend.alloc('u8', plan.tempStorageBytes);
              try {
                await plan.run(temp);
                const label = `radixPick '${radixPick}', ${outputOrdering}`;
                const want = outputOrdering === 'sorted' ? expected : byIndex;
                expect(bits(await backend.download(keysOut)), `${label}: keys`).toEqual(want.keys);
                expect(bits(await backend.download(valuesOut)), `${label}: values`).toEqual(want.values);
                const words = new Uint32Array((await backend.download(temp)).buffer);
                const stateAt = Number(/segmentState: \d+ bytes at offset (\d+)/.exec(plan.explain())![1]) / 4;
                const picked = sizes.map((size, r) => {
                  const state = stateAt + r * radixStateWords;
                  const collected = words[state + radixState.collected]!;
                  const take = Math.min(k, size);
                  return words[state + radixState.mode] === 1 && collected >= take && collected <= tileItems && words[state + radixState.selectedByPass] === take && words[state + radixState.keptByPass] === 0;
                });
                // Both output orders take the pick on the same rows (it is built for the plan, not the order).
                if (outputOrdering === 'sorted') ran[radixPick] = picked;
                else expect(picked, `${label}: rows that took the pick`).toEqual(ran[radixPick]);
                ran.explain[radixPick] = plan.explain();
              } finally {
                temp.destroy();
                plan.destroy();
              }
            }
          }
        } finally {
          for (const a of [keysIn, keysOut, valuesOut, ...owned]) a.destroy();
        }
        return ran;
      }

      it("ragged rows with device-only sizes: the same bits under 'always', 'never' and 'auto', which builds no pick", async () => {
        // Rows that sample (at least 1024 keys, k at most a quarter of them) among rows that do not.
        const sizes = [16384, 7, 900, 1023, 1024, 5000, 1, 12000, 300, 16384];
        const k = 200;
        const data = tiesAndNaN(sizes.length * stride, 167);
        const ran = await expectPicks(data, sizes, k, 'max', () => {
          const deviceSizes = backend.upload(Uint32Array.from(sizes));
          return { param: p.perSegment(deviceSizes, { min: 1, max: stride }), owned: [deviceSizes] };
        });
        const samples = sizes.map((size) => size >= 1024 && k <= size / 4);
        expect(ran.always.some((picked) => picked), "'always': the long rows take the pick").toBe(true);
        ran.always.forEach((picked, r) => expect(!picked || samples[r], `'always', row ${r}`).toBe(true));
        expect(ran.never.some((picked) => picked), "'never': no row takes the pick").toBe(false);
        expect(ran.auto, "'auto' builds no pick here").toEqual(ran.never);
        expect(ran.explain.auto).toContain("the pick is not built: radixPick 'auto' builds it only where every segment samples a threshold, and the least segment size the host knows is 1 (< 1024)");
        expect(ran.explain.always).toContain("the pick is built: tuning.policy.radixPick 'always'");
      }, 900_000);

      it("uniform long rows, which all sample: the same bits under 'always', 'never' and 'auto', which builds the pick", async () => {
        const rows = 4;
        const k = 100;
        const sizes = Array.from({ length: rows }, () => stride);
        const data = tiesAndNaN(rows * stride, 173);
        const ran = await expectPicks(data, sizes, k, 'min', () => ({ param: p.uniform(stride), owned: [] }));
        expect(ran.always, "'always': every row takes the pick").toEqual(sizes.map(() => true));
        expect(ran.auto, "'auto' builds the pick here").toEqual(ran.always);
        expect(ran.never, "'never': no row takes the pick").toEqual(sizes.map(() => false));
        expect(ran.explain.auto).toContain(`the pick is built: radixPick 'auto', and every segment samples a threshold: segments of at least ${stride} keys (>= 1024), kMax ${k} <= ${stride / 4}`);
        expect(ran.explain.never).toContain("the pick is not built: tuning.policy.radixPick 'never'");
      }, 900_000);
    });

    describe('row-radix: one workgroup per row', () => {
      /** A case whose keys come from `key(i, random)` (f32 values) instead of a flavour. */
      const withKeys = (o: Parameters<typeof makeCase>[0], key: (i: number, random: () => number) => number): TopKCase => {
        const c = makeCase(o);
        const random = rng((o.seed ?? 7) + 1);
        const f32 = new Float32Array(c.keys.length);
        for (let i = 0; i < f32.length; i++) f32[i] = key(i, random);
        return { ...c, keys: new Uint32Array(f32.buffer) };
      };
      it('is the natural choice for rows past the tile, up to rowRadixMaxItems, on a backend of many workgroup slots', async () => {
        const policy = topKPolicyFor(backend.capabilities);
        const manySlots = backend.capabilities.parallelism >= rowRadixMinParallelism;
        const plan = await expectReferencePlan(makeCase({ name: 'row-natural', sizes: [policy.tileItems + 1, 3 * policy.tileItems, 5], k: 40, seed: 71 }));
        expect(plan.variant).toBe(manySlots ? 'row-radix' : 'radix-select');
        expect(plan.explain()).toContain(manySlots ? 'topk/row-radix[' : `workgroup slots (< ${rowRadixMinParallelism})`);
        if (!manySlots) return;
        const long = makeCase({ name: 'row-too-long', sizes: [policy.tileItems + 1], k: 40, seed: 73 });
        expect((await expectReferencePlan(long, undefined, { rowRadixMaxItems: policy.tileItems })).variant).toBe('radix-select');
        expect((await expectReferencePlan(long, undefined, { rowRadixMaxTotalItems: policy.tileItems })).variant).toBe('radix-select');
        // A selection past the tile keeps row-radix up to rowRadixPastTileMaxItems.
        const pastTile = makeCase({ name: 'row-past-tile', sizes: [policy.tileItems + 3, 7], k: policy.tileItems + 1, seed: 75 });
        expect((await expectReferencePlan(pastTile, undefined, { rowRadixMaxItems: policy.tileItems })).variant).toBe('row-radix');
        expect((await expectReferencePlan(pastTile, undefined, { rowRadixMaxItems: policy.tileItems, rowRadixPastTileMaxItems: policy.tileItems })).variant).toBe('radix-select');
      }, 600_000);
      it('all-equal rows (the threshold bucket is the whole row: past workgroup memory), both directions, k up to the row', async () => {
        const { tileItems } = topKPolicyFor(backend.capabilities);
        const sizes = [4 * tileItems + 3, 2 * tileItems + 1, tileItems + 1, 0];
        // Lavapipe compiles each pipeline through LLVM and runs 1024-wide workgroups slowly: fewer there.
        for (const k of options.compilesSlowly ? [37, 4 * tileItems + 3] : [1, 37, tileItems, 4 * tileItems + 3]) {
          for (const values of options.compilesSlowly ? (['indices-i32'] as const) : (['indices-i32', 'none'] as const)) {
            const c = withKeys({ name: `all-equal-k${k}-${values}`, sizes, k, values, directions: ['max', 'min', 'min', 'max'], seed: 79 + k }, () => 0.5);
            await expectReferencePlan(c, 'row-radix');
          }
        }
      }, 600_000);
      it('a threshold bucket past workgroup memory with distinct lower digits, sorted and unsorted', async () => {
        const { tileItems } = topKPolicyFor(backend.capabilities);
        // Every key in [1, 1.2): one digit-0 bucket for 8- and 11-bit digits; a few NaN and -0 beside.
        const key = (i: number, random: () => number) => (i % 997 === 5 ? NaN : i % 1009 === 7 ? -0 : 1 + random() * 0.2);
        for (const ordering of ['sorted', 'unsorted'] as const) {
          const c = withKeys({ name: `crowded-${ordering}`, sizes: [3 * tileItems + 5, 2 * tileItems + 7], k: [100, tileItems - 3], directions: ['max', 'min'], seed: 83 }, key);
          const built = buildCase(backend, c);
          try {
            for (const radixBits of options.compilesSlowly ? [4, 11] : [4, 8, 11]) {
              const { plan, keys, values } = await runCase(backend, built, { variant: 'row-radix', policy: { radixBits }, requirements: { outputOrdering: ordering } });
              expect(plan.variant).toBe('row-radix');
              // Unsorted: the reference's selection in index order (row-radix collects it so).
              const expected = ordering === 'sorted' ? built.expected : inIndexOrder(c, built.expected, built.kMax);
              expect(keys, `${c.name} ${radixBits}-bit digits: keys`).toEqual(expected.keys);
              expect(values, `${c.name} ${radixBits}-bit digits: values`).toEqual(expected.values);
            }
          } finally {
            for (const a of built.owned) a.destroy();
          }
        }
      }, 600_000);
      it('rows at tile and quad boundaries, packed and strided, device-only sizes and k, payloads', async () => {
        const { tileItems } = topKPolicyFor(backend.capabilities);
        const room = 2 * tileItems;
        const sizes = [tileItems - 1, tileItems, tileItems + 1, room - 1, room + 1, 1, 2, 3, 4 * tileItems + 1];
        for (const flavour of options.compilesSlowly ? (['special'] as const) : (['random', 'ties', 'special'] as const)) {
          await expectReferencePlan(makeCase({ name: `row-edges-${flavour}`, flavour, sizes, k: 33, directions: sizes.map((_, i) => (i % 2 === 0 ? 'max' : 'min')), seed: 89 }), 'row-radix');
        }
        await expectReferencePlan(makeCase({ name: 'row-strided-u32-payload', keyType: 'u32', flavour: 'ties', sizes: [room + 3, 0, tileItems + 2], stride: room + 5, k: [9, 3, 200], values: 'payload', seed: 97 }), 'row-radix');
        await expectReferencePlan(
          makeCase({ name: 'row-device', keyType: 'i32', flavour: 'special', sizes: [room + 9, 17, tileItems * 2 + 2], sizeKind: 'perSegment-device', k: [64, 3, 500], kKind: 'perSegment-device', numSegmentsKind: 'device', values: 'indices-f32', seed: 101 }),
          'row-radix',
        );
        // The widest workgroup the backend allows (GPUs default to it; the CPU and lavapipe to 256).
        const widest = Math.min(1024, backend.capabilities.maxWorkgroupSize);
        await expectReferencePlan(makeCase({ name: 'row-widest', flavour: 'special', sizes: [room + 3, tileItems + 1, 5], k: [40, tileItems, 5], seed: 107 }), 'row-radix', { rowRadixWorkgroupSize: widest });
        // k = the row (everything taken), sorted past the tile.
        await expectReferencePlan(makeCase({ name: 'row-k-is-row', flavour: 'ties', sizes: [room + 1, tileItems + 1], k: [room + 1, tileItems + 1], seed: 103 }), 'row-radix');
      }, 600_000);
    });

    describe('sorted output past a tile', () => {
      // Row-radix and radix-select write the selection in index order and the segmented sort's radix
      // kernels sort it in the same submit (stable: ties by index), bit for bit with the reference.
      // Forced: a backend of many workgroup slots picks the merge (below) by its sort's policy.
      const radix: Partial<TopKPolicy> = { selectionSortVariant: 'radix' };
      it('k = 4096, 9000 and 10000 sorted, both directions, heavy ties and NaN', async () => {
        const sizes = [10_000, 12_000, 3000, 0];
        for (const k of [4096, 9000, 10_000]) {
          const c = makeCase({ name: `sorted-k${k}`, flavour: k === 9000 ? 'special' : 'ties', sizes, k, directions: ['max', 'min', 'max', 'min'], seed: 53 + k });
          // row-radix is natural where the backend has many workgroup slots; both variants run everywhere.
          const natural = backend.capabilities.parallelism >= rowRadixMinParallelism ? 'row-radix' : 'radix-select';
          expect((await expectReferencePlan(c, undefined, radix)).variant).toBe(natural);
          await expectReferencePlan(c, natural === 'row-radix' ? 'radix-select' : 'row-radix', radix);
        }
        await expectReferencePlan(makeCase({ name: 'sorted-k4096-payload-u32', keyType: 'u32', flavour: 'ties', sizes: [9000, 5000], k: 4096, values: 'payload', seed: 59 }), undefined, radix);
        await expectReferencePlan(makeCase({ name: 'sorted-k5000-keys-only-i32', keyType: 'i32', flavour: 'special', sizes: [6000, 5001, 7], k: 5000, directions: 'min', values: 'none', seed: 61 }), undefined, radix);
        // Per-segment k (some within the tile, some past it), a stride, a kMax past the largest segment.
        await expectReferencePlan(makeCase({ name: 'sorted-k-per-segment-strided', flavour: 'ties', sizes: [7000, 2500, 0, 6999], stride: 7001, k: [6000, 2049, 3, 1], kBound: 8000, directions: ['min', 'max', 'max', 'min'], seed: 67 }), undefined, radix);
      }, 600_000);
      it("a selection of the sort's radixScanLaunchMinTiles tiles or more: its scan in a launch of its own (fewer: in the scatter)", async () => {
        const { tileItems } = topKPolicyFor(backend.capabilities);
        const k = defaultRadixScanLaunchMinTiles * tileItems + 7;
        const c = makeCase({ name: 'sorted-scan-launch', flavour: 'ties', sizes: [k + 1000, 5000], k, directions: ['max', 'min'], seed: 71 });
        const plan = await expectReferencePlan(c, 'radix-select', radix);
        expect(plan.launches.some((launch) => launch.name.includes('sort-selection/scan'))).toBe(true);
        const few = await expectReferencePlan(makeCase({ name: 'sorted-scan-in-scatter', flavour: 'ties', sizes: [9000, 5000], k: 5000, seed: 73 }), 'radix-select', radix);
        expect(few.launches.some((launch) => launch.name.includes('sort-selection/scan'))).toBe(false);
      }, 600_000);
    });

    describe('radix-select past the tile: the compaction launches (radix-plan.ts)', () => {
      // Per segment its k best far from the rest (1000 apart, at random places; integers within each
      // group, so ties), so digit 0's filter takes a whole bucket: the filters select the whole take
      // (a top range) and finalize leaves the compaction the least selected key. Uniform keys (the
      // other cases) leave the last digit to split the take: a threshold and the equal keys taken.
      // The sorted cases above through radix-select's compaction (on by default on GPU-class backends
      // only): ties, NaN, -0, u32 and i32 keys, payloads and keys only, per-segment k, a stride.
      it('the sorted cases past the tile again, the selection compacted over every tile', async () => {
        const compacted: Partial<TopKPolicy> = { selectionSortVariant: 'radix', radixCompactPastTile: true };
        const cases = [
          makeCase({ name: 'compacted-k9000', flavour: 'special', sizes: [10_000, 12_000, 3000, 0], k: 9000, directions: ['max', 'min', 'max', 'min'], seed: 53 + 9000 }),
          makeCase({ name: 'compacted-k4096-payload-u32', keyType: 'u32', flavour: 'ties', sizes: [9000, 5000], k: 4096, values: 'payload', seed: 59 }),
          makeCase({ name: 'compacted-k5000-keys-only-i32', keyType: 'i32', flavour: 'special', sizes: [6000, 5001, 7], k: 5000, directions: 'min', values: 'none', seed: 61 }),
          makeCase({ name: 'compacted-k-per-segment-strided', flavour: 'ties', sizes: [7000, 2500, 0, 6999], stride: 7001, k: [6000, 2049, 3, 1], kBound: 8000, directions: ['min', 'max', 'max', 'min'], seed: 67 }),
          // A take of a sixteenth of its segment samples a threshold; one of a quarter does not (policy.ts radixSampleCompactedDivisor).
          makeCase({ name: 'compacted-sampled', flavour: 'ties', sizes: [90_000, 20_000], k: 5000, directions: ['max', 'min'], seed: 79 }),
        ];
        const { tileItems } = topKPolicyFor(backend.capabilities);
        for (const c of cases) {
          const plan = await expectReferencePlan(c, 'radix-select', compacted);
          // The compaction runs where a take may pass the tile (radix-plan.ts radixCompacts).
          const pastTile = Math.min(c.kBound, Math.max(...c.sizes)) > tileItems;
          expect(plan.launches.some((l) => l.name.includes('compact-write')), c.name).toBe(pastTile);
        }
      }, 600_000);
      it('a take the filters select whole, sorted and in index order, both directions', async () => {
        const { tileItems } = topKPolicyFor(backend.capabilities);
        const k = tileItems + 100;
        const sizes = [3 * k, k + 5, 2 * k + 1];
        // The take ends with digit 0's bucket (the best about +-1000, the rest -+1000), or with digit
        // 1's (the best in [1.5, 1.55), the rest in [1, 1.05): every key shares digit 0, and the
        // selection's least key carries it); integers of 1/1024 within each group, so ties.
        const layouts = [
          { name: 'digit 0', best: (r: number) => 1000 + Math.round(r * 50), rest: (r: number) => -1000 + Math.round(r * 50) },
          { name: 'digit 1', best: (r: number) => 1.5 + Math.round(r * 50) / 1024, rest: (r: number) => 1 + Math.round(r * 50) / 1024 },
        ];
        for (const [l, layout] of layouts.entries()) {
          const base = makeCase({ name: `top-range, ${layout.name}`, sizes, k, directions: ['max', 'min', 'max'], seed: 227 + l });
          const random = rng(229 + l);
          const keys = new Float32Array(base.keys.length);
          let start = 0;
          sizes.forEach((size, i) => {
            const sign = base.directions[i] === 'max' ? 1 : -1;
            const order = Array.from({ length: size }, (_, j) => j);
            for (let j = 0; j < k; j++) {
              const r = j + Math.floor(random() * (size - j));
              [order[j], order[r]] = [order[r]!, order[j]!];
            }
            for (let j = 0; j < size; j++) keys[start + order[j]!] = sign * (j < k ? layout.best(random()) : layout.rest(random()));
            start += size;
          });
          const c = { ...base, keys: new Uint32Array(keys.buffer) };
          // On by default on GPU-class backends only (policy.ts radixCompactPastTile): forced here.
          const policy: Partial<TopKPolicy> = { radixCompactPastTile: true };
          const plan = await expectReferencePlan(c, 'radix-select', policy);
          expect(plan.launches.map((launch) => launch.name)).toContainEqual(expect.stringMatching(/compact-write/));
          const built = buildCase(backend, c);
          try {
            const { keys: got, values } = await runCase(backend, built, { variant: 'radix-select', policy, requirements: { outputOrdering: 'unsorted' } });
            const expected = inIndexOrder(c, built.expected, built.kMax);
            expect(got, `${layout.name}, unsorted: keys`).toEqual(expected.keys);
            expect(values, `${layout.name}, unsorted: values`).toEqual(expected.values);
          } finally {
            for (const a of built.owned) a.destroy();
          }
        }
      }, 600_000);
    });

    defineSelectionMergeConformance(() => backend, options);

    describe('edge cases', () => {
      it('empty segments, k > size, a single key', async () => {
        await expectAllVariants(makeCase({ name: 'empty', sizes: [0, 3, 0, 1, 0, 10, 0], k: 6, seed: 37 }));
        await expectAllVariants(makeCase({ name: 'k>size', sizes: [2, 5, 1], k: 9, kBound: 9, seed: 41 }));
        await expectAllVariants(makeCase({ name: 'k=1', sizes: [1000, 1], k: 1, seed: 43 }));
      });
      it('numSegments = 0 writes nothing', async () => {
        const c = makeCase({ name: 'zero', sizes: [], k: 4, seed: 47 });
        const built = buildCase(backend, c);
        const { keys } = await runCase(backend, built);
        expect([...keys]).toEqual([untouchedBits]);
        for (const a of built.owned) a.destroy();
      });
      // The grid of every segment-indexed launch is then empty and temporary storage may have no
      // per-segment slots: valid input that must run (writing nothing), never reach an internal error.
      for (const variant of topKVariants) {
        it(`numSegments = 0 with '${variant}' forced, every kind of segment size and of numSegments`, async () => {
          const sizeKinds: NumericKind[] = ['constant', 'uniform', 'uniform-device', 'perSegment', 'perSegment-device', 'perSegment-device-bounds'];
          for (const sizeKind of sizeKinds) {
            for (const numSegmentsKind of ['constant', 'uniform', 'device'] as const) {
              const name = `zero/${variant}/${sizeKind}/${numSegmentsKind}`;
              const c = makeCase({ name, sizes: [], k: 4, sizeKind, numSegmentsKind, seed: 300 });
              // A constant or uniform size that is not 0: only the segment count makes the call empty.
              c.sizeBounds = { min: 7, max: 700 };
              const built = buildCase(backend, c);
              try {
                const { plan, keys, values } = await runCase(backend, built, { variant });
                expect(plan.variant, name).toBe(variant);
                expect([...keys], `${name}: keys`).toEqual([untouchedBits]);
                expect([...values!], `${name}: values`).toEqual([untouchedBits]);
              } finally {
                for (const a of built.owned) a.destroy();
              }
            }
          }
        });
      }
      it('strided segments under a totalNumItems guarantee smaller than the keys', async () => {
        // Candidates live at each segment's start, so the double buffer must span the strided extent.
        const c = makeCase({ name: 'strided-total', sizes: [2500, 2500, 2500, 2500], stride: 3000, k: 40, seed: 57 });
        for (const variant of ['radix-select', undefined] as const) {
          const built = buildCase(backend, c);
          built.args.totalNumItems = p.guarantee({ max: 10_000 });
          const { keys, plan } = await runCase(backend, built, { variant });
          expect(keys, `strided-total (${plan.variant})`).toEqual(built.expected.keys);
          for (const a of built.owned) a.destroy();
        }
      });
      it('all keys equal (ties resolved by index)', async () => {
        const c = makeCase({ name: 'all-equal', sizes: [700, 1500], k: 20, seed: 53 });
        c.keys.fill(0x3f800000);
        await expectAllVariants(c);
      });
      it('NaN above +Infinity, -0 equal to +0', async () => {
        const c = makeCase({ name: 'nan-zero', sizes: [8], k: 8, seed: 59 });
        c.keys.set([0x80000000, 0x7f800000, 0x7fc00000, 0x00000000, 0xff800000, 0xffc00000, 0x3f800000, 0x80000000]);
        const variant = await expectReference(c);
        expect(variant).toBeDefined();
        const built = buildCase(backend, c);
        const { keys, values } = await runCase(backend, built);
        // NaN (index 2), NaN (index 5), +Inf (1), 1 (6), -0 (0), +0 (3), -0 (7), -Inf (4)
        expect([...values!].map((v) => v | 0)).toEqual([2, 5, 1, 6, 0, 3, 7, 4]);
        expect(keys[4]).toBe(0x80000000);
        for (const a of built.owned) a.destroy();
      });
    });

    describe('every parameter kind', () => {
      const n = 9;
      const equal = Array.from({ length: n }, () => 333);
      const varied = randomSizes(n, 600, 61);
      const kinds: { sizeKind: NumericKind; sizes: number[] }[] = [
        { sizeKind: 'constant', sizes: equal },
        { sizeKind: 'uniform', sizes: equal },
        { sizeKind: 'uniform-device', sizes: equal },
        { sizeKind: 'perSegment', sizes: varied },
        { sizeKind: 'perSegment-device', sizes: varied },
        { sizeKind: 'perSegment-device-bounds', sizes: varied },
      ];
      const kKinds: { kKind: NumericKind; k: number | number[] }[] = [
        { kKind: 'constant', k: 6 },
        { kKind: 'uniform', k: 6 },
        { kKind: 'uniform-device', k: 6 },
        { kKind: 'perSegment', k: [1, 2, 3, 4, 5, 6, 7, 8, 2] },
        { kKind: 'perSegment-device', k: [12, 1, 30, 4, 5, 64, 7, 8, 9] },
      ];
      const dirKinds: { directionKind: OptionKind; directions: 'max' | 'min' | ('max' | 'min')[] }[] = [
        { directionKind: 'constant', directions: 'min' },
        { directionKind: 'uniform', directions: 'min' },
        { directionKind: 'uniform-device', directions: 'min' },
        { directionKind: 'perSegment', directions: ['max', 'min', 'min', 'max', 'max', 'min', 'max', 'min', 'max'] },
        { directionKind: 'perSegment-device', directions: ['min', 'min', 'max', 'max', 'max', 'min', 'max', 'min', 'max'] },
      ];
      let seed = 100;
      const pairs = dirKinds.flatMap((d) => [undefined, 700].map((stride) => ({ d, stride })));
      let rotation = 0;
      for (const s of kinds) {
        for (const kk of kKinds) {
          const chosen = options.compilesSlowly ? [0, 1, 2].map((j) => pairs[(rotation + j) % pairs.length]!) : pairs;
          rotation += 3;
          it(`sizes ${s.sizeKind}, k ${kk.kKind}`, async () => {
            for (const { d, stride } of chosen) {
              const numSegmentsKind = (['constant', 'uniform', 'device'] as const)[seed % 3]!;
              const values = (['indices-i32', 'indices-u32', 'indices-f32', 'payload', 'none'] as const)[seed % 5]!;
              await expectReference(
                makeCase({ name: `${s.sizeKind}/${kk.kKind}/${d.directionKind}/${stride ?? 'packed'}`, ...s, ...kk, ...d, stride, numSegmentsKind, values, seed: seed++, flavour: 'special' }),
              );
            }
          });
        }
      }
    });

    describe('requirements', () => {
      it("'unsorted' returns the same set", async () => {
        const c = makeCase({ name: 'unsorted', sizes: randomSizes(6, 3000, 71), k: 50, seed: 73 });
        const built = buildCase(backend, c);
        const { keys, values } = await runCase(backend, built, { requirements: { outputOrdering: 'unsorted' } });
        for (let s = 0; s < c.sizes.length; s++) {
          const pick = (a: Uint32Array) => [...a.subarray(s * 50, s * 50 + 50)].sort((x, y) => x - y);
          expect(pick(keys)).toEqual(pick(built.expected.keys));
          expect(pick(values!)).toEqual(pick(built.expected.values));
        }
        for (const a of built.owned) a.destroy();
      });
      it("'trust' with device-only values makes no transfer", async () => {
        const c = makeCase({ name: 'trust', sizes: randomSizes(5, 500, 79), sizeKind: 'perSegment-device', k: [3, 1, 4, 1, 5], kKind: 'perSegment-device', directionKind: 'perSegment-device', directions: ['max', 'min', 'max', 'min', 'max'], numSegmentsKind: 'device', seed: 83 });
        const built = buildCase(backend, c);
        const environment = env({ backend, requirements: { guaranteeChecks: 'trust' } });
        const plan = (DeviceBatchedTopK.plan as unknown as (a: unknown, e: unknown) => { run(t?: unknown): Promise<void>; tempStorageBytes: number })(built.args, environment);
        const temp = plan.tempStorageBytes ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
        backend.resetStats();
        await plan.run(temp);
        await backend.synchronize();
        const stats = backend.stats();
        expect(stats.uploads + stats.downloads).toBe(0);
        expect(stats.launches).toBeGreaterThan(0);
        expect(bits(await backend.download(built.keysOut))).toEqual(built.expected.keys);
        temp?.destroy();
        for (const a of built.owned) a.destroy();
      });
      it("'validate' reads back one status word only", async () => {
        const c = makeCase({ name: 'validate', sizes: [10, 20], sizeKind: 'perSegment-device', k: 3, seed: 89 });
        const built = buildCase(backend, c);
        backend.resetStats();
        await runCase(backend, built);
        // The status word, then the test's own downloads of keysOut and valuesOut.
        expect(backend.stats().downloads).toBe(1 + (built.valuesOut ? 2 : 1));
        for (const a of built.owned) a.destroy();
      });
    });

    describe("requirements: tieBreak 'any' and determinism 'not-guaranteed'", () => {
      const allEqual = (c: TopKCase) => {
        c.keys.fill(c.keyType === 'f32' ? 0x3f800000 : 7);
        return c;
      };
      // Ties across many radix tiles (the filter appends them in whatever order the tiles ran), few
      // distinct keys, every key equal, NaN/-0 specials; payloads, f32 indices and keys only.
      const relaxedCases = () => [
        makeCase({ name: 'ties-long', flavour: 'ties', sizes: [20_000, 3000, 9000, 0, 7], k: 300, seed: 201 }),
        makeCase({ name: 'ties-small-k', keyType: 'i32', flavour: 'ties', sizes: randomSizes(20, 900, 203), k: 6, values: 'payload', seed: 205 }),
        allEqual(makeCase({ name: 'all-equal', keyType: 'u32', sizes: [12_000, 5000, 1], k: 500, values: 'indices-f32', seed: 207 })),
        makeCase({ name: 'special-min', flavour: 'special', sizes: [10_000, 1000], k: 64, directions: 'min', values: 'none', seed: 209 }),
      ];
      const combinations: { requirements: Partial<Requirements>; allowed: Allowed; specialization: string; explains: string }[] = [
        { requirements: { tieBreak: 'any', determinism: 'not-guaranteed' }, allowed: { ties: 'any', order: 'sorted' }, specialization: ',tie=any]', explains: "tieBreak 'any' (not-guaranteed): " },
        { requirements: { tieBreak: 'any', determinism: 'not-guaranteed', outputOrdering: 'unsorted' }, allowed: { ties: 'any', order: 'any' }, specialization: ',tie=any,order=any]', explains: "determinism 'not-guaranteed' (unsorted): " },
        { requirements: { determinism: 'not-guaranteed', outputOrdering: 'unsorted' }, allowed: { ties: 'index', order: 'any' }, specialization: ',order=any]', explains: "determinism 'not-guaranteed' (unsorted): " },
      ];
      for (const { requirements, allowed, specialization, explains } of combinations) {
        it(`${JSON.stringify(requirements)}: a valid top-k from every variant; radix-select's finalize is specialized`, async () => {
          for (const c of relaxedCases()) {
            for (const variant of [undefined, 'single-tile', 'reduce', 'radix-select'] as const) {
              const built = buildCase(backend, c);
              try {
                const { plan, keys, values } = await runCase(backend, built, { variant, requirements });
                expect(topKViolations(c, built, keys, values, allowed), `${c.name} (${plan.variant})`).toEqual([]);
                const relaxedNames = plan.launches.filter((l) => /(tie|order)=any/.test(l.name)).map((l) => l.name);
                if (plan.variant === 'radix-select') {
                  expect(relaxedNames).toEqual([expect.stringMatching(/^topk\/radix-select\/finalize\[/)]);
                  expect(relaxedNames[0]!.endsWith(specialization), relaxedNames[0]).toBe(true);
                } else {
                  expect(relaxedNames, `${plan.variant} finds items in index order: nothing to specialize`).toEqual([]);
                }
                expect(plan.explain()).toContain(explains);
              } catch (error) {
                if (!(error instanceof SegkitUsageError) || !/cannot run for these parameters/.test(error.message)) throw error;
              } finally {
                for (const a of built.owned) a.destroy();
              }
            }
          }
        });
      }

      it("tieBreak 'any' under 'run-to-run' gives the defaults' results bit for bit, and explain() says why", async () => {
        for (const c of relaxedCases()) {
          for (const variant of [undefined, 'radix-select'] as const) {
            const built = buildCase(backend, c);
            const { plan, keys, values } = await runCase(backend, built, { variant, requirements: { tieBreak: 'any' } });
            expect(topKViolations(c, built, keys, values, { ties: 'index', order: 'sorted' }), `${c.name} (${plan.variant})`).toEqual([]);
            expect(plan.launches.some((l) => l.name.includes('tie=any'))).toBe(false);
            expect(plan.explain()).toContain("tieBreak 'any': ties still go to the smaller index");
            for (const a of built.owned) a.destroy();
          }
        }
      });

      it("'unsorted' under 'run-to-run' repeats: radix-select and row-radix write index order, within and past the tile", async () => {
        const { tileItems } = topKPolicyFor(backend.capabilities);
        for (const k of [50, tileItems + 100]) {
          const c = makeCase({ name: 'unsorted-past-tile', flavour: 'ties', sizes: [9 * k, k - 7, 3 * k], k, seed: 211 });
          const built = buildCase(backend, c);
          const expected = inIndexOrder(c, built.expected, k);
          for (const variant of ['radix-select', 'row-radix'] as const) {
            for (let run = 0; run < 2; run++) {
              const { plan, keys, values } = await runCase(backend, built, { variant, requirements: { outputOrdering: 'unsorted' } });
              // Past the tile, radix-select's compaction launches write the selection in index order where the policy says (radix-plan.ts).
              const compacts = k > tileItems && topKPolicyFor(backend.capabilities).radixCompactPastTile;
              const last = variant === 'row-radix' ? /row-radix\[[^=]*\]$/ : compacts ? /compact-write\[[^=]*\]$/ : /finalize\[[^=]*\]$/;
              expect(plan.launches.at(-1)!.name).toMatch(last);
              expect(keys, `${variant}, run ${run}: keys`).toEqual(expected.keys);
              expect(values, `${variant}, run ${run}: values`).toEqual(expected.values);
            }
          }
          for (const a of built.owned) a.destroy();
        }
      });

      it('the relaxed checker accepts another choice among tied items and rejects wrong sets', async () => {
        // Five distinct keys among 400 items: the top 100 span two keys, and the second has items left.
        const c = makeCase({ name: 'checker', flavour: 'ties', sizes: [400, 300], k: 100, seed: 213 });
        const built = buildCase(backend, c);
        const { keys, values } = await runCase(backend, built);
        const any: Allowed = { ties: 'any', order: 'sorted' };
        const byIndex: Allowed = { ties: 'index', order: 'sorted' };
        expect(topKViolations(c, built, keys, values!, byIndex)).toEqual([]);
        // Segment 0: swap the last result for an item with the same key that was not taken.
        const last = 99;
        const taken = new Set(Array.from({ length: 100 }, (_, j) => values![j]!));
        const tied = Array.from({ length: 400 }, (_, i) => i).find((i) => !taken.has(i) && c.keys[i] === keys[last]);
        expect(tied, 'the case has an untaken tied item').toBeDefined();
        const otherTie = values!.slice();
        otherTie[last] = tied!;
        expect(topKViolations(c, built, keys, otherTie, any)).toEqual([]);
        expect(topKViolations(c, built, keys, otherTie, byIndex)).toEqual(['segment 0: the items are not the smallest indices among ties', "segment 0: slot 99: not the reference's result"]);
        // A worse item in place of a taken one, an item taken twice, a key that is not the item's, a wrong order.
        const worst = Array.from({ length: 400 }, (_, i) => i).reduce((a, i) => (orderedKeyOf(c, i) < orderedKeyOf(c, a) ? i : a), 0);
        const wrongSet = { keys: keys.slice(), values: values!.slice() };
        wrongSet.keys[last] = c.keys[worst]!;
        wrongSet.values[last] = worst;
        expect(topKViolations(c, built, wrongSet.keys, wrongSet.values, any)).toContain('segment 0: the keys are not the top-k keys');
        const twice = values!.slice();
        twice[last] = twice[last - 1]!;
        expect(topKViolations(c, built, keys, twice, any)).toContain(`segment 0: slot ${last}: item ${twice[last]} is taken twice`);
        const swapped = keys.slice();
        [swapped[0], swapped[last]] = [swapped[last]!, swapped[0]!];
        expect(topKViolations(c, built, swapped, values!, any)).toContain('segment 0: the keys are not best first');
        expect(topKViolations(c, built, swapped, values!, { ties: 'any', order: 'any' })).toContain(`segment 0: slot 0: key ${swapped[0]} is not item ${values![0]}'s key ${c.keys[values![0]!]}`);
        for (const a of built.owned) a.destroy();
      });
    });

    describe('without env({ backend }), a call runs where its DeviceArrays are', () => {
      const select = DeviceBatchedTopK.select as unknown as (args: unknown, e?: Env) => Promise<void>;
      const planOf = DeviceBatchedTopK.plan as unknown as (args: unknown, e?: Env) => TopKPlan;

      it('no env, or an env without a backend: the arrays\' backend runs it', async () => {
        const c = makeCase({ name: 'arrays-backend', sizes: [300, 20, 1000], k: 12, sizeKind: 'perSegment-device', seed: 221 });
        for (const environment of [undefined, env({ requirements: { outputOrdering: 'sorted' } })]) {
          const built = buildCase(backend, c);
          expect(environment?.backend).toBeUndefined();
          expect(planOf(built.args, environment).backend).toBe(backend);
          backend.resetStats();
          await select(built.args, environment);
          expect(backend.stats().launches).toBeGreaterThan(0);
          expect(bits(await backend.download(built.keysOut))).toEqual(built.expected.keys);
          expect(bits(await backend.download(built.valuesOut!))).toEqual(built.expected.values);
          for (const a of built.owned) a.destroy();
        }
      });

      it('arrays on two backends: an error naming an array on each, outputs untouched', async () => {
        const other = cpuBackend({ workers: 0 });
        const c = makeCase({ name: 'two-backends', sizes: [30, 40], k: 5, seed: 223 });
        const elsewhere = backend.name === 'cpu' ? 'another cpu backend instance than keysIn\'s' : 'the cpu backend, but keysIn\'s is on the webgpu backend';
        const rule = 'with no backend in env(), a call runs on the backend that holds its DeviceArrays, so they must all be on one: upload them to the same backend';
        const built = buildCase(backend, c);
        const otherValues = other.alloc('i32', built.valuesOut!.length);
        await expect(select({ ...built.args, valuesOut: otherValues })).rejects.toThrow(new SegkitUsageError(`valuesOut: its DeviceArray is on ${elsewhere}; ${rule}`));
        const otherK = other.upload(new Uint32Array([5]));
        await expect(select({ ...built.args, k: p.uniform(otherK, { min: 1, max: 5 }) }, env())).rejects.toThrow(new SegkitUsageError(`k: its DeviceArray is on ${elsewhere}; ${rule}`));
        // With a backend named, the arrays must be on it: the message says so.
        await expect(select(built.args, env({ backend: other }))).rejects.toThrow(`keysIn: the DeviceArray belongs to ${backend.name === 'cpu' ? 'another cpu backend instance than the one running this call' : 'the webgpu backend, but this call runs on the cpu backend'}`);
        expect([...bits(await backend.download(built.keysOut))].every((b) => b === untouchedBits)).toBe(true);
        expect([...bits(await other.download(otherValues))].every((b) => b === 0)).toBe(true);
        for (const a of built.owned) a.destroy();
        other.destroy();
      });
    });

    describe('bad input leaves outputs untouched', () => {
      async function expectUntouched(built: ReturnType<typeof buildCase>) {
        expect([...bits(await backend.download(built.keysOut))].every((b) => b === untouchedBits)).toBe(true);
        if (built.valuesOut) expect([...bits(await backend.download(built.valuesOut))].every((b) => b === untouchedBits)).toBe(true);
      }
      /** Runs the case: a GuaranteeViolationError with exactly `message`, and the outputs untouched. */
      async function expectViolation(built: ReturnType<typeof buildCase>, message: string) {
        const error = await runCase(backend, built).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(GuaranteeViolationError);
        expect((error as GuaranteeViolationError).message).toBe(message);
        await expectUntouched(built);
      }
      it('a host per-segment value outside its static bounds', async () => {
        const c = makeCase({ name: 'bad-host', sizes: [5, 6, 7], k: [1, 9, 2], kBound: 4, seed: 97 });
        const built = buildCase(backend, c);
        const error = await runCase(backend, built).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SegkitRangeError);
        expect((error as SegkitRangeError).message).toBe('k[1]: 9 is outside the static bounds [1, 4]');
        expect((error as SegkitRangeError).segment).toBe(1);
        await expectUntouched(built);
        for (const a of built.owned) a.destroy();
      });
      it('a device-only value outside its static bounds', async () => {
        const c = makeCase({ name: 'bad-device', sizes: [5, 6, 7], k: [1, 9, 2], kBound: 4, kKind: 'perSegment-device', seed: 101 });
        const built = buildCase(backend, c);
        const error = await runCase(backend, built).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(GuaranteeViolationError);
        expect((error as GuaranteeViolationError).parameter).toBe('k');
        expect((error as GuaranteeViolationError).segment).toBe(1);
        expect((error as GuaranteeViolationError).value).toBe(9);
        expect((error as GuaranteeViolationError).message).toBe('k[1]: 9 is outside the static bounds [1, 4] (found on the device)');
        await expectUntouched(built);
        for (const a of built.owned) a.destroy();
      });
      it('the lowest failing segment among thousands of device-only values (several failures, past the first chunks)', async () => {
        // 9000 packed segments of device-only sizes with device-only ks: the WebGPU validate walks them
        // in chunks, each invocation checking a run of consecutive segments; failures at segments 7001
        // and 7005 (one run), and 8999 (a later chunk) must report 7001, as the CPU does.
        const n = 9000;
        const sizes = Array.from({ length: n }, (_, i) => 1 + (i % 5));
        const ks = sizes.map((size) => Math.min(size, 2));
        for (const bad of [7005, 7001, 8999]) ks[bad] = 5;
        const c = makeCase({ name: 'bad-device-many', sizes, k: ks, kBound: 4, kKind: 'perSegment-device', sizeKind: 'perSegment-device', seed: 131 });
        const built = buildCase(backend, c);
        await expectViolation(built, 'k[7001]: 5 is outside the static bounds [1, 4] (found on the device)');
        for (const a of built.owned) a.destroy();
      });
      it('the lowest failing segment among thousands of device-only ks over one segment size, then valid calls again', async () => {
        // One size for every segment: WebGPU's validate spreads the segments over 36 workgroups (256
        // each) that meet in one atomic status word. Failures in workgroups 8, 27 and 35 must report
        // segment 2100 whichever workgroup finishes last; a valid call after it must pass (the last
        // workgroup resets the word), and a failure in workgroup 0 alone must be found on the next.
        const n = 9000;
        const sizes = Array.from({ length: n }, () => 3);
        const ks = sizes.map((_, i) => 1 + (i % 3));
        const bad = [...ks];
        for (const at of [7005, 2100, 7001, 8999]) bad[at] = 5;
        const c = makeCase({ name: 'bad-device-spread', sizes, k: bad, kBound: 4, kKind: 'perSegment-device', sizeKind: 'uniform', seed: 137 });
        const built = buildCase(backend, c);
        await expectViolation(built, 'k[2100]: 5 is outside the static bounds [1, 4] (found on the device)');
        // One plan (one status buffer) run again with the ks rewritten in place on the device.
        const kArray = (built.args.k as { values: DeviceArray<'u32'> }).values;
        const environment = env({ backend });
        const rewriteKs = async (values: number[]) => {
          const source = backend.upload(new Uint32Array(values));
          await DeviceBatchedCopy.copy({ source, destination: kArray, sourceOffsets: p.constant(0), destinationOffsets: p.constant(0), sizes: p.constant(n), numBuffers: p.constant(1) }, environment);
          source.destroy();
        };
        const plan = (DeviceBatchedTopK.plan as unknown as (a: unknown, e: unknown) => { run(t?: unknown): Promise<void> })(built.args, environment);
        await plan.run();
        await expect(backend.synchronize()).rejects.toThrow('k[2100]: 5 is outside the static bounds [1, 4] (found on the device)');
        for (let round = 0; round < 2; round++) {
          await rewriteKs(ks);
          await plan.run();
          await backend.synchronize();
        }
        const firstBad = [...ks];
        firstBad[17] = 7;
        await rewriteKs(firstBad);
        await plan.run();
        const late = await backend.synchronize().catch((e: unknown) => e);
        expect(late).toBeInstanceOf(GuaranteeViolationError);
        expect((late as GuaranteeViolationError).message).toBe('k[17]: 7 is outside the static bounds [1, 4] (found on the device)');
        for (const a of built.owned) a.destroy();
      });
      it('strided rows with device-only sizes: the lowest segment longer than the stride, among three workgroups of checks', async () => {
        // Strided starts need no scan, so WebGPU's validate spreads the 700 segments over three
        // workgroups; segments 650 (the last workgroup) and 400 (the second) are longer than the stride.
        const sizes = Array.from({ length: 700 }, (_, i) => 1 + (i % 9));
        sizes[650] = 12;
        sizes[400] = 11;
        const c = makeCase({ name: 'bad-stride-spread', sizes, stride: 10, k: 2, sizeKind: 'perSegment-device', seed: 139 });
        const built = buildCase(backend, c);
        await expectViolation(built, 'segmentSizes[400]: 11 is larger than segmentStride 10 (found on the device)');
        for (const a of built.owned) a.destroy();
      });
      it('a device-only segment size outside its device runtime bounds', async () => {
        const c = makeCase({ name: 'bad-device-bounds', sizes: [5, 6, 7], k: 2, sizeKind: 'perSegment-device-bounds', seed: 103 });
        const built = buildCase(backend, c);
        // Narrow the device runtime bounds below segment 2's size.
        const deviceSizes = (built.args.segmentSizes as { values: DeviceArray }).values;
        const narrowed = backend.upload(new Uint32Array([5, 6]));
        built.owned.push(narrowed);
        built.args.segmentSizes = p.perSegment(deviceSizes, { min: 0, max: 7 }, narrowed);
        await expectViolation(built, 'segmentSizes[2]: 7 is outside the device runtime bounds [5, 6] (found on the device)');
        for (const a of built.owned) a.destroy();
      });
      it('a device-only number of segments past what the outputs hold', async () => {
        const c = makeCase({ name: 'bad-num', sizes: [5, 6], k: 2, numSegmentsKind: 'device', seed: 107 });
        const built = buildCase(backend, c);
        const tooMany = backend.upload(new Uint32Array([3]));
        built.owned.push(tooMany);
        built.args.numSegments = p.uniform(tooMany, { min: 0, max: 3 });
        const error = await runCase(backend, built).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(GuaranteeViolationError);
        expect((error as GuaranteeViolationError).parameter).toBe('numSegments');
        await expectUntouched(built);
        for (const a of built.owned) a.destroy();
      });
      it('segments past the keys, arrays of another backend, destroyed arrays, missing temp storage', async () => {
        const c = makeCase({ name: 'misuse', sizes: [50, 60], k: 20, seed: 109 });
        const built = buildCase(backend, c);
        built.args.segmentSizes = p.perSegment([50, 61]);
        await expect(runCase(backend, built)).rejects.toThrow('segmentSizes[1]: segment 1 ends at 111, past the 110 keys of keysIn');
        built.args.segmentSizes = p.perSegment([50, 60]);
        const environment = env({ backend, tuning: { variant: 'radix-select' } });
        const plan = (DeviceBatchedTopK.plan as unknown as (a: unknown, e: unknown) => { run(t?: unknown): Promise<void>; tempStorageBytes: number })(built.args, environment);
        expect(plan.tempStorageBytes).toBeGreaterThan(0);
        await expect(plan.run()).rejects.toThrow(/tempStorage: this plan needs \d+ bytes/);
        const small = backend.alloc('u8', 16);
        await expect(plan.run(small)).rejects.toThrow(/tempStorage: has 16 bytes; this plan needs \d+/);
        small.destroy();
        await expect(plan.run(small)).rejects.toThrow('tempStorage: the DeviceArray was destroyed and cannot be used');
        await expectUntouched(built);
        for (const a of built.owned) a.destroy();
        await expect(plan.run()).rejects.toThrow('keysIn: the DeviceArray was destroyed and cannot be used');
      });
      it('a misspelled, missing or unwanted field is named, in args and in env (callers through any)', async () => {
        const c = makeCase({ name: 'fields', sizes: [5, 6, 7], stride: 13, k: 2, seed: 127 });
        const built = buildCase(backend, c);
        const { segmentStride, valuesIn, valuesOut, selectDirection, ...keysOnly } = built.args;
        const args = { ...keysOnly, selectDirection };
        const untyped = DeviceBatchedTopK as unknown as Record<'plan', (a: unknown, e?: unknown) => unknown> &
          Record<'select' | 'maxKeys' | 'maxPairs', (a: unknown, e?: unknown) => Promise<void>>;
        const e = env({ backend });
        const usage = async (call: () => unknown, message: string) => {
          const error = await (async () => call())().then(() => undefined, (thrown: unknown) => thrown);
          expect(error, message).toBeInstanceOf(SegkitUsageError);
          expect((error as Error).message).toBe(message);
        };
        // Ignored, `segmentStrid` would run as packed rows and write a wrong result.
        await usage(() => untyped.plan({ ...args, segmentStrid: segmentStride }, e), "args: unknown field 'segmentStrid' (did you mean 'segmentStride'?)");
        await usage(() => untyped.select({ ...args, segmentStrides: segmentStride }, e), "select args: unknown field 'segmentStrides' (did you mean 'segmentStride'?)");
        const { numSegments, ...withoutNumSegments } = keysOnly;
        await usage(() => untyped.plan({ ...withoutNumSegments, selectDirection, segmentStride }, e), "args: missing required field 'numSegments'");
        await usage(() => untyped.plan({ ...args, numSegments: undefined, segmentStride }, e), "args: missing required field 'numSegments'");
        // The shorthands replace selectDirection, and the keys-only ones would drop the values.
        await usage(
          () => untyped.maxKeys({ ...keysOnly, valuesOut }, e),
          "maxKeys args: unknown field 'valuesOut'; the fields are 'keysIn', 'keysOut', 'segmentSizes', 'segmentStride', 'k', 'numSegments', 'totalNumItems', 'weights', 'weightsOut'",
        );
        await usage(
          () => untyped.maxPairs({ ...args, valuesIn, valuesOut }, e),
          "maxPairs args: unknown field 'selectDirection'; the fields are 'keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'k', 'numSegments', 'totalNumItems', 'weights', 'weightsOut'",
        );
        await usage(() => untyped.maxPairs({ ...keysOnly, valuesIn }, e), "maxPairs args: missing required field 'valuesOut'");
        // In env, at every level, and the algorithm's tuning.policy when planning.
        const untypedEnv = env as unknown as (options: unknown) => unknown;
        await usage(() => untypedEnv({ backnd: backend }), "env: unknown field 'backnd' (did you mean 'backend'?)");
        await usage(() => untypedEnv({ backend, requirements: { outputOrder: 'unsorted' } }), "env.requirements: unknown field 'outputOrder' (did you mean 'outputOrdering'?)");
        await usage(() => untypedEnv({ backend, guarantees: { maxk: 4 } }), "env.guarantees: unknown field 'maxk' (did you mean 'maxK'?)");
        await usage(() => untypedEnv({ backend, tuning: { varient: 'reduce' } }), "env.tuning: unknown field 'varient' (did you mean 'variant'?)");
        await usage(
          () => untyped.plan({ ...args, segmentStride }, env({ backend, tuning: { policy: { tileItem: 1024 } } })),
          "env.tuning.policy: unknown field 'tileItem' (did you mean 'tileItems'?)",
        );
        await usage(
          () => untyped.plan({ ...args, segmentStride }, env({ backend, tuning: { policy: { radixCompactPastTile: 'yes' } } })),
          'tuning.policy.radixCompactPastTile: yes is not a boolean',
        );
        await expectUntouched(built);
        // Spelled right, the same call runs the strided rows.
        const { keys } = await runCase(backend, built);
        expect(keys.subarray(0, c.sizes.length * built.kMax)).toEqual(built.expected.keys.subarray(0, c.sizes.length * built.kMax));
        for (const a of built.owned) a.destroy();
      });
      it('a forced variant that cannot run says why', async () => {
        const c = makeCase({ name: 'forced', sizes: [5000], k: 64, seed: 113 });
        const built = buildCase(backend, c);
        await expect(runCase(backend, built, { variant: 'reduce' })).rejects.toThrow("tuning.variant: 'reduce' cannot run for these parameters: kMax 64 > reduceMaxK 8");
        await expectUntouched(built);
        for (const a of built.owned) a.destroy();
      });
    });
  });
}

/** f32 keys of few distinct values (-2..2: heavy ties) with NaNs, -0 and +0, infinities and subnormals among them. */
function tiesAndSpecials(c: TopKCase, seed: number): TopKCase {
  const random = rng(seed);
  const ties = [-2, -1, 0, 1, 2].map(bitsOf);
  const keys = Uint32Array.from(c.keys, (): number => (random() < 0.3 ? specialF32Bits[Math.floor(random() * specialF32Bits.length)]! : ties[Math.floor(random() * ties.length)]!));
  return { ...c, keys };
}

/**
 * Sorted output past a tile through the segmented sort's merge (problem.ts chooseSelectionSort): the
 * natural choice on a backend of many workgroup slots (a GPU, or the CPU emulator given one's
 * capabilities), forced by `selectionSortVariant: 'merge'` elsewhere (the CPU emulator's own
 * capabilities, lavapipe); bit for bit with the reference, as the radix selection sort is. A
 * selection of one merge tile is sorted in place by the block launch; longer ones go through the
 * passes. `backendOf` gives the backend (called inside each test).
 */
export function defineSelectionMergeConformance(backendOf: () => Backend, options: ConformanceOptions = {}): void {
  describe("sorted output past a tile, through the segmented sort's merge", () => {
    /** Runs `c` (radix-select forced where given) with the merge selection sort; checks that it ran wherever the selection can exceed the tile. */
    async function expectMerge(c: TopKCase, variant?: TopKVariant, policy: Partial<TopKPolicy> = {}): Promise<TopKPlan> {
      const backend = backendOf();
      const manySlots = backend.capabilities.parallelism >= rowRadixMinParallelism;
      const built = buildCase(backend, c);
      try {
        const { plan, keys, values } = await runCase(backend, built, { variant, policy: { ...(manySlots ? {} : { selectionSortVariant: 'merge' }), ...policy } });
        const label = `${c.name}: ${plan.variant} ${JSON.stringify(policy)}`;
        const n = c.sizes.length * built.kMax;
        expect(keys.subarray(0, n), `${label}: keys`).toEqual(built.expected.keys.subarray(0, n));
        if (values !== undefined) expect(values.subarray(0, n), `${label}: values`).toEqual(built.expected.values.subarray(0, n));
        const pastTile = Math.min(built.kMax, Math.max(...c.sizes)) > topKPolicyFor(backend.capabilities).tileItems;
        const sortedBy = plan.launches.filter((l) => l.name.startsWith('topk/sort-selection/')).map((l) => l.kernel);
        if (policy.selectionSortVariant === 'radix') expect(sortedBy.every((kernel) => !kernel.startsWith('sort-merge')), label).toBe(true);
        else expect(sortedBy.includes('sort-merge-blocks'), `${label}: a merge selection sort`).toBe(pastTile);
        return plan;
      } finally {
        for (const a of built.owned) a.destroy();
      }
    }

    it('k = 4096, 9000 and 10000 sorted, both directions, heavy ties, NaN, -0 and +0 (where pipelines compile quickly, the radix selection sort too: the same bits)', async () => {
      const sizes = [10_000, 12_000, 3000, 0];
      const directions: ('max' | 'min')[] = ['max', 'min', 'max', 'min'];
      // A uniform k: the three share their pipelines (lavapipe compiles each through LLVM); the radix
      // selection sort's comparison where pipelines compile quickly.
      for (const k of [4096, 9000, 10_000]) {
        const c = tiesAndSpecials(makeCase({ name: `merge-sorted-k${k}`, sizes, k, directions, seed: 131 + k }), 137 + k);
        await expectMerge(c);
        if (options.compilesSlowly !== true) {
          await expectMerge(c, 'radix-select');
          await expectMerge(c, 'radix-select', { selectionSortVariant: 'radix' });
        }
      }
      if (options.compilesSlowly !== true) await expectMerge(makeCase({ name: 'merge-sorted-k9000-random', flavour: 'random', sizes, k: 9000, directions: 'min', seed: 139 }));
    }, 900_000);

    it('per-segment k, segments shorter than k, selections of one merge tile (in place) and of a tile and one; payloads, keys only, indices', async () => {
      const policy = topKPolicyFor(backendOf().capabilities);
      const longest = 2 * policy.tileItems + 3;
      // The merge's tile for this geometry (five selections of at most `longest` keys).
      const { tile } = selectionMergeLayout({ maxSegments: 5, maxSegmentSize: longest }, policy);
      const sizes = [tile, tile + 1, 7, longest, 300];
      const k = [tile, tile + 1, 9, longest, 100];
      const directions: ('max' | 'min')[] = ['min', 'max', 'max', 'min', 'max'];
      const shape = { sizes, k, kBound: longest, directions };
      await expectMerge(makeCase({ name: 'merge-tile-edges-payload', keyType: 'u32', flavour: 'ties', values: 'payload', ...shape, seed: 149 }), 'radix-select');
      if (options.compilesSlowly === true) return;
      await expectMerge(tiesAndSpecials(makeCase({ name: 'merge-tile-edges-indices-f32', values: 'indices-f32', ...shape, seed: 151 }), 157), 'radix-select');
      await expectMerge(makeCase({ name: 'merge-tile-edges-keys-only', keyType: 'i32', flavour: 'special', values: 'none', ...shape, stride: longest + 5, seed: 163 }), 'radix-select');
      // Row-radix's selection goes through the same sort.
      await expectMerge(tiesAndSpecials(makeCase({ name: 'merge-tile-edges-row-radix', ...shape, seed: 167 }), 173), 'row-radix');
    }, 900_000);
  });
}
