import type { DeviceArray } from '../../backends/backend.js';
import type { Guarantees } from '../../env/env.js';
import type {
  ConstantParam,
  GuaranteeParam,
  InferBounds,
  InferOptions,
  OptionParam,
  PerSegmentParam,
  UniformParam,
} from '../../params/param.js';
import type { EmptyGuaranteeIntersection, OptionNotInSet, OutsideStaticBounds } from '../../types/messages.js';
import type { KnownGreater, KnownLess, MaxOf, MinOf } from '../../types/numeric.js';
import type { ErrorMessage } from '../../types/validate.js';
import type { ValidateIntersection } from '../../types/intersect.js';
import type { SelectDirection } from './keys.js';
import type { TopKVariant } from './policy.js';

/** A numeric parameter that may vary per segment. */
export type SegmentParam = ConstantParam | UniformParam | PerSegmentParam;
/** A numeric parameter with one value for the whole call. */
export type ScalarParam = ConstantParam | UniformParam;

/** The arguments of {@link DeviceBatchedTopK}; docs/top-k.md states their contract. */
export interface TopKArgs {
  /** All segments' keys: `f32`, `i32` or `u32`. */
  readonly keysIn: DeviceArray<'f32' | 'i32' | 'u32'>;
  /** `numSegments * kMax` keys of the same dtype. */
  readonly keysOut: DeviceArray<'f32' | 'i32' | 'u32'>;
  /** A payload, one per key. Without it, `valuesOut` receives segment-local indices. */
  readonly valuesIn?: DeviceArray<'f32' | 'i32' | 'u32'> | undefined;
  /** `numSegments * kMax` values (`u32`, `i32` or `f32`). */
  readonly valuesOut?: DeviceArray<'f32' | 'i32' | 'u32'> | undefined;
  /** Segment sizes: constant, uniform or per-segment. */
  readonly segmentSizes: SegmentParam;
  /** Segment `i` starts at `i * stride`; without it segments are packed. */
  readonly segmentStride?: ScalarParam | undefined;
  /** How many keys to select per segment, `k >= 1`. */
  readonly k: SegmentParam;
  /** `'max'` or `'min'`: constant, uniform or per-segment. */
  readonly selectDirection: OptionParam;
  /** Number of segments: constant or uniform (a number, or a 1-element DeviceArray). */
  readonly numSegments: ScalarParam;
  /** A guarantee on the total number of keys, which sizes temporary storage. */
  readonly totalNumItems?: GuaranteeParam | undefined;
}

/** The arguments of the fixed-direction shorthands (`maxKeys`, `minPairs`, ...). */
export type TopKArgsWithoutDirection = Omit<TopKArgs, 'selectDirection'>;

type ParamKeys = 'k' | 'segmentSizes' | 'numSegments' | 'segmentStride' | 'totalNumItems' | 'selectDirection';

/**
 * The constraint the API's type parameter uses: {@link TopKArgs} with every parameter loosened to
 * `{ kind }`. A parameter written inline (`k: p.uniform(v, { min: 1, max: 8 })`) would otherwise be
 * contextually typed by `UniformParam<number, number>`, which widens its literal bounds; the exact
 * shape is checked by {@link ValidateTopKArgs} instead.
 */
export type TopKArgsShape = {
  readonly [Key in keyof TopKArgs]: Key extends ParamKeys ? { readonly kind: string } | undefined : TopKArgs[Key];
};
/** {@link TopKArgsShape} without `selectDirection`. */
export type TopKArgsShapeWithoutDirection = Omit<TopKArgsShape, 'selectDirection'>;

/** What each parameter of top-k may be, for the messages. */
interface ExpectedKinds {
  k: 'p.constant, p.uniform or p.perSegment';
  segmentSizes: 'p.constant, p.uniform or p.perSegment';
  numSegments: 'p.constant or p.uniform';
  segmentStride: 'p.constant or p.uniform';
  totalNumItems: 'p.guarantee';
  selectDirection: 'p.constantOption, p.uniformOption or p.perSegmentOption';
}

/** The natural domain of each numeric parameter of top-k, as literal types (the runtime uses the same numbers). */
export interface TopKDomains {
  segmentSizes: { min: 0; max: 4294967295; guaranteeMin: 'minSegmentSize'; guaranteeMax: 'maxSegmentSize' };
  k: { min: 1; max: 4294967295; guaranteeMin: never; guaranteeMax: 'maxK' };
  numSegments: { min: 0; max: 4294967295; guaranteeMin: never; guaranteeMax: 'maxNumSegments' };
  segmentStride: { min: 0; max: 4294967295; guaranteeMin: never; guaranteeMax: never };
  totalNumItems: { min: 0; max: 9007199254740991; guaranteeMin: never; guaranteeMax: 'maxTotalNumItems' };
}

type GuaranteeValue<G, Key> = [Key] extends [never] ? number : Key extends keyof G ? (G[Key] extends number ? G[Key] : number) : number;

/** `Message` prefixed with the parameter's name, as the runtime check prints it. */
type Named<Name extends string, Checked> = Checked extends ErrorMessage<infer Message> ? ErrorMessage<`${Name}: ${Message}`> : never;

/** Checks one numeric parameter against its domain and the environment's guarantees. */
type ValidateNumeric<Param, Name extends keyof TopKDomains, G> =
  InferBounds<Param> extends { min: infer Min extends number; max: infer Max extends number }
    ? KnownGreater<TopKDomains[Name]['min'], Max> extends true
      ? OutsideDomain<Param, Name, Max, Min, Max>
      : KnownLess<TopKDomains[Name]['max'], Min> extends true
        ? OutsideDomain<Param, Name, Min, Min, Max>
        : ValidateGuarantees<Param, Name, MaxOf<Min, TopKDomains[Name]['min']>, MinOf<Max, TopKDomains[Name]['max']>, G>
    : Param;

/** A constant outside the domain reads as a value outside the domain's bounds; other kinds as bounds that miss it. */
type OutsideDomain<Param, Name extends keyof TopKDomains, Value extends number, Min extends number, Max extends number> = ErrorMessage<`${Name}: ${Param extends ConstantParam
  ? OutsideStaticBounds<Value, TopKDomains[Name]['min'], TopKDomains[Name]['max']>
  : EmptyGuaranteeIntersection<Min, Max, 'domain', TopKDomains[Name]['min'], TopKDomains[Name]['max']>}`>;

/** The bounds (within the domain) against the environment's lower and upper guarantee, each as `[guarantee, domain side]`. */
type ValidateGuarantees<Param, Name extends keyof TopKDomains, Min extends number, Max extends number, G> =
  [Named<Name, ValidateIntersection<Min, Max, TopKDomains[Name]['guaranteeMin'] & string, GuaranteeValue<G, TopKDomains[Name]['guaranteeMin']>, TopKDomains[Name]['max']>>] extends [never]
    ? [Named<Name, ValidateIntersection<Min, Max, TopKDomains[Name]['guaranteeMax'] & string, TopKDomains[Name]['min'], GuaranteeValue<G, TopKDomains[Name]['guaranteeMax']>>>] extends [never]
      ? Param
      : Named<Name, ValidateIntersection<Min, Max, TopKDomains[Name]['guaranteeMax'] & string, TopKDomains[Name]['min'], GuaranteeValue<G, TopKDomains[Name]['guaranteeMax']>>>
    : Named<Name, ValidateIntersection<Min, Max, TopKDomains[Name]['guaranteeMin'] & string, GuaranteeValue<G, TopKDomains[Name]['guaranteeMin']>, TopKDomains[Name]['max']>>;

/** Checks the direction's option set against `'max' | 'min'`. */
type ValidateDirection<Param> = [Exclude<InferOptions<Param>, SelectDirection>] extends [never]
  ? Param
  : ErrorMessage<`selectDirection: ${OptionNotInSet<Exclude<InferOptions<Param>, SelectDirection> & string, `'max', 'min'`>}`>;

/**
 * `Args` itself when every parameter's static facts are possible for top-k under the environment's
 * guarantees `G`, else `Args` with each offending field's type replaced by the message in words.
 *
 * @example `k: p.constant(0)` gives `k: '(Error) k: 0 is outside the static bounds [1, 4294967295]'`.
 */
export type ValidateTopKArgs<Args, G = {}> = {
  [Key in keyof Args]: Key extends ParamKeys
    ? Args[Key] extends TopKArgs[Key]
      ? Key extends 'selectDirection'
        ? ValidateDirection<Args[Key]>
        : ValidateNumeric<Args[Key], Key & keyof TopKDomains, G>
      : ErrorMessage<`${Key}: expected ${ExpectedKinds[Key]}`>
    : Args[Key];
};

/** The literal numbers `TopKVariantsFor` reasons with; the same as `topKPolicyLimits`. */
interface StaticLimits {
  reduceMaxK: 8;
  minTileItems: 1024;
  maxTileItems: 4096;
}

type StaticMin<Param, Fallback extends number> = InferBounds<Param> extends { min: infer Min extends number } ? MaxOf<Min, Fallback> : Fallback;
type StaticMax<Param> = InferBounds<Param> extends { max: infer Max extends number } ? Max : number;

type ReduceReachable<KMin> = KnownGreater<KMin, StaticLimits['reduceMaxK']> extends true ? never : 'reduce';
type OnlyReduce<KMax> = KnownGreater<KMax, StaticLimits['reduceMaxK']> extends true ? false : number extends KMax ? false : true;
type TileReachable<SizeMin> = KnownGreater<SizeMin, StaticLimits['maxTileItems']> extends true ? never : 'single-tile';
type RadixReachable<SizeMax> = number extends SizeMax
  ? 'radix-select'
  : KnownGreater<SizeMax, StaticLimits['minTileItems']> extends true
    ? 'radix-select'
    : never;

/**
 * The variants any built-in policy could pick for the static bounds in `Args` (a sound
 * over-approximation of `plan.reachableVariants` on every built-in backend). A forced variant
 * (tuning) is outside this set's promise.
 *
 * @example with `k: p.uniform(k, { min: 1, max: 8 })`: `'reduce'`.
 */
export type TopKVariantsFor<Args> = Args extends { k: infer K; segmentSizes: infer Sizes }
  ?
      | ReduceReachable<StaticMin<K, 1>>
      | (OnlyReduce<StaticMax<K>> extends true ? never : TileReachable<StaticMin<Sizes, 0>> | RadixReachable<StaticMax<Sizes>>)
  : TopKVariant;

/** The guarantees type of an environment. */
export type GuaranteesOf<E> = E extends { guarantees: infer G } ? G : {};
export type { Guarantees };
