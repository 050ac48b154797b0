import { describe, expect, it } from 'vitest';
import { type BatchedCopyVariant, batchedCopyPolicyLimits, cpuBackend, selectBatchedCopyVariant } from '../src/index.js';
import { sourceEntry, typeErrors } from './type-assertions.js';

/*
 * BatchedCopyVariantsFor<Args> must be a sound over-approximation of plan.reachableVariants on every
 * built-in backend. For a grid of static size bounds, the runtime selector is sampled over capability
 * classes and host bounds inside the static ones; a generated file then asserts, through the
 * compiler, that each variant seen is in the type.
 */

const sizeBounds: [number, number][] = [
  [0, 0], [0, 1024], [1024, 1024], [1025, 1025], [0, 4096], [1000, 16384], [16384, 16385], [16385, 16385], [20000, 1000000], [0, 4294967295], [2000, 4294967295],
];
const capabilityClasses = [{ maxWorkgroupSize: 256 }, { maxWorkgroupSize: 1024 }, { maxWorkgroupSize: 64 }, { maxWorkgroupSize: 16 }];

function samples([min, max]: [number, number]): number[] {
  const edges = [1024, 1025, 16384, 16385];
  return [...new Set([min, max, Math.floor((min + max) / 2), Math.min(max, min + 1), ...edges.map((e) => Math.max(min, Math.min(max, e)))])];
}

function runtimeReachable(size: [number, number]): Set<BatchedCopyVariant> {
  const seen = new Set<BatchedCopyVariant>();
  for (const capabilities of capabilityClasses) {
    const backend = cpuBackend({ capabilities, workers: 0 });
    for (const hostMax of samples(size)) {
      for (const hostMin of samples([size[0], hostMax])) {
        const selection = selectBatchedCopyVariant({ bufferSize: { min: hostMin, max: hostMax } }, backend.capabilities);
        seen.add(selection.variant);
        for (const v of selection.reachable) seen.add(v);
      }
    }
    backend.destroy();
  }
  return seen;
}

describe('BatchedCopyVariantsFor over a grid of static bounds', () => {
  it('contains every variant the runtime selector reaches', () => {
    const lines = [`import type { BatchedCopyVariantsFor, PerSegmentParam } from '${sourceEntry}';`];
    let count = 0;
    for (const size of sizeBounds) {
      const reachable = runtimeReachable(size);
      expect(reachable.size).toBeGreaterThan(0);
      for (const variant of reachable) lines.push(`export const v${count++}: BatchedCopyVariantsFor<{ sizes: PerSegmentParam<${size[0]}, ${size[1]}> }> = '${variant}';`);
    }
    expect(typeErrors(lines.join('\n'))).toEqual([]);
    expect(count).toBeGreaterThan(sizeBounds.length);
  }, 120_000);

  it('prunes at compile time what no policy can pick, as the runtime does', () => {
    expect([...runtimeReachable([0, 1024])]).toEqual(['team']);
    expect([...runtimeReachable([1025, 16384])]).toEqual(['workgroup']);
    expect([...runtimeReachable([20000, 1000000])]).toEqual(['chunked']);
    // The type's literal thresholds are the policy's.
    expect(batchedCopyPolicyLimits).toMatchObject({ teamMaxItems: 1024, workgroupMaxItems: 16384 });
  });
});
