import { describe, expect, it } from 'vitest';
import { type SegmentedReduceVariant, cpuBackend, segmentedReducePolicyLimits, selectSegmentedReduceVariant } from '../src/index.js';
import { sourceEntry, typeErrors } from './type-assertions.js';

/*
 * SegmentedReduceVariantsFor<Args> must be a sound over-approximation of plan.reachableVariants on
 * every built-in backend. For a grid of static size bounds, the runtime selector is sampled over
 * capability classes and over host bounds inside the static ones (with and without device-only
 * bounds); a generated file then asserts, through the compiler, that each variant seen is in the type.
 */

const sizeBounds: [number, number][] = [
  [0, 0], [0, 16], [16, 16], [17, 17], [0, 64], [8, 2048], [2048, 2049], [2049, 4096], [0, 8192], [8193, 32768], [32768, 32768], [32769, 32769],
  [20000, 40000], [40000, 1000000], [0, 4294967295], [100, 4294967295],
];
const capabilityClasses = [
  { maxWorkgroupSize: 256, subgroupSize: 32 },
  { maxWorkgroupSize: 256, subgroupSize: undefined },
  { maxWorkgroupSize: 1024, subgroupSize: 64 },
  { maxWorkgroupSize: 64, subgroupSize: 8 },
];

function samples([min, max]: [number, number]): number[] {
  const edges = [16, 17, 2048, 2049, 8192, 8193, 32768, 32769];
  return [...new Set([min, max, Math.floor((min + max) / 2), Math.min(max, min + 1), ...edges.map((e) => Math.max(min, Math.min(max, e)))])];
}

function runtimeReachable(size: [number, number]): Set<SegmentedReduceVariant> {
  const seen = new Set<SegmentedReduceVariant>();
  for (const capabilities of capabilityClasses) {
    const backend = cpuBackend({ capabilities, workers: 0 });
    for (const hostMax of samples(size)) {
      for (const hostMin of samples([size[0], hostMax])) {
        for (const deviceBounds of [false, true]) {
          const selection = selectSegmentedReduceVariant({ segmentSize: { min: hostMin, max: hostMax }, segmentSizeDeviceBounds: deviceBounds }, backend.capabilities);
          seen.add(selection.variant);
          for (const v of selection.reachable) seen.add(v);
        }
      }
    }
    backend.destroy();
  }
  return seen;
}

describe('SegmentedReduceVariantsFor over a grid of static bounds', () => {
  it('contains every variant the runtime selector reaches', () => {
    const lines = [`import type { SegmentedReduceVariantsFor, PerSegmentParam } from '${sourceEntry}';`];
    let count = 0;
    for (const size of sizeBounds) {
      const reachable = runtimeReachable(size);
      expect(reachable.size).toBeGreaterThan(0);
      for (const variant of reachable) lines.push(`export const v${count++}: SegmentedReduceVariantsFor<{ segmentSizes: PerSegmentParam<${size[0]}, ${size[1]}> }> = '${variant}';`);
    }
    expect(typeErrors(lines.join('\n'))).toEqual([]);
    expect(count).toBeGreaterThan(sizeBounds.length);
  }, 300_000);

  it('prunes at compile time what no policy can pick, as the runtime does', () => {
    expect([...runtimeReachable([0, 16])]).toEqual(['thread']);
    expect([...runtimeReachable([17, 2048])]).toEqual(['subgroup']);
    expect([...runtimeReachable([17, 8192])]).toEqual(['subgroup']);
    expect([...runtimeReachable([8193, 32768])]).toEqual(['workgroup']);
    expect([...runtimeReachable([40000, 1000000])]).toEqual(['multi-workgroup']);
    // The type's literal thresholds are the policy's.
    expect(segmentedReducePolicyLimits).toEqual({ threadMaxItems: 16, subgroupMaxItems: 8192, multiWorkgroupMinItems: 32768 });
  });
});

describe("the chunk teams' lengths: extremeChunkRounds 'auto' and chunkRounds", () => {
  const gpu = cpuBackend({ capabilities: { maxWorkgroupSize: 256, subgroupSize: 32, parallelism: 1024 }, workers: 0 });
  const select = (max: number, ops: readonly ('sum' | 'min' | 'max' | 'argMin' | 'argMax')[], policy = {}) =>
    selectSegmentedReduceVariant({ segmentSize: { min: 0, max }, segmentSizeDeviceBounds: false, ops }, gpu.capabilities, { policy });
  it('extremes alone: the most chunks a team that still leave the longest segment 256 partials, at most 8', () => {
    const chunk = 8192;
    for (const [items, rounds] of [
      [16 * 2 ** 20, 8],
      [64 * 2 ** 20, 8],
      [4 * 2 ** 20, 2],
      [4 * 2 ** 20 - chunk, 1],
      [2 * 2 ** 20, 1],
      [40_000, 1],
    ] as const) {
      const selection = select(items, ['max', 'argMin']);
      expect(selection.policy.chunkRounds, `${items} items`).toBe(rounds);
      // At least 256 teams (one partial each) where the segment has that many chunks; fewer than 512
      // (a merging invocation's block of at most 2) unless the strips are at their longest.
      const partials = Math.ceil(Math.ceil(items / chunk) / rounds);
      expect(partials, `${items} items: partials`).toBeGreaterThanOrEqual(Math.min(256, Math.ceil(items / chunk)));
      if (rounds < 8) expect(partials, `${items} items: partials`).toBeLessThan(512);
      // Extremes alone merge in the chunk launch on a GPU.
      expect(selection.policy.lastChunkMerges).toBe(true);
    }
    // A number is taken as it is; sums and plans that may meet a sum keep chunkRounds.
    expect(select(40_000, ['max'], { extremeChunkRounds: 4 }).policy.chunkRounds).toBe(4);
    expect(select(16 * 2 ** 20, ['sum']).policy.chunkRounds).toBe(1);
    expect(select(16 * 2 ** 20, ['sum'], { chunkRounds: 2 }).policy.chunkRounds).toBe(2);
    expect(select(16 * 2 ** 20, ['sum', 'max']).policy).toMatchObject({ chunkRounds: 1, lastChunkMerges: false });
    // The CPU emulator (few workgroup slots) merges in a launch of its own, strips or not.
    const cpu = cpuBackend({ workers: 0 });
    expect(selectSegmentedReduceVariant({ segmentSize: { min: 0, max: 16 * 2 ** 20 }, segmentSizeDeviceBounds: false, ops: ['max'] }, cpu.capabilities).policy).toMatchObject({ chunkRounds: 8, lastChunkMerges: false });
    cpu.destroy();
  });
});
