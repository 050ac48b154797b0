import { type Backend, type DeviceArray, describe, isDeviceArray } from '../backends/backend.js';
import { cpuBackend } from '../backends/cpu/cpu-backend.js';
import { SegkitUsageError } from '../errors.js';
import type { Bounds } from '../params/param.js';

/**
 * What the caller requires of the results and of the checks. Each value other than the default
 * relaxes a promise, so a plan may take a faster path; `plan.explain()` says what each relaxation
 * changes in that plan, and the kernels it changes carry it in their names (`tie=any`, `order=any`).
 *
 * Whatever the requirements, a segment's results are a top-k: the same keys (as ordered keys, with
 * their multiplicity) as with the defaults; only which of the items tied with the last one taken,
 * and the order, may differ.
 *
 * @example
 * ```ts
 * // Any order, any of the tied items, and both may change between runs: radix-select's finalize
 * // neither sorts nor selects ties by index.
 * env({ requirements: { outputOrdering: 'unsorted', tieBreak: 'any', determinism: 'not-guaranteed' } });
 * ```
 */
export interface Requirements {
  /**
   * `'sorted'` lists a segment's results best first; `'unsorted'` allows any order (under
   * `'run-to-run'` the order still repeats: today it is index order for single-tile and radix-select
   * and best first for reduce, on every backend). Default `'sorted'`.
   */
  readonly outputOrdering: 'sorted' | 'unsorted';
  /**
   * Which items are taken among those whose key equals the last key taken: `'prefer-smaller-index'`
   * the smaller indices (and sorted output lists equal keys by index); `'any'` any of them. Under
   * `'run-to-run'` the choice must still repeat, which costs every current kernel what index order
   * costs, so results equal `'prefer-smaller-index'`; with `determinism: 'not-guaranteed'`
   * radix-select takes the tied items in the order its filter appended them. Default
   * `'prefer-smaller-index'`.
   */
  readonly tieBreak: 'prefer-smaller-index' | 'any';
  /**
   * `'run-to-run'`: the same inputs give the same outputs every run (and, with the other defaults,
   * on every backend and variant). `'not-guaranteed'`: what the other requirements leave open (the
   * order under `'unsorted'`, the tied items under `tieBreak: 'any'`) may change between runs, so
   * radix-select keeps what its parallel appends found instead of putting it in order. With
   * `'sorted'` and `'prefer-smaller-index'` nothing is left open and results repeat anyway.
   * Default `'run-to-run'`.
   */
  readonly determinism: 'run-to-run' | 'not-guaranteed';
  /**
   * `'validate'` checks device-only values on the device before anything is written; `'trust'`
   * skips the check and every transfer it needs. Default `'validate'`.
   */
  readonly guaranteeChecks: 'validate' | 'trust';
}

/** Guarantees given through the environment (the proposal's option 2). All optional. */
export interface Guarantees {
  /** No segment has more items than this. */
  readonly maxSegmentSize?: number;
  /** No segment has fewer items than this. */
  readonly minSegmentSize?: number;
  /** No segment asks for more than this many results. */
  readonly maxK?: number;
  /** There are at most this many segments. */
  readonly maxNumSegments?: number;
  /** All segments together have at most this many items. */
  readonly maxTotalNumItems?: number;
}

/** Overrides of the policy selector's choice. */
export interface Tuning<Variant extends string = string, Policy extends object = object> {
  /** Force this variant; an inapplicable one is an error that says why. */
  readonly variant?: Variant;
  /** Override policy values (tile size, workgroup size, ...). */
  readonly policy?: Partial<Policy>;
}

/** Options of {@link env}. */
export interface EnvOptions<G extends Guarantees = Guarantees> {
  /**
   * Where to run. Without it, each call runs on the backend that holds its DeviceArrays (they must
   * all be on one), and on one shared `cpuBackend()` only when it has none.
   */
  readonly backend?: Backend;
  /** Requirements to change from their defaults. */
  readonly requirements?: Partial<Requirements>;
  /** What the caller guarantees about every call in this environment. */
  readonly guarantees?: G;
  /** Overrides of the policy selector's choice. */
  readonly tuning?: Tuning;
}

/** An execution environment: where to run, what is required, what is guaranteed. */
export interface Env<G extends Guarantees = Guarantees> {
  /**
   * The backend given to {@link env}, or `undefined` when none was: each call then runs on the
   * backend that holds its DeviceArrays (a plan's `backend` says which).
   */
  readonly backend: Backend | undefined;
  /** Every requirement, defaults filled in. */
  readonly requirements: Requirements;
  /** The guarantees as given, with their literal types. */
  readonly guarantees: G;
  /** Overrides of the policy selector's choice. */
  readonly tuning: Tuning;
}

/** The defaults of every requirement. */
export const defaultRequirements: Requirements = Object.freeze({
  outputOrdering: 'sorted',
  tieBreak: 'prefer-smaller-index',
  determinism: 'run-to-run',
  guaranteeChecks: 'validate',
});

let sharedCpu: Backend | undefined;

/** The backend of a call that neither its environment nor any of its DeviceArrays names: one shared `cpuBackend()`. */
export function defaultBackend(): Backend {
  sharedCpu ??= cpuBackend();
  return sharedCpu;
}

/** The DeviceArrays a call's arguments hold, named as messages name them: fields, and device values or runtime bounds of parameters. */
function deviceArraysOf(args: object): { readonly name: string; readonly array: DeviceArray }[] {
  const found: { name: string; array: DeviceArray }[] = [];
  for (const [field, value] of Object.entries(args)) {
    if (isDeviceArray(value)) {
      found.push({ name: field, array: value });
    } else if (typeof value === 'object' && value !== null && 'kind' in value) {
      const param = value as { value?: unknown; values?: unknown; runtimeBounds?: unknown };
      if (isDeviceArray(param.value)) found.push({ name: field, array: param.value });
      if (isDeviceArray(param.values)) found.push({ name: field, array: param.values });
      if (isDeviceArray(param.runtimeBounds)) found.push({ name: `${field} (runtime bounds)`, array: param.runtimeBounds });
    }
  }
  return found;
}

/**
 * The backend a call runs on: the environment's; without one, the backend that holds the call's
 * DeviceArrays (all of them: two backends are an error naming an array on each); without any, the
 * shared CPU backend. A forgotten `env({ backend })` so runs where the data is, instead of failing
 * on data "of another backend".
 */
export function backendForCall(environment: Env, args: object): Backend {
  if (environment.backend !== undefined) return environment.backend;
  const arrays = deviceArraysOf(args);
  const first = arrays[0];
  if (first === undefined) return defaultBackend();
  for (const { name, array } of arrays) {
    const backend = array.backend;
    if (backend === first.array.backend) continue;
    const where =
      backend.name === first.array.backend.name
        ? `another ${backend.name} backend instance than ${first.name}'s`
        : `the ${backend.name} backend, but ${first.name}'s is on the ${first.array.backend.name} backend`;
    throw new SegkitUsageError(
      `${name}: its DeviceArray is on ${where}; with no backend in env(), a call runs on the backend that holds its DeviceArrays, so they must all be on one: upload them to the same backend`,
    );
  }
  return first.array.backend;
}

const requirementValues: { readonly [R in keyof Requirements]: readonly Requirements[R][] } = {
  outputOrdering: ['sorted', 'unsorted'],
  tieBreak: ['prefer-smaller-index', 'any'],
  determinism: ['run-to-run', 'not-guaranteed'],
  guaranteeChecks: ['validate', 'trust'],
};

const guaranteeNames: readonly (keyof Guarantees)[] = [
  'maxSegmentSize',
  'minSegmentSize',
  'maxK',
  'maxNumSegments',
  'maxTotalNumItems',
];

/**
 * Builds an environment, filling every requirement's default. Guarantees keep their literal types,
 * so an algorithm can reject at compile time what they rule out.
 *
 * @example
 * ```ts
 * const e = env({ backend: cpuBackend(), requirements: { outputOrdering: 'unsorted' }, guarantees: { maxK: 8 } });
 * ```
 */
export function env<const G extends Guarantees = {}>(options: EnvOptions<G> = {}): Env<G> {
  const requirements = { ...defaultRequirements, ...options.requirements };
  for (const key of Object.keys(requirements) as (keyof Requirements)[]) {
    const allowed = requirementValues[key] as readonly string[] | undefined;
    if (allowed === undefined) throw new SegkitUsageError(`env: unknown requirement '${key}'`);
    if (!allowed.includes(requirements[key])) {
      throw new SegkitUsageError(
        `env: requirements.${key} is '${String(requirements[key])}'; expected ${allowed.map((a) => `'${a}'`).join(' or ')}`,
      );
    }
  }
  const guarantees = (options.guarantees ?? {}) as G;
  for (const [key, value] of Object.entries(guarantees)) {
    if (!guaranteeNames.includes(key as keyof Guarantees)) {
      throw new SegkitUsageError(`env: unknown guarantee '${key}'; known: ${guaranteeNames.join(', ')}`);
    }
    if (typeof value !== 'number' || Number.isNaN(value)) {
      throw new SegkitUsageError(`env: guarantees.${key} must be a number; got ${describe(value)}`);
    }
  }
  return Object.freeze({
    backend: options.backend,
    requirements: Object.freeze(requirements),
    guarantees: Object.freeze({ ...guarantees }),
    tuning: Object.freeze({ ...options.tuning }),
  });
}

/** The environment's guarantee on a parameter as bounds (an absent side is infinite). */
export function guaranteeBounds(min: number | undefined, max: number | undefined): Bounds {
  return { min: min ?? -Infinity, max: max ?? Infinity };
}
