import { expect } from 'vitest';
import { type Backend, SegkitUsageError, cpuBackend, referenceTopK } from '../src/index.js';

/** The error `fn` throws; fails the test when it throws none. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** Asserts a SegkitUsageError (a TypeError) with exactly `message`. */
export function expectUsageError(error: unknown, message: string): void {
  expect(error).toBeInstanceOf(SegkitUsageError);
  expect(error).toBeInstanceOf(TypeError);
  expect((error as Error).name).toBe('SegkitUsageError');
  expect((error as Error).message).toBe(message);
}

/**
 * referenceTopK over `rows` packed rows of `cols` f32 keys each, with one k per row (or one for every
 * row) and one direction; indices as values.
 */
export function referenceOfRows(keys: Float32Array, rows: number, cols: number, k: number | readonly number[], direction: 'max' | 'min', kMax: number) {
  return referenceTopK({
    keyType: 'f32',
    keys: new Uint32Array(keys.buffer, keys.byteOffset, keys.length),
    segmentStarts: Array.from({ length: rows }, (_, i) => i * cols),
    segmentSizes: Array.from({ length: rows }, () => cols),
    k: typeof k === 'number' ? Array.from({ length: rows }, () => k) : k,
    directions: Array.from({ length: rows }, () => direction),
    kMax,
    withValues: true,
  });
}

export { rng } from './rng.js';

/** The CPU backends the SIMD tests compare: SIMD on the calling thread, SIMD on a worker (reading heap slabs in place), and the scalar loops. */
export function simdComparisonBackends(): [string, Backend][] {
  return [
    ['SIMD', cpuBackend({ workers: 0 })],
    ['SIMD, a worker', cpuBackend({ workers: 1, parallelThreshold: 1 })],
    ['scalar', cpuBackend({ workers: 0, simd: false })],
  ];
}
