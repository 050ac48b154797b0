import type { DeviceArray } from '../backends/backend.js';
import type { ValidateBounds, ValidateConstant, ValidateOption, ValidateValue } from '../types/validate.js';
import type { $max, $min, $options } from './tokens.js';

/** Inclusive bounds of a numeric parameter. */
export interface Bounds {
  /** Lower bound, inclusive; `-Infinity` where there is none. */
  readonly min: number;
  /** Upper bound, inclusive; `Infinity` where there is none. */
  readonly max: number;
}

/** A value known at compile time: `p.constant(8)`. */
export interface ConstantParam<Value extends number = number> {
  /** Which parameter kind this is. */
  readonly kind: 'constant';
  /** The value, known at compile time. */
  readonly value: Value;
  /** Type token, not available at runtime. */
  readonly [$min]: Value;
  /** Type token, not available at runtime. */
  readonly [$max]: Value;
}

/** One runtime value for all segments, with static bounds: `p.uniform(k, { min: 1, max: 8 })`. */
export interface UniformParam<Min extends number = number, Max extends number = number> {
  /** Which parameter kind this is. */
  readonly kind: 'uniform';
  /** A host number, or a 1-element DeviceArray (device-only). */
  readonly value: number | DeviceArray;
  /** The static bounds as given; an omitted side is infinite. */
  readonly bounds: Bounds;
  /** Type token, not available at runtime. */
  readonly [$min]: Min;
  /** Type token, not available at runtime. */
  readonly [$max]: Max;
}

/** One value per segment: `p.perSegment(sizes, { min: 512, max: 4096 })`. */
export interface PerSegmentParam<Min extends number = number, Max extends number = number> {
  /** Which parameter kind this is. */
  readonly kind: 'perSegment';
  /** Host values, or a DeviceArray (device-only). */
  readonly values: ArrayLike<number> | DeviceArray;
  /** The static bounds as given; an omitted side is infinite. */
  readonly bounds: Bounds;
  /** Narrower runtime bounds: on the host, or a 2-element DeviceArray `[min, max]` (device-only). */
  readonly runtimeBounds: Bounds | DeviceArray | undefined;
  /** Type token, not available at runtime. */
  readonly [$min]: Min;
  /** Type token, not available at runtime. */
  readonly [$max]: Max;
}

/** One option known at compile time: `p.constantOption('max')`. */
export interface ConstantOptionParam<Option extends string = string> {
  /** Which parameter kind this is. */
  readonly kind: 'constantOption';
  /** The option, known at compile time. */
  readonly option: Option;
  /** The set of options that can occur: the one option. */
  readonly options: readonly [Option];
  /** Type token, not available at runtime. */
  readonly [$options]: Option;
}

/** One runtime option for all segments, from a set: `p.uniformOption(dir, ['max', 'min'])`. */
export interface UniformOptionParam<Option extends string = string> {
  /** Which parameter kind this is. */
  readonly kind: 'uniformOption';
  /** The option, or a 1-element DeviceArray holding its index in `options` (device-only). */
  readonly value: Option | DeviceArray;
  /** The set of options that can occur. */
  readonly options: readonly Option[];
  /** Type token, not available at runtime. */
  readonly [$options]: Option;
}

/** One option per segment, from a set: `p.perSegmentOption(dirs, ['max', 'min'])`. */
export interface PerSegmentOptionParam<Option extends string = string> {
  /** Which parameter kind this is. */
  readonly kind: 'perSegmentOption';
  /** Host options, or a DeviceArray of option indices into `options` (device-only). */
  readonly values: ArrayLike<Option> | DeviceArray;
  /** The set of options that can occur. */
  readonly options: readonly Option[];
  /** Type token, not available at runtime. */
  readonly [$options]: Option;
}

/** Bounds alone, with no value: `p.guarantee({ max: 1 << 20 })` for `totalNumItems`. */
export interface GuaranteeParam<Min extends number = number, Max extends number = number> {
  /** Which parameter kind this is. */
  readonly kind: 'guarantee';
  /** The guaranteed bounds as given; an omitted side is infinite. */
  readonly bounds: Bounds;
  /** Type token, not available at runtime. */
  readonly [$min]: Min;
  /** Type token, not available at runtime. */
  readonly [$max]: Max;
}

/** Any numeric parameter. */
export type NumericParam = ConstantParam | UniformParam | PerSegmentParam | GuaranteeParam;
/** Any discrete (option) parameter. */
export type OptionParam<Option extends string = string> =
  | ConstantOptionParam<Option>
  | UniformOptionParam<Option>
  | PerSegmentOptionParam<Option>;

/** Reads a numeric parameter's static bounds from its type tokens. */
export type InferBounds<Param> = Param extends { readonly [$min]: infer Min extends number; readonly [$max]: infer Max extends number }
  ? { min: Min; max: Max }
  : never;
/** Reads a discrete parameter's option set from its type token. */
export type InferOptions<Param> = Param extends { readonly [$options]: infer Option extends string } ? Option : never;

function staticBounds(bounds: { readonly min?: unknown; readonly max?: unknown } | undefined): Bounds {
  return {
    min: typeof bounds?.min === 'number' ? bounds.min : -Infinity,
    max: typeof bounds?.max === 'number' ? bounds.max : Infinity,
  };
}

/* The phantom tokens exist in types only, so each constructor casts once. */
/*
 * The bounds in a constructor's return type are `NoInfer`: they come from the arguments alone. A
 * contextual type (`{ ... } satisfies TopKArgs` gives `UniformParam<number, number>`) would otherwise
 * win over the literal bounds, which are inferred through `ValidateBounds`, and widen them.
 */
const make = <Param>(fields: object): Param => Object.freeze(fields) as Param;

/**
 * The parameter kinds of segkit (also exported as `params`). Bounds are part of the type, so what
 * they rule out does not compile; each value is checked again at run time, with the same message,
 * when an algorithm uses it.
 *
 * @example
 * ```ts
 * const k = p.uniform(topK, { min: 1, max: 8 });     // runtime value, static bounds [1, 8]
 * const sizes = p.constant(256);                     // known at compile time
 * const dir = p.constantOption('max');
 * p.uniform(16, { min: 1, max: 8 });                 // error: 16 is outside the static bounds [1, 8]
 * ```
 */
export const p = {
  /** A value known at compile time; it must be one literal number. */
  constant<const Value extends number>(value: ValidateConstant<Value>): ConstantParam<Value> {
    return make({ kind: 'constant', value });
  },

  /**
   * One runtime value for all segments: a host number, or a 1-element DeviceArray whose value lives
   * only on the device. Omitted bounds default to the parameter's natural domain.
   */
  uniform<const Value extends number, const Min extends number = number, const Max extends number = number>(
    value: ValidateValue<Value, Min, Max> | DeviceArray,
    bounds?: ValidateBounds<Min, Max>,
  ): UniformParam<NoInfer<Min>, NoInfer<Max>> {
    return make({ kind: 'uniform', value, bounds: staticBounds(bounds) });
  },

  /**
   * One value per segment: a host array, or a DeviceArray (device-only). `runtime` gives narrower
   * bounds known at run time: on the host as `{ min, max }`, or on the device as a 2-element
   * DeviceArray `[min, max]` (the output of an earlier reduction, say). A plan copies a host array
   * (and host runtime bounds) when it is made: later changes do not reach it.
   */
  perSegment<const Min extends number = number, const Max extends number = number>(
    values: ArrayLike<number> | DeviceArray,
    bounds?: ValidateBounds<Min, Max>,
    runtime?: Bounds | DeviceArray,
  ): PerSegmentParam<NoInfer<Min>, NoInfer<Max>> {
    return make({ kind: 'perSegment', values, bounds: staticBounds(bounds), runtimeBounds: runtime });
  },

  /** A discrete option known at compile time. */
  constantOption<const Option extends string>(option: Option): ConstantOptionParam<Option> {
    return make({ kind: 'constantOption', option, options: Object.freeze([option]) });
  },

  /**
   * One runtime option for all segments, from the set `options`; or a 1-element DeviceArray holding
   * the option's index in `options` (device-only).
   */
  uniformOption<const Option extends string, const Options extends readonly string[]>(
    value: ValidateOption<Option, Options> | DeviceArray,
    options: Options,
  ): UniformOptionParam<Options[number]> {
    return make({ kind: 'uniformOption', value, options: Object.freeze([...options]) });
  },

  /**
   * One option per segment, from the set `options`: a host array of options, or a DeviceArray of
   * option indices into `options` (device-only). A plan copies a host array when it is made.
   */
  perSegmentOption<const Options extends readonly string[]>(
    values: ArrayLike<Options[number]> | DeviceArray,
    options: Options,
  ): PerSegmentOptionParam<Options[number]> {
    return make({ kind: 'perSegmentOption', values, options: Object.freeze([...options]) });
  },

  /** Bounds alone, with no value (e.g. `totalNumItems`). */
  guarantee<const Min extends number = number, const Max extends number = number>(
    bounds: ValidateBounds<Min, Max>,
  ): GuaranteeParam<NoInfer<Min>, NoInfer<Max>> {
    return make({ kind: 'guarantee', bounds: staticBounds(bounds) });
  },
} as const;

/** Alias of {@link p}. */
export const params = p;
