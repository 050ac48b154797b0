/**
 * What the browser page's per-algorithm subsets share (bundled into the page; no vitest here): the
 * shape of an outcome the test asserts on, outputs as plain words, and the run of a bad-input case
 * whose violation is found on the device.
 */
import { type Backend, type DeviceArray, GuaranteeViolationError } from '../../dist/index.js';
import { bits } from '../conformance/common.js';

/** One output of a case: the words the device wrote and the reference's. */
export interface ComparedOutput {
  label: string;
  got: number[];
  expected: number[];
}

/** One case run on one variant. */
export interface SubsetCase {
  name: string;
  /** The variant the plan ran (forced or chosen). */
  variant: string;
  /** The variant forced through `tuning`, or undefined for the natural choice. */
  forced: string | undefined;
  outputs: ComparedOutput[];
  ms: number;
}

/** A bad-input case: where its error surfaced and whether every output kept its words. */
export interface SubsetViolation {
  /** `${name}: ${message}`, or 'no error'. */
  error: string;
  parameter: string | undefined;
  segment: number | undefined;
  /** 'run' when plan() or run() threw, 'synchronize' when `backend.synchronize()` rejected, 'nowhere'. */
  surfacedAt: 'run' | 'synchronize' | 'nowhere';
  /** Per output: every word as it was before the call. */
  untouched: boolean[];
}

/** What one algorithm's subset returns to the test. */
export interface SubsetOutcome {
  algorithm: string;
  /** The package's variant list for the algorithm, to check that every one ran. */
  variants: string[];
  cases: SubsetCase[];
  violation: SubsetViolation;
  /** Pipelines compiled by the subset (SwiftShader takes ~0.5 s each). */
  compiled: number;
  ms: number;
}

/** A typed array's words as plain numbers (what `page.evaluate` can carry). */
export const wordsOf = (a: Uint32Array) => Array.from(a);

/** An output compared over its first `length` words (all when omitted). */
export function compared(label: string, got: Uint32Array, expected: Uint32Array, length = expected.length): ComparedOutput {
  return { label, got: wordsOf(got.subarray(0, length)), expected: wordsOf(expected.subarray(0, length)) };
}

/**
 * Runs `start` (plan and run a call with a device-only value outside its guarantees under
 * 'validate'): the violation is expected at the next `backend.synchronize()`, not at run time.
 * Then downloads each output and compares it with its words before the call.
 */
export async function violationOf(backend: Backend, start: () => Promise<void>, outputs: { array: DeviceArray; before: Uint32Array }[]): Promise<SubsetViolation> {
  let error: unknown;
  let surfacedAt: SubsetViolation['surfacedAt'] = 'nowhere';
  try {
    await start();
  } catch (e) {
    error = e;
    surfacedAt = 'run';
  }
  if (error === undefined) {
    try {
      await backend.synchronize();
    } catch (e) {
      error = e;
      surfacedAt = 'synchronize';
    }
  }
  const untouched: boolean[] = [];
  for (const { array, before } of outputs) {
    const got = bits(await backend.download(array));
    untouched.push(got.length === before.length && got.every((word, i) => word === before[i]));
  }
  const violation = error instanceof GuaranteeViolationError ? error : undefined;
  return {
    error: error === undefined ? 'no error' : error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    parameter: violation?.parameter,
    segment: violation?.segment,
    surfacedAt,
    untouched,
  };
}

/** Runs `body` on a fresh WebGPU backend, timing it and counting the pipelines it compiled. */
export async function onBackend(
  algorithm: string,
  variants: readonly string[],
  makeBackend: () => Promise<Backend>,
  body: (backend: Backend) => Promise<{ cases: SubsetCase[]; violation: SubsetViolation }>,
): Promise<SubsetOutcome> {
  const started = performance.now();
  const backend = await makeBackend();
  try {
    const { cases, violation } = await body(backend);
    return { algorithm, variants: [...variants], cases, violation, compiled: backend.stats().kernelsCompiled, ms: performance.now() - started };
  } finally {
    backend.destroy();
  }
}
