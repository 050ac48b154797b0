import { type Backend, isDeviceArray } from '../backends/backend.js';
import type { Env, Guarantees } from '../env/env.js';
import { SegkitUsageError } from '../errors.js';
import { type Bounds, type NumericParam, type OptionParam, p } from '../params/param.js';
import { type NumericFacts, type OptionFacts, resolveNumeric, resolveOption } from '../params/resolve.js';

/*
 * An algorithm's parameter table: each parameter's name, the kinds it may be, its natural domain
 * and the environment guarantees that bound it. One table drives the host resolution (here), the
 * device checks, explain() and the type-level validation (its literal twin in the algorithm's
 * args.ts). The segment parameters every segmented algorithm shares are defined once, below.
 */

/** Which parameter kinds a numeric parameter accepts. */
export type NumericKind = 'constant' | 'uniform' | 'perSegment';

/** A numeric parameter of an algorithm. */
export interface NumericParameterSpec {
  readonly type: 'numeric';
  readonly name: string;
  readonly kinds: readonly NumericKind[];
  /** The natural domain, e.g. `[1, 2^32 - 1]` for `k`. */
  readonly domain: Bounds;
  /** Values must be integers (sizes, counts). */
  readonly integer: boolean;
  /** The environment guarantees on its lower and upper bound, by name. */
  readonly guarantees?: { readonly min?: keyof Guarantees & string; readonly max?: keyof Guarantees & string };
  readonly required: boolean;
  /** dtypes a device-only value may have; default u32 and i32 (f32 for uniforms). */
  readonly deviceDtypes?: readonly ('u32' | 'i32' | 'f32')[];
}

/** A discrete parameter of an algorithm. */
export interface OptionParameterSpec {
  readonly type: 'option';
  readonly name: string;
  /** The options the algorithm supports. */
  readonly options: readonly string[];
  readonly required: boolean;
}

/** A guarantee-only parameter (`totalNumItems`). */
export interface GuaranteeParameterSpec {
  readonly type: 'guarantee';
  readonly name: string;
  readonly domain: Bounds;
  readonly guarantees?: { readonly max?: keyof Guarantees & string };
}

/** One row of a parameter table. */
export type ParameterSpec = NumericParameterSpec | OptionParameterSpec | GuaranteeParameterSpec;

const u32Max = 4294967295;

/** The parameters every segmented algorithm shares, with their domains and guarantees. */
export const segmentParameters = {
  segmentSizes: {
    type: 'numeric',
    name: 'segmentSizes',
    kinds: ['constant', 'uniform', 'perSegment'],
    domain: { min: 0, max: u32Max },
    integer: true,
    guarantees: { min: 'minSegmentSize', max: 'maxSegmentSize' },
    required: true,
  },
  segmentStride: { type: 'numeric', name: 'segmentStride', kinds: ['constant', 'uniform'], domain: { min: 0, max: u32Max }, integer: true, required: false },
  numSegments: {
    type: 'numeric',
    name: 'numSegments',
    kinds: ['constant', 'uniform'],
    domain: { min: 0, max: u32Max },
    integer: true,
    guarantees: { max: 'maxNumSegments' },
    required: true,
  },
  totalNumItems: { type: 'guarantee', name: 'totalNumItems', domain: { min: 0, max: Number.MAX_SAFE_INTEGER }, guarantees: { max: 'maxTotalNumItems' } },
} as const satisfies Record<string, ParameterSpec>;

/** The facts of every parameter in a table, by name (`undefined` for an optional one left out). */
export type ResolvedParameters = Readonly<Record<string, NumericFacts | OptionFacts | undefined>>;

const kindNames: Record<NumericKind, string> = { constant: 'p.constant', uniform: 'p.uniform', perSegment: 'p.perSegment' };

function listKinds(kinds: readonly string[]): string {
  return kinds.length === 1 ? kinds[0]! : `${kinds.slice(0, -1).join(', ')} or ${kinds.at(-1)}`;
}

function guaranteeBounds(spec: NumericParameterSpec | GuaranteeParameterSpec, guarantees: Guarantees) {
  const rows: { name: string; bounds: Bounds }[] = [];
  const min = 'guarantees' in spec && spec.guarantees !== undefined && 'min' in spec.guarantees ? spec.guarantees.min : undefined;
  const max = spec.guarantees?.max;
  if (min !== undefined && guarantees[min] !== undefined) rows.push({ name: min, bounds: { min: guarantees[min], max: spec.domain.max } });
  if (max !== undefined && guarantees[max] !== undefined) rows.push({ name: max, bounds: { min: spec.domain.min, max: guarantees[max] } });
  return rows;
}

/** Resolves one numeric parameter: its kind must be one the table allows. */
function resolveNumericParameter(spec: NumericParameterSpec, value: unknown, environment: Env, backend: Backend): NumericFacts {
  const kind = (value as { kind?: unknown } | null | undefined)?.kind;
  if (typeof kind === 'string' && kind !== 'guarantee' && !(spec.kinds as readonly string[]).includes(kind)) {
    throw new SegkitUsageError(`${spec.name}: must be ${listKinds(spec.kinds.map((k) => kindNames[k]))}; got a ${kind} parameter`);
  }
  if (kind === 'guarantee') throw new SegkitUsageError(`${spec.name}: must be ${listKinds(spec.kinds.map((k) => kindNames[k]))}; got a guarantee`);
  return resolveNumeric(spec.name, value as NumericParam, {
    domain: spec.domain,
    integer: spec.integer,
    guarantees: guaranteeBounds(spec, environment.guarantees),
    ...(spec.deviceDtypes === undefined ? {} : { deviceDtypes: spec.deviceDtypes }),
  }, backend);
}

/** A host per-segment array (and host runtime bounds) as a plan copied it. */
export interface HostArrayCopy {
  /** The args field (the parameter's name). */
  readonly field: string;
  readonly values: readonly unknown[];
  /**
   * The same values in a Float64Array when every one is a number: the environment API compares the
   * caller's array against the copy on every call, and V8 reads a frozen array's elements several
   * times slower than a typed array's (4096 ks: ~30 us against ~5 us a call).
   */
  readonly numbers: Float64Array | undefined;
  readonly runtimeBounds: Bounds | undefined;
}

/** The copy behind each resolved parameter that read a host per-segment array. */
const hostArrayCopies = new WeakMap<NumericFacts | OptionFacts, HostArrayCopy>();

/**
 * The host per-segment array (and host runtime bounds) a parameter's facts were resolved from, as
 * copied when planned; undefined for every other parameter.
 */
export function hostArrayCopyOf(facts: NumericFacts | OptionFacts | undefined): HostArrayCopy | undefined {
  return facts === undefined ? undefined : hostArrayCopies.get(facts);
}

/** A host array a per-segment parameter may hold (anything else is left for the resolver to reject). */
function isHostArray(values: unknown): values is ArrayLike<unknown> {
  return typeof values === 'object' && values !== null && !isDeviceArray(values) && typeof (values as { length?: unknown }).length === 'number';
}

/** A host runtime-bounds object (not a DeviceArray). */
function isHostBounds(bounds: unknown): bounds is Bounds {
  return typeof bounds === 'object' && bounds !== null && !isDeviceArray(bounds);
}

/**
 * A per-segment parameter with its host array (and host runtime bounds) replaced by a frozen copy,
 * or undefined when it holds none: a plan checks and runs the copy, so an array the caller changes
 * after planning never reaches a run unchecked.
 */
function copyHostArray(name: string, value: unknown): { param: unknown; copy: HostArrayCopy } | undefined {
  const param = value as { kind?: unknown; values?: unknown; runtimeBounds?: unknown } | null | undefined;
  if (typeof param !== 'object' || param === null || (param.kind !== 'perSegment' && param.kind !== 'perSegmentOption') || !isHostArray(param.values)) return undefined;
  const values = Object.freeze(Array.from(param.values));
  const runtimeBounds = param.kind === 'perSegment' && isHostBounds(param.runtimeBounds) ? Object.freeze({ min: param.runtimeBounds.min, max: param.runtimeBounds.max }) : undefined;
  const copied = Object.freeze({ ...param, values, ...(runtimeBounds === undefined ? {} : { runtimeBounds }) });
  const numbers = values.every((v) => typeof v === 'number') ? Float64Array.from(values as readonly number[]) : undefined;
  return { param: copied, copy: { field: name, values, numbers, runtimeBounds } };
}

/**
 * Resolves every parameter of `table` from `args`, checking every host-known value and bound on
 * the way (a violation throws `SegkitRangeError` naming the parameter before any device work).
 * A guarantee parameter that is absent is resolved from the environment's guarantee when there is one.
 * Host per-segment arrays are copied first: the facts hold the copies (see {@link hostArrayCopyOf}).
 */
export function resolveParameters(table: readonly ParameterSpec[], args: Readonly<Record<string, unknown>>, environment: Env, backend: Backend): ResolvedParameters {
  const facts: Record<string, NumericFacts | OptionFacts | undefined> = {};
  for (const spec of table) {
    const copied = spec.type === 'guarantee' ? undefined : copyHostArray(spec.name, args[spec.name]);
    const value = copied === undefined ? args[spec.name] : copied.param;
    if (spec.type === 'guarantee') {
      if (value !== undefined && (value as { kind?: unknown }).kind !== 'guarantee') {
        throw new SegkitUsageError(`${spec.name}: must be p.guarantee({ min?, max? })`);
      }
      const fromEnv = guaranteeBounds(spec, environment.guarantees);
      facts[spec.name] =
        value === undefined && fromEnv.length === 0
          ? undefined
          : resolveNumeric(spec.name, (value as NumericParam | undefined) ?? p.guarantee({}), { domain: spec.domain, integer: true, guarantees: fromEnv }, backend);
      continue;
    }
    if (value === undefined) {
      if (spec.required) throw new SegkitUsageError(`${spec.name}: required; got undefined`);
      facts[spec.name] = undefined;
      continue;
    }
    const resolved =
      spec.type === 'numeric'
        ? resolveNumericParameter(spec, value, environment, backend)
        : resolveOption(spec.name, value as OptionParam, spec.options, backend);
    if (copied !== undefined && resolved.hostValues !== undefined) hostArrayCopies.set(resolved, copied.copy);
    facts[spec.name] = resolved;
  }
  return facts;
}

/** The numeric facts of a resolved parameter, or a clear internal error when the table disagrees. */
export function numericFacts(facts: ResolvedParameters, name: string): NumericFacts {
  const f = facts[name];
  if (f === undefined || !('staticBounds' in f)) throw new Error(`internal: '${name}' is not a resolved numeric parameter`);
  return f;
}

/** The option facts of a resolved parameter. */
export function optionFacts<Option extends string>(facts: ResolvedParameters, name: string): OptionFacts<Option> {
  const f = facts[name];
  if (f === undefined || !('options' in f)) throw new Error(`internal: '${name}' is not a resolved option parameter`);
  return f as OptionFacts<Option>;
}
