import { describe, expect, it } from 'vitest';
import { type SegmentedSortVariant, cpuBackend, selectSegmentedSortVariant } from '../src/index.js';
import { sourceEntry, typeErrors } from './type-assertions.js';

/*
 * SegmentedSortVariantsFor<Args> must be a sound over-approximation of plan.reachableVariants on every
 * built-in backend: for a grid of static size bounds, the runtime selector is sampled over capability
 * classes (16, 32, 48, 64 KiB of workgroup memory; the CPU's few workgroup slots and a GPU's 1024) and
 * sizes inside the bounds; a generated file then
 * asserts, through the compiler, that each variant seen is in the type.
 */

const sizeBounds: [number, number][] = [[0, 64], [0, 1024], [1024, 1024], [1025, 4096], [4096, 4096], [4097, 8192], [512, 100000], [65537, 100000], [0, 4294967295]];
const storageClasses = [16384, 32768, 49152, 65536];
/** Workgroup slots: the CPU emulator's (its threads) and a GPU's (merge is picked only with many). */
const parallelisms = [2, 1024];
/** Host bounds on the number of segments: below, at and past workgroupRadixMinSegments. */
const segmentCounts = [1, 64, 80, 128, 100000];

function samples([min, max]: [number, number]): number[] {
  return [...new Set([min, max, Math.floor((min + max) / 2), Math.min(max, min + 1), Math.max(min, 1024), Math.max(min, 2048), Math.max(min, 4096), Math.max(min, 4097), Math.max(min, 65536), Math.max(min, 65537)])].filter(
    (v) => v >= min && v <= max,
  );
}

function runtimeReachable(size: [number, number]): Set<SegmentedSortVariant> {
  const seen = new Set<SegmentedSortVariant>();
  for (const workgroupStorageBytes of storageClasses) {
    for (const parallelism of parallelisms) {
      const { capabilities } = cpuBackend({ capabilities: { workgroupStorageBytes, parallelism }, workers: 0 });
      for (const sizeMax of samples(size)) {
        for (const sizeMin of [size[0], sizeMax]) {
          for (const segments of segmentCounts) {
            const selection = selectSegmentedSortVariant({ segmentSize: { min: sizeMin, max: sizeMax }, segments }, capabilities);
            seen.add(selection.variant);
            for (const v of selection.reachable) seen.add(v);
          }
        }
      }
    }
  }
  return seen;
}

describe('SegmentedSortVariantsFor over a grid of static bounds', () => {
  it('contains every variant the runtime selector reaches', () => {
    const lines = [`import type { SegmentedSortVariantsFor, PerSegmentParam } from '${sourceEntry}';`];
    let count = 0;
    for (const size of sizeBounds) {
      for (const variant of runtimeReachable(size)) lines.push(`export const v${count++}: SegmentedSortVariantsFor<{ segmentSizes: PerSegmentParam<${size[0]}, ${size[1]}> }> = '${variant}';`);
    }
    expect(typeErrors(lines.join('\n'))).toEqual([]);
    expect(count).toBeGreaterThanOrEqual(sizeBounds.length);
  }, 180_000);

  it('prunes at compile time what no policy can pick', () => {
    expect([...runtimeReachable([0, 64])]).toEqual(['single-tile']);
    // Past the tile: merge up to mergeMaxSegmentItems where the backend has many workgroup slots.
    expect([...runtimeReachable([4097, 8192])].sort()).toEqual(['merge', 'radix', 'workgroup-radix']);
    // Past mergeMaxSegmentItems: workgroup-radix where its workgroup memory fits (not in 16 KiB), radix where it does not or the segments are few and long.
    expect([...runtimeReachable([100000, 100000])].sort()).toEqual(['radix', 'workgroup-radix']);
  });
});
