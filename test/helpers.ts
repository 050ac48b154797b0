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

export { rng } from './rng.js';
