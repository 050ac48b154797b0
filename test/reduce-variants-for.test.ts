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
