import { describe, expect, it } from 'vitest';
import { type TopKVariant, selectTopKVariant } from '../src/index.js';
import { sourceEntry, typeErrors } from './type-assertions.js';
import { cpuBackend } from '../src/index.js';

/*
 * TopKVariantsFor<Args> must be a sound over-approximation of plan.reachableVariants on every
 * built-in backend. For a grid of static bounds, the runtime selector is sampled over capability
 * classes (16, 32, 48, 64 KiB of workgroup memory; few and many workgroup slots) and over runtime values inside the bounds; a
 * generated file then asserts, through the compiler, that each variant seen is in the type.
 */

const kBounds: [number, number][] = [[1, 1], [1, 4], [1, 8], [5, 5], [8, 8], [9, 9], [1, 64], [16, 64], [100, 2048], [1, 4294967295]];
const sizeBounds: [number, number][] = [[0, 64], [0, 1024], [1024, 1024], [1025, 4096], [4096, 4096], [4097, 8192], [512, 65535], [512, 100000], [65536, 65536], [0, 4294967295]];
const storageClasses = [16384, 32768, 49152, 65536];

function samples([min, max]: [number, number]): number[] {
  return [...new Set([min, max, Math.floor((min + max) / 2), Math.min(max, min + 1), Math.max(min, 1024), Math.max(min, 2048), Math.max(min, 4096), Math.max(min, 4097), Math.max(min, 65535), Math.max(min, 65536)])].filter((v) => v >= min && v <= max);
}

function runtimeReachable(k: [number, number], size: [number, number]): Set<TopKVariant> {
  const seen = new Set<TopKVariant>();
  // Workgroup memory classes, on a backend of few workgroup slots (the CPU emulator) and of many (a GPU).
  for (const [workgroupStorageBytes, parallelism] of storageClasses.flatMap((bytes) => [[bytes, 2], [bytes, 1024]] as const)) {
    const { capabilities } = cpuBackend({ capabilities: { workgroupStorageBytes, parallelism } });
    for (const kMax of samples(k)) {
      for (const sizeMax of samples(size)) {
        for (const sizeMin of [size[0], sizeMax]) {
          // Few segments (row-radix where rows allow it) and many (radix-select past rowRadixMaxTotalItems).
          for (const maxSegments of [1, 100_000]) {
            const selection = selectTopKVariant(
              { k: { min: k[0], max: kMax }, segmentSize: { min: sizeMin, max: sizeMax }, segmentSizeDeviceBounds: sizeMin < sizeMax, maxSegments },
              capabilities,
            );
            seen.add(selection.variant);
            for (const v of selection.reachable) seen.add(v);
          }
        }
      }
    }
  }
  return seen;
}

describe('TopKVariantsFor over a grid of static bounds', () => {
  it('contains every variant the runtime selector reaches', () => {
    const lines = [
      `import type { TopKVariantsFor, UniformParam, PerSegmentParam } from '${sourceEntry}';`,
    ];
    let count = 0;
    for (const k of kBounds) {
      for (const size of sizeBounds) {
        const reachable = runtimeReachable(k, size);
        expect(reachable.size).toBeGreaterThan(0);
        const args = `{ k: UniformParam<${k[0]}, ${k[1]}>; segmentSizes: PerSegmentParam<${size[0]}, ${size[1]}> }`;
        for (const variant of reachable) lines.push(`export const v${count++}: TopKVariantsFor<${args}> = '${variant}';`);
      }
    }
    expect(typeErrors(lines.join('\n'))).toEqual([]);
    expect(count).toBeGreaterThan(kBounds.length * sizeBounds.length);
  }, 180_000);

  it('prunes at compile time what no policy can pick', () => {
    // Checked by types-tests too; here the runtime agrees: k in [1, 4] only ever runs reduce, and so
    // does k in [1, 8] over rows of at most 65535 keys; longer rows of many keys take a radix select.
    for (const size of sizeBounds) expect([...runtimeReachable([1, 4], size)]).toEqual(['reduce']);
    for (const size of sizeBounds.filter(([, max]) => max <= 65535)) expect([...runtimeReachable([1, 8], size)]).toEqual(['reduce']);
    expect([...runtimeReachable([5, 5], [65536, 65536])].sort()).toEqual(['radix-select', 'reduce']);
    // k above 8 with segments beyond every tile only ever runs row-radix or radix-select.
    expect([...runtimeReachable([16, 64], [4097, 8192])].sort()).toEqual(['radix-select', 'row-radix']);
  });
});
