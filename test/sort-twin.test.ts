/**
 * The sort's CPU and WGSL twins compared launch by launch (as test/twin.test.ts does for top-k): one
 * plan per backend on the same inputs (the CPU given the WebGPU device's capabilities, so both plans
 * have the same launches), run one launch further every time, and after each launch the slots the
 * kernel table says every backend writes identically are compared word for word.
 *
 * No adapter: in CI (process.env.CI set) that is a failure; elsewhere the file is skipped and says why.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { segmentedSortKernels } from '../src/algorithms/segmented-sort/problem.js';
import type { Plan } from '../src/dispatch/plan.js';
import { type Backend, type DeviceArray, DeviceSegmentedSort, type SegmentedSortVariant, cpuBackend, env, p, webgpuBackend } from '../src/index.js';
import { rng } from './helpers.js';
import { compareLaunchByLaunch, identicalSlotsOf } from './twin-slots.js';
import { describeOnWebGpu } from './webgpu-adapter.js';

// Lavapipe compiles a pipeline through LLVM at its first dispatch: a large kernel takes 10-15 s on a
// 2-core machine whose Mesa shader cache is cold, and a case that meets several new ones minutes.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 60_000 });

const describeTwins = await describeOnWebGpu("the sort's launch-by-launch twin test");

const identicalSlots = identicalSlotsOf(segmentedSortKernels);

interface TwinCase {
  readonly name: string;
  readonly sizes: readonly number[];
  readonly variant?: SegmentedSortVariant;
  readonly policy?: Record<string, number>;
  /** Integers in [0, 200], no NaN: the two low bytes of every sort key are equal, so those passes copy. */
  readonly integerKeys?: boolean;
  /** The plan takes the segments largest first (its segment-offsets launch writes their order by size). */
  readonly sizeOrder?: boolean;
}

const cases: TwinCase[] = [
  { name: 'radix over packed per-segment sizes, small tiles, segments in groups', sizes: [5000, 0, 3000, 7000, 1, 2500], variant: 'radix', policy: { radixTileItems: 700, radixMaxTiles: 16 } },
  { name: 'single-tile and radix side by side (the natural plan)', sizes: [300, 9000, 0, 77, 4100] },
  // 79 tiles: the scan splits each digit's tile counts over 64 invocations (radixScanTilesPerThread 2 counts each).
  { name: 'radix over many tiles per segment (each digit scanned by several invocations)', sizes: [20000, 3, 9000, 0], variant: 'radix', policy: { radixTileItems: 256 } },
  // 79 tiles a segment with no scan launch: each scatter workgroup adds up the counts of every tile.
  { name: 'radix over many tiles per segment, the scan in the scatter', sizes: [20000, 3, 9000, 0], variant: 'radix', policy: { radixTileItems: 256, radixScanLaunchMinTiles: 100 } },
  { name: 'radix over few tiles per segment with a scan launch (radixScanLaunchMinTiles 1)', sizes: [5000, 0, 3000, 7000, 1, 2500], variant: 'radix', policy: { radixTileItems: 700, radixScanLaunchMinTiles: 1 } },
  // 4 digit totals per invocation in the scatter's scan; rank tiles of 1024 keys, 16 per invocation.
  { name: 'radix with 64-invocation workgroups', sizes: [5000, 1200, 1100], variant: 'radix', policy: { workgroupSize: 64, tileItems: 1024, radixTileItems: 3000 } },
  // The radix kernels' loads (radixLoads) leave the same slots: values gathered at the write, carried without loading ahead.
  { name: 'radix, keys and values loaded ahead of the ranking (radixLoads 3)', sizes: [5000, 0, 3000, 7000, 1, 2500], variant: 'radix', policy: { radixTileItems: 700, radixLoads: 3 } },
  { name: 'radix, values carried, keys loaded as ranked (radixLoads 2)', sizes: [5000, 0, 3000, 7000, 1, 2500], variant: 'radix', policy: { radixTileItems: 700, radixLoads: 2 } },
  // 6 x ceil(7000 / 1400) = 30 tiles of 1400 items leave the 8 wanted, and 18 of 2800 too: tiles of 2800 (four times 700, the most).
  { name: 'radix tiles lengthened while the batch keeps radixMinTiles', sizes: [5000, 0, 3000, 7000, 1, 2500], variant: 'radix', policy: { radixTileItems: 700, radixMinTiles: 8 } },
  { name: 'radix over keys whose low digits are all equal (those passes copy)', sizes: [6000, 4500], variant: 'radix', policy: { radixTileItems: 1000 }, integerKeys: true },
  { name: 'workgroup-radix beside single-tile (the natural plan for a few segments of at most 8192 keys)', sizes: [300, 8000, 0, 77, 4100, 1] },
  // Low digits all equal: passes 0 and 1 skip, so pass 2 writes buffer 0 and pass 3 the outputs.
  { name: 'workgroup-radix skipping constant digits, rank tiles of 128 keys', sizes: [6000, 4500, 1, 0], variant: 'workgroup-radix', policy: { workgroupSize: 64, workgroupRadixItemsPerInvocation: 2 }, integerKeys: true },
  { name: 'workgroup-radix over every digit', sizes: [5000, 1200, 3], variant: 'workgroup-radix' },
  // segment-offsets writes the segments by size class after the starts; each workgroup takes its place's segment.
  {
    name: 'single-tile taking the segments largest first (the size order), several segments a workgroup',
    sizes: [3, 2000, 0, 65, 64, 1, 513, 1024, 129, 7, 2048, 300, 31, 32, 33, 1500, 2, 900, 17, 255, 256, 257, 4096, 600],
    policy: { sizeOrderMinSegments: 2 },
    sizeOrder: true,
  },
  { name: 'workgroup-radix beside single-tile, largest first', sizes: [300, 8000, 0, 77, 4100, 1, 6000, 12, 5000], policy: { sizeOrderMinSegments: 1 }, sizeOrder: true },
  // More segments than the prologue's invocations (several a run), then more than one chunk of runs.
  { name: 'single-tile by size over 700 segments (runs of 3 sizes in the size order)', sizes: Array.from({ length: 700 }, (_, i) => (i * 7919) % 301), policy: { sizeOrderMinSegments: 256 }, sizeOrder: true },
  { name: 'single-tile by size over 5000 segments (chunks of runs in the size order)', sizes: Array.from({ length: 5000 }, (_, i) => (i * 104729) % 67), policy: { sizeOrderMinSegments: 256, sizeOrderSegmentsPerWorkgroup: 64 }, sizeOrder: true },
  // Runs of 256 keys: five passes for the longest segment, the others leaving after their own last.
  { name: 'merge beside single-tile, runs of 256 keys (segments leave after their last pass)', sizes: [5000, 0, 257, 77, 1024, 3000, 1], policy: { workgroupSize: 64, tileItems: 256, mergeMaxSegmentItems: 65536 } },
  { name: 'merge forced over segments within one tile (the block launch writes the outputs)', sizes: [300, 0, 77, 1], variant: 'merge' },
  { name: 'merge with ties over many runs', sizes: [9000, 4097, 8192], variant: 'merge', policy: { workgroupSize: 64, tileItems: 512 }, integerKeys: true },
];

describeTwins('sort: CPU and WGSL twins, launch by launch', () => {
  let gpu: Backend;
  let cpu: Backend;
  beforeAll(async () => {
    gpu = await webgpuBackend();
    cpu = cpuBackend({ capabilities: gpu.capabilities, workers: 0 });
  });
  afterAll(() => {
    gpu?.destroy();
    cpu?.destroy();
  });

  for (const c of cases) {
    it(c.name, async () => {
      const random = rng(c.sizes.length * 7919);
      const total = c.sizes.reduce((a, b) => a + b, 0);
      const keys = Float32Array.from({ length: total }, () => (c.integerKeys ? Math.round(random() * 200) : random() < 0.05 ? NaN : Math.round(random() * 200) - 100));
      const n = c.sizes.length;
      const planOn = (backend: Backend) => {
        const keysIn = backend.upload(keys);
        const keysOut = backend.alloc('f32', total);
        const valuesOut = backend.alloc('u32', total);
        const orders = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 'ascending' : 'descending'));
        const plan = DeviceSegmentedSort.plan(
          { keysIn, keysOut, valuesOut, segmentSizes: p.perSegment([...c.sizes], { min: 0, max: total }), order: p.perSegmentOption(orders, ['ascending', 'descending']), numSegments: p.uniform(n) },
          env({ backend, tuning: { ...(c.variant ? { variant: c.variant } : {}), ...(c.policy ? { policy: c.policy } : {}) } }),
        ) as Plan;
        return { plan, owned: [keysIn, keysOut, valuesOut] as DeviceArray[] };
      };
      const onGpu = planOn(gpu);
      const onCpu = planOn(cpu);
      try {
        expect(onCpu.plan.launches.map((l) => `${l.name} x${l.grid}`)).toEqual(onGpu.plan.launches.map((l) => `${l.name} x${l.grid}`));
        expect(onGpu.plan.launches.some((l) => l.purpose.includes('in order of size'))).toBe(c.sizeOrder === true);
        const compared = await compareLaunchByLaunch({ plan: onGpu.plan, backend: gpu }, { plan: onCpu.plan, backend: cpu }, identicalSlots);
        expect(compared).toBeGreaterThan(0);
      } finally {
        for (const side of [onGpu, onCpu]) {
          side.plan.destroy();
          for (const a of side.owned) a.destroy();
        }
      }
    });
  }
});
