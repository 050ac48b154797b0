import { expect } from 'vitest';
import { SegkitUsageError } from '../src/index.js';

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

/** Deterministic PRNG (mulberry32) for test inputs. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
