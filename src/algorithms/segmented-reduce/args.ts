import type { DeviceArray } from '../../backends/backend.js';
import type { GuaranteeParam, InferOptions, OptionParam } from '../../params/param.js';
import type { OptionNotInSet, RequiredWhen } from '../../types/messages.js';
import type { ReachableAbove, ReachableUpTo, ScalarParam, SegmentDomains, SegmentParam, StaticMax, StaticMin, ValidateNumeric } from '../../types/domains.js';
import type { ErrorMessage } from '../../types/validate.js';
import type { ReduceOp } from './ops.js';
import type { SegmentedReduceVariant } from './policy.js';


/** The arguments of {@link DeviceSegmentedReduce}. */
export interface SegmentedReduceArgs {
  /** All segments' values: `f32`, `i32` or `u32`. */
  readonly valuesIn: DeviceArray<'f32' | 'i32' | 'u32'>;
  /** One result per segment, of the same dtype (for `argMin`/`argMax`: the extreme value). */
  readonly valuesOut: DeviceArray<'f32' | 'i32' | 'u32'>;
  /** One segment-local index per segment (`u32` or `i32`): where the extreme is; required for `argMin`/`argMax`. */
  readonly indicesOut?: DeviceArray<'u32' | 'i32'> | undefined;
  /** Segment sizes: constant, uniform or per-segment. */
  readonly segmentSizes: SegmentParam;
  /** Segment `i` starts at `i * stride`; without it segments are packed. */
  readonly segmentStride?: ScalarParam | undefined;
  /** Number of segments: constant or uniform (a number, or a 1-element DeviceArray). */
  readonly numSegments: ScalarParam;
  /** A guarantee on the total number of values. */
  readonly totalNumItems?: GuaranteeParam | undefined;
  /** `'sum'`, `'min'`, `'max'`, `'argMin'` or `'argMax'`: constant, uniform or per-segment. */
  readonly op: OptionParam;
  /** Folded into each segment's reduction (an empty segment gives it): constant, uniform or per-segment, in the values' type. */
  readonly initialValue?: SegmentParam | undefined;
}

/** The arguments of the fixed-op shorthands (`sum`, `argMax`, ...). */
export type SegmentedReduceArgsWithoutOp = Omit<SegmentedReduceArgs, 'op'>;

type ParamKeys = 'segmentSizes' | 'numSegments' | 'segmentStride' | 'totalNumItems' | 'op' | 'initialValue';

/**
 * The constraint the API's type parameter uses: {@link SegmentedReduceArgs} with every parameter
 * loosened to `{ kind }`, so that inline parameters keep their literal bounds; the exact shape is
 * checked by {@link ValidateSegmentedReduceArgs}.
 */
export type SegmentedReduceArgsShape = {
  readonly [Key in keyof SegmentedReduceArgs]: Key extends ParamKeys ? { readonly kind: string } | undefined : SegmentedReduceArgs[Key];
};
/** {@link SegmentedReduceArgsShape} without `op`. */
export type SegmentedReduceArgsShapeWithoutOp = Omit<SegmentedReduceArgsShape, 'op'>;

/** What each parameter may be, for the messages. */
interface ExpectedKinds {
  segmentSizes: 'p.constant, p.uniform or p.perSegment';
  numSegments: 'p.constant or p.uniform';
  segmentStride: 'p.constant or p.uniform';
  totalNumItems: 'p.guarantee';
  op: 'p.constantOption, p.uniformOption or p.perSegmentOption';
  initialValue: 'p.constant, p.uniform or p.perSegment';
}

/**
 * The natural domain of each count of reduce, as literal types (the runtime uses the same numbers).
 * `initialValue` is a value of the data, any number at compile time; its type's range is checked at
 * run time, where the dtype is known.
 */
export interface SegmentedReduceDomains extends SegmentDomains {}

/** Checks the op's option set against the ops reduce has. */
type ValidateOp<Param> = string extends InferOptions<Param>
  ? Param // not literal (an args object annotated with SegmentedReduceArgs): checked at run time
  : [Exclude<InferOptions<Param>, ReduceOp>] extends [never]
  ? Param
  : ErrorMessage<`op: ${OptionNotInSet<Exclude<InferOptions<Param>, ReduceOp> & string, `'sum', 'min', 'max', 'argMin', 'argMax'`>}`>;

/** The arg ops need `indicesOut`: an op whose set holds one, without `indicesOut`, is a mistake. */
type IndicesRequired<Args> = Args extends { op: infer Op }
  ? [Extract<InferOptions<Op>, 'argMin' | 'argMax'>] extends [never]
    ? false
    : Args extends { indicesOut: DeviceArray } ? false : true
  : false;

type Known = keyof SegmentedReduceArgs;

/**
 * `Args` itself when every field is one reduce has and every parameter's static facts are possible
 * under the environment's guarantees `G`, else `Args` with each offending field's type replaced by
 * the message in words (an unknown field, a count outside its domain, an op reduce has not, an arg
 * op without `indicesOut`).
 *
 * @example `op: p.constantOption('argMax')` without `indicesOut` gives
 * `op: "(Error) indicesOut: required when op may be 'argMin' or 'argMax'"`.
 */
export type ValidateSegmentedReduceArgs<Args, G = {}> = {
  [Key in keyof Args]: Key extends Known
    ? Key extends ParamKeys
      ? Args[Key] extends SegmentedReduceArgs[Key]
        ? Key extends 'op'
          ? IndicesRequired<Args> extends true
            ? ErrorMessage<`indicesOut: ${RequiredWhen<'op', `'argMin' or 'argMax'`>}`>
            : ValidateOp<Args[Key]>
          : Key extends keyof SegmentedReduceDomains
            ? ValidateNumeric<Args[Key], Key, SegmentedReduceDomains[Key], G>
            : Args[Key]
        : ErrorMessage<`${Key}: expected ${ExpectedKinds[Key]}`>
      : Args[Key]
    : ErrorMessage<`unknown field '${Key & string}'`>;
};

/** The literal numbers `SegmentedReduceVariantsFor` reasons with; the same as `segmentedReducePolicyLimits` (policy.ts). */
interface StaticLimits {
  threadMaxItems: 16;
  subgroupMaxItems: 8192;
  multiWorkgroupMinItems: 32768;
}

/** A variant for sizes in (`Above`, `AtMost`]: reachable unless the static bounds miss that range. */
type Reachable<Variant, Sizes, Above extends number, AtMost extends number> = ReachableUpTo<ReachableAbove<Variant, StaticMax<Sizes>, Above>, StaticMin<Sizes>, AtMost>;

/**
 * The variants any built-in policy could pick for the static segment-size bounds in `Args` (a sound
 * over-approximation of `plan.reachableVariants` on every built-in backend). A forced variant
 * (tuning) is outside this set's promise.
 *
 * @example with `segmentSizes: p.constant(8)`: `'thread'`; with `p.perSegment(sizes, { min: 100000 })`: `'multi-workgroup'` (and `'workgroup'`, which its device-side branch may take, only when the minimum fits one chunk).
 */
export type SegmentedReduceVariantsFor<Args> = Args extends { segmentSizes: infer Sizes }
  ?
      | ReachableUpTo<'thread', StaticMin<Sizes>, StaticLimits['threadMaxItems']>
      | Reachable<'subgroup', Sizes, StaticLimits['threadMaxItems'], StaticLimits['subgroupMaxItems']>
      | Reachable<'workgroup', Sizes, StaticLimits['subgroupMaxItems'], StaticLimits['multiWorkgroupMinItems']>
      | ReachableAbove<'multi-workgroup', StaticMax<Sizes>, StaticLimits['multiWorkgroupMinItems']>
  : SegmentedReduceVariant;
