import { match } from 'ts-pattern';
import { type Backend, type DeviceArray, checkDeviceArray, describe, isDeviceArray } from '../backends/backend.js';
import { SegkitRangeError, SegkitUsageError } from '../errors.js';
import {
  emptyBounds,
  emptyGuaranteeIntersection,
  notAnInteger,
  optionNotInSet,
  outsideRuntimeBounds,
  outsideStaticBounds,
  runtimeBoundsOutsideStatic,
} from '../types/messages.js';
import type { Bounds, NumericParam, OptionParam } from './param.js';

/** Everything known about a numeric parameter before any device work. */
export interface NumericFacts {
  /** The parameter's name in the call. */
  readonly name: string;
  /** The parameter kind the facts come from. */
  readonly kind: 'constant' | 'uniform' | 'perSegment' | 'guarantee';
  /** Static bounds: the parameter's own, within the algorithm's domain and the environment's guarantee. */
  readonly staticBounds: Bounds;
  /** Tighter bounds known on the host at run time (an exact host value, or a host array's true range), if any. */
  readonly runtimeBounds: Bounds | undefined;
  /** True when the values (or their runtime bounds) live only on the device. */
  readonly deviceOnly: boolean;
  /** The exact value when known on the host. */
  readonly exact: number | undefined;
  /** Per-segment values on the host. */
  readonly hostValues: ArrayLike<number> | undefined;
  /** Values on the device: a 1-element array (uniform) or one per segment. */
  readonly deviceValues: DeviceArray | undefined;
  /** Runtime bounds `[min, max]` on the device. */
  readonly deviceBounds: DeviceArray | undefined;
}

/** Everything known about a discrete parameter before any device work. */
export interface OptionFacts<Option extends string = string> {
  /** The parameter's name in the call. */
  readonly name: string;
  /** The parameter kind the facts come from. */
  readonly kind: 'constant' | 'uniform' | 'perSegment';
  /** The options that can occur. */
  readonly options: readonly Option[];
  /** The option when known on the host and the same for every segment. */
  readonly exact: Option | undefined;
  /** Options that occur, when known on the host (a subset of `options`). */
  readonly occurring: readonly Option[];
  /** True when the options live only on the device. */
  readonly deviceOnly: boolean;
  /** Per-segment options on the host. */
  readonly hostValues: ArrayLike<Option> | undefined;
  /** Option indices (into `options`) on the device. */
  readonly deviceValues: DeviceArray | undefined;
}

/** What an algorithm says about one of its numeric parameters. */
export interface NumericDomain {
  /** The natural domain, e.g. `[1, 2^32 - 1]` for `k`. */
  readonly domain: Bounds;
  /** The values must be integers (sizes, counts). */
  readonly integer: boolean;
  /**
   * The environment's guarantees on this parameter, each with its name for messages (e.g.
   * `minSegmentSize` as `[min, domain max]`), intersected in turn.
   */
  readonly guarantees?: readonly { readonly name: string; readonly bounds: Bounds }[];
  /** dtypes a device-only value may have; default `u32` and `i32` (and `f32` for a uniform). */
  readonly deviceDtypes?: readonly ('u32' | 'i32' | 'f32')[];
}

/** The bounds that hold for every value: the tightest of runtime and static. */
export function effectiveBounds(facts: NumericFacts): Bounds {
  return facts.runtimeBounds ?? facts.staticBounds;
}

function intersect(a: Bounds, b: Bounds): Bounds {
  return { min: Math.max(a.min, b.min), max: Math.min(a.max, b.max) };
}

function checkValue(name: string, value: number, bounds: Bounds, integer: boolean, segment?: number): void {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new SegkitRangeError(name, `expected a number, got ${describe(value)}`, { segment, bounds });
  }
  if (integer && !Number.isInteger(value)) throw new SegkitRangeError(name, notAnInteger(value), { segment, value, bounds });
  if (value < bounds.min || value > bounds.max) {
    throw new SegkitRangeError(name, outsideStaticBounds(value, bounds.min, bounds.max), { segment, value, bounds });
  }
}

const numericKinds: readonly string[] = ['constant', 'uniform', 'perSegment', 'guarantee'];
const optionKinds: readonly string[] = ['constantOption', 'uniformOption', 'perSegmentOption'];

/** Whether `param` is a parameter of one of `kinds` (a numeric one where an option is expected is not, nor the reverse). */
function isParamOf(param: unknown, kinds: readonly string[]): boolean {
  return typeof param === 'object' && param !== null && kinds.includes(String((param as { kind?: unknown }).kind));
}

/** A wrong argument in words: another family's parameter by its maker (`p.perSegment`), anything else as `describe` says. */
function describeParam(param: unknown): string {
  const kind = typeof param === 'object' && param !== null ? (param as { kind?: unknown }).kind : undefined;
  return [...numericKinds, ...optionKinds].includes(String(kind)) ? `a p.${String(kind)} parameter` : describe(param);
}

/**
 * Turns any numeric parameter into facts, checking every host-known value and bound on the way:
 * a violation throws `SegkitRangeError` naming the parameter (and segment), the value and the
 * bounds, before any device work.
 */
export function resolveNumeric(name: string, param: NumericParam, spec: NumericDomain, backend: Backend): NumericFacts {
  if (!isParamOf(param, numericKinds)) {
    throw new SegkitUsageError(`${name}: expected a parameter made with p.constant, p.uniform, p.perSegment or p.guarantee; got ${describeParam(param)}`);
  }
  const own: Bounds = param.kind === 'constant' ? { min: param.value, max: param.value } : param.bounds;
  if (own.min > own.max) throw new SegkitRangeError(name, emptyBounds(own.min, own.max), { bounds: own });
  // A literal outside the natural domain reads as outside the static bounds of the domain, as its compile-time twin does.
  let staticBounds = intersect(own, spec.domain);
  if (param.kind === 'constant') checkValue(name, param.value, spec.domain, spec.integer);
  else if (staticBounds.min > staticBounds.max) {
    throw new SegkitRangeError(name, emptyGuaranteeIntersection(own.min, own.max, 'domain', spec.domain.min, spec.domain.max), { bounds: own });
  }
  for (const guarantee of spec.guarantees ?? []) {
    const narrowed = intersect(staticBounds, guarantee.bounds);
    if (narrowed.min > narrowed.max) {
      throw new SegkitRangeError(
        name,
        emptyGuaranteeIntersection(staticBounds.min, staticBounds.max, guarantee.name, guarantee.bounds.min, guarantee.bounds.max),
        { bounds: staticBounds },
      );
    }
    staticBounds = narrowed;
  }
  const base = { name, staticBounds, hostValues: undefined, deviceValues: undefined, deviceBounds: undefined };
  return match(param)
    .with({ kind: 'constant' }, (c): NumericFacts => ({
      ...base,
      kind: 'constant',
      runtimeBounds: undefined,
      deviceOnly: false,
      exact: c.value,
    }))
    .with({ kind: 'guarantee' }, (): NumericFacts => ({ ...base, kind: 'guarantee', runtimeBounds: undefined, deviceOnly: false, exact: undefined }))
    .with({ kind: 'uniform' }, (u): NumericFacts => {
      if (isDeviceArray(u.value)) {
        checkDeviceArray(u.value, backend, name, spec.deviceDtypes ?? ['u32', 'i32', 'f32']);
        if (u.value.length !== 1) throw new SegkitUsageError(`${name}: a device-only uniform value must be a 1-element DeviceArray; got length ${u.value.length}`);
        return { ...base, kind: 'uniform', runtimeBounds: undefined, deviceOnly: true, exact: undefined, deviceValues: u.value };
      }
      checkValue(name, u.value, staticBounds, spec.integer);
      return { ...base, kind: 'uniform', runtimeBounds: { min: u.value, max: u.value }, deviceOnly: false, exact: u.value };
    })
    .with({ kind: 'perSegment' }, (s): NumericFacts => {
      let runtimeBounds: Bounds | undefined;
      let deviceBounds: DeviceArray | undefined;
      if (isDeviceArray(s.runtimeBounds)) {
        checkDeviceArray(s.runtimeBounds, backend, `${name} runtime bounds`, ['u32', 'i32']);
        if (s.runtimeBounds.length !== 2) {
          throw new SegkitUsageError(`${name}: device runtime bounds must be a 2-element DeviceArray [min, max]; got length ${s.runtimeBounds.length}`);
        }
        deviceBounds = s.runtimeBounds;
      } else if (s.runtimeBounds !== undefined) {
        const { min, max } = s.runtimeBounds;
        if (min > max) throw new SegkitRangeError(name, emptyBounds(min, max), { bounds: s.runtimeBounds });
        if (min < staticBounds.min || max > staticBounds.max) {
          throw new SegkitRangeError(name, runtimeBoundsOutsideStatic(min, max, staticBounds.min, staticBounds.max), { bounds: staticBounds });
        }
        runtimeBounds = { min, max };
      }
      if (isDeviceArray(s.values)) {
        checkDeviceArray(s.values, backend, name, spec.deviceDtypes ?? ['u32', 'i32']);
        return { ...base, kind: 'perSegment', runtimeBounds, deviceOnly: true, exact: undefined, deviceValues: s.values, deviceBounds };
      }
      const values = s.values;
      if (values === null || typeof values !== 'object' || typeof values.length !== 'number') {
        throw new SegkitUsageError(`${name}: per-segment values must be an array or a DeviceArray; got ${describe(values)}`);
      }
      let lo = Infinity;
      let hi = -Infinity;
      for (let segment = 0; segment < values.length; segment++) {
        const value = values[segment] as number;
        checkValue(name, value, staticBounds, spec.integer, segment);
        if (runtimeBounds !== undefined && (value < runtimeBounds.min || value > runtimeBounds.max)) {
          throw new SegkitRangeError(name, outsideRuntimeBounds(value, runtimeBounds.min, runtimeBounds.max), { segment, value, bounds: runtimeBounds });
        }
        if (value < lo) lo = value;
        if (value > hi) hi = value;
      }
      // The host array's true range is the tightest runtime bound there is.
      const observed = values.length === 0 ? runtimeBounds : { min: lo, max: hi };
      return { ...base, kind: 'perSegment', runtimeBounds: observed, deviceOnly: deviceBounds !== undefined, exact: undefined, hostValues: values, deviceBounds };
    })
    .exhaustive();
}

/**
 * Turns any discrete parameter into facts. `domain` is the set the algorithm supports; a set that
 * reaches outside it, or a host option outside the parameter's set, throws `SegkitRangeError`.
 */
export function resolveOption<Option extends string>(
  name: string,
  param: OptionParam<Option>,
  domain: readonly Option[],
  backend: Backend,
): OptionFacts<Option> {
  if (!isParamOf(param, optionKinds)) {
    throw new SegkitUsageError(`${name}: expected a parameter made with p.constantOption, p.uniformOption or p.perSegmentOption; got ${describeParam(param)}`);
  }
  for (const option of param.options) {
    if (!domain.includes(option)) throw new SegkitRangeError(name, optionNotInSet(option, domain), { value: option, bounds: domain });
  }
  const check = (option: Option, segment?: number): void => {
    if (!param.options.includes(option)) {
      throw new SegkitRangeError(name, optionNotInSet(String(option), param.options), { segment, value: String(option), bounds: param.options });
    }
  };
  const base = { name, options: param.options, hostValues: undefined, deviceValues: undefined };
  return match(param as OptionParam<Option>)
    .with({ kind: 'constantOption' }, (c): OptionFacts<Option> => ({ ...base, kind: 'constant', exact: c.option, occurring: [c.option], deviceOnly: false }))
    .with({ kind: 'uniformOption' }, (u): OptionFacts<Option> => {
      if (isDeviceArray(u.value)) {
        checkDeviceArray(u.value, backend, name, ['u32', 'i32']);
        if (u.value.length !== 1) throw new SegkitUsageError(`${name}: a device-only uniform option must be a 1-element DeviceArray; got length ${u.value.length}`);
        return { ...base, kind: 'uniform', exact: undefined, occurring: param.options, deviceOnly: true, deviceValues: u.value };
      }
      check(u.value);
      return { ...base, kind: 'uniform', exact: u.value, occurring: [u.value], deviceOnly: false };
    })
    .with({ kind: 'perSegmentOption' }, (s): OptionFacts<Option> => {
      if (isDeviceArray(s.values)) {
        checkDeviceArray(s.values, backend, name, ['u32', 'i32']);
        return { ...base, kind: 'perSegment', exact: undefined, occurring: param.options, deviceOnly: true, deviceValues: s.values };
      }
      const seen = new Set<Option>();
      for (let segment = 0; segment < s.values.length; segment++) {
        const option = s.values[segment] as Option;
        check(option, segment);
        seen.add(option);
      }
      const occurring = param.options.filter((o) => seen.has(o));
      return { ...base, kind: 'perSegment', exact: occurring.length === 1 ? occurring[0] : undefined, occurring, deviceOnly: false, hostValues: s.values };
    })
    .exhaustive();
}
