import { describe, expect, it } from 'vitest';
import { type ScanVariant, cpuBackend, selectScanVariant } from '../src/index.js';
import { sourceEntry, typeErrors } from './type-assertions.js';

/*
 * ScanVariantsFor<Args> must be a sound over-approximation of plan.reachableVariants on every
 * built-in backend. For a grid of static size bounds, the runtime selector is sampled over
 * capability classes (parallelism 1 .. 1024, workgroup sizes) and over runtime bounds and segment
 * counts inside them; a generated file then asserts, through the compiler, that each variant seen is
 * in the type.
 */

const sizeBounds: [number, number][] = [[0, 0], [0, 16], [8, 8], [16, 16], [17, 17], [0, 4096], [17, 4096], [4096, 4096], [4097, 4097], [4097, 100000], [0, 4294967295], [1000000, 4294967295]];
const capabilityClasses = [
  { parallelism: 1 },
  { parallelism: 3 },
  { parallelism: 132 * 8 },
  { parallelism: 64, maxWorkgroupSize: 128 },
];

function samples([min, max]: [number, number]): number[] {
  return [...new Set([min, max, Math.floor((min + max) / 2), Math.min(max, min + 1), Math.max(min, 16), Math.max(min, 17), Math.max(min, 4096), Math.max(min, 4097)])].filter((v) => v >= min && v <= max);
}

function runtimeReachable(size: [number, number]): Set<ScanVariant> {
  const seen = new Set<ScanVariant>();
  for (const capabilities of capabilityClasses) {
    const backend = cpuBackend({ workers: 0, capabilities });
    for (const sizeMax of samples(size)) {
      for (const sizeMin of [size[0], sizeMax]) {
        for (const maxSegments of [0, 1, 2, 100, 1e6]) {
          const selection = selectScanVariant({ segmentSize: { min: sizeMin, max: sizeMax }, maxSegments }, backend.capabilities);
          seen.add(selection.variant);
          for (const v of selection.reachable) seen.add(v);
        }
      }
    }
    backend.destroy();
  }
  return seen;
}

describe('ScanVariantsFor over a grid of static bounds', () => {
  it('contains every variant the runtime selector reaches', () => {
    const lines = [`import type { ScanVariantsFor, PerSegmentParam } from '${sourceEntry}';`];
    let count = 0;
    for (const size of sizeBounds) {
      const reachable = runtimeReachable(size);
      expect(reachable.size).toBeGreaterThan(0);
      for (const variant of reachable) lines.push(`export const v${count++}: ScanVariantsFor<{ segmentSizes: PerSegmentParam<${size[0]}, ${size[1]}> }> = '${variant}';`);
    }
    expect(typeErrors(lines.join('\n'))).toEqual([]);
    expect(count).toBeGreaterThan(sizeBounds.length);
  }, 240_000);

  it('prunes at compile time what no policy can pick', () => {
    // Sizes within threadMaxItems only ever run 'thread'; sizes within workgroupMaxItems never split a segment.
    expect([...runtimeReachable([0, 16])]).toEqual(['thread']);
    expect(runtimeReachable([17, 4096]).has('multi-workgroup')).toBe(false);
    expect(runtimeReachable([17, 4096]).has('thread')).toBe(false);
    expect(runtimeReachable([4097, 100000])).toEqual(new Set(['workgroup', 'multi-workgroup']));
  });
});
