import type { DeviceArray } from '../../backends/backend.js';
import type { GuaranteeParam, InferOptions, OptionParam } from '../../params/param.js';
import type { OptionNotInSet } from '../../types/messages.js';
import type { ReachableAbove, ReachableUpTo, ScalarParam, SegmentDomains, SegmentParam, StaticMax, StaticMin, ValidateNumeric } from '../../types/domains.js';
import type { ErrorMessage } from '../../types/validate.js';
import type { ScanMode, ScanOp } from './order.js';
import type { ScanVariant } from './policy.js';

/** The arguments of {@link DeviceSegmentedScan}. */
export interface ScanArgs {
  /** All segments' values: `f32`, `i32` or `u32`. */
  readonly valuesIn: DeviceArray<'f32' | 'i32' | 'u32'>;
  /**
   * The scans, in the same layout: segment i's outputs at its items' positions (elements outside
   * every segment are left as they are). Same dtype, at least as long as `valuesIn`, not the same array.
   */
  readonly valuesOut: DeviceArray<'f32' | 'i32' | 'u32'>;
  /** Segment sizes: constant, uniform or per-segment. */
  readonly segmentSizes: SegmentParam;
  /** Segment `i` starts at `i * stride`; without it segments are packed. */
  readonly segmentStride?: ScalarParam | undefined;
  /** Number of segments: constant or uniform (a number, or a 1-element DeviceArray). */
  readonly numSegments: ScalarParam;
  /** A guarantee on the total number of items. */
  readonly totalNumItems?: GuaranteeParam | undefined;
  /** `'sum'`, `'min'` or `'max'`: constant, uniform or per-segment. */
  readonly op: OptionParam;
  /** `'inclusive'` or `'exclusive'`: constant, uniform or per-segment. */
  readonly mode: OptionParam;
  /**
   * A value of the values' type: an exclusive scan's first output, folded first into an inclusive
   * one. Constant, uniform or per-segment, on the host or the device. Without it an exclusive scan
   * starts with the operator's identity.
   */
  readonly initialValue?: SegmentParam | undefined;
}

/** The arguments of the shorthands (`inclusiveSum`, ...): without `op` and `mode`. */
export type ScanArgsWithoutOpAndMode = Omit<ScanArgs, 'op' | 'mode'>;

type ParamKeys = 'segmentSizes' | 'numSegments' | 'segmentStride' | 'totalNumItems' | 'op' | 'mode' | 'initialValue';

/**
 * The constraint the API's type parameter uses: {@link ScanArgs} with every parameter loosened to
 * `{ kind }`, so that inline parameters keep their literal bounds; {@link ValidateScanArgs} checks
 * the exact shape.
 */
export type ScanArgsShape = {
  readonly [Key in keyof ScanArgs]: Key extends ParamKeys ? { readonly kind: string } | undefined : ScanArgs[Key];
};
/** {@link ScanArgsShape} without `op` and `mode`. */
export type ScanArgsShapeWithoutOpAndMode = Omit<ScanArgsShape, 'op' | 'mode'>;

/** What each parameter may be, for the messages. */
interface ExpectedKinds {
  segmentSizes: 'p.constant, p.uniform or p.perSegment';
  numSegments: 'p.constant or p.uniform';
  segmentStride: 'p.constant or p.uniform';
  totalNumItems: 'p.guarantee';
  op: 'p.constantOption, p.uniformOption or p.perSegmentOption';
  mode: 'p.constantOption, p.uniformOption or p.perSegmentOption';
  initialValue: 'p.constant, p.uniform or p.perSegment';
}

/** The natural domain of each numeric parameter of the scan (the runtime uses the same numbers). */
export interface ScanDomains extends SegmentDomains {}

/** `initialValue`'s domain: the values' type, where the compiler knows it (f32 and unknown types: unchecked). */
type InitialValueDomain<Values> = [Values] extends [DeviceArray<'u32'>]
  ? { min: 0; max: 4294967295; guaranteeMin: never; guaranteeMax: never }
  : [Values] extends [DeviceArray<'i32'>]
    ? { min: -2147483648; max: 2147483647; guaranteeMin: never; guaranteeMax: never }
    : { min: number; max: number; guaranteeMin: never; guaranteeMax: never };

/** Checks an option set against the options the scan supports. */
type ValidateOptions<Param, Name extends string, Supported extends string, Listed extends string> = string extends InferOptions<Param>
  ? Param // not literal (an args object annotated with ScanArgs): checked at run time
  : [Exclude<InferOptions<Param>, Supported>] extends [never]
  ? Param
  : ErrorMessage<`${Name}: ${OptionNotInSet<Exclude<InferOptions<Param>, Supported> & string, Listed>}`>;

/**
 * `Args` itself when every field is one the scan has and every parameter's static facts are possible
 * for the scan under the environment's guarantees `G`, else `Args` with each offending field's type
 * replaced by the message in words (an unknown field, an option outside the scan's sets, a value
 * outside its domain or guarantees).
 *
 * @example `op: p.constantOption('product')` gives
 * `op: "(Error) op: option 'product' is not one of the options ['sum', 'min', 'max']"`.
 */
export type ValidateScanArgs<Args, G = {}> = {
  [Key in keyof Args]: Key extends keyof ScanArgs
    ? Key extends ParamKeys
      ? Args[Key] extends ScanArgs[Key]
        ? Key extends 'op'
          ? ValidateOptions<Args[Key], 'op', ScanOp, `'sum', 'min', 'max'`>
          : Key extends 'mode'
            ? ValidateOptions<Args[Key], 'mode', ScanMode, `'inclusive', 'exclusive'`>
            : Key extends 'initialValue'
              ? ValidateNumeric<Args[Key], 'initialValue', InitialValueDomain<Args['valuesIn' & keyof Args]>, G>
              : ValidateNumeric<Args[Key], Key & string, ScanDomains[Key & keyof ScanDomains], G>
        : ErrorMessage<`${Key & string}: expected ${ExpectedKinds[Key]}`>
      : Args[Key]
    : ErrorMessage<`unknown field '${Key & string}'`>;
};

/** The literal numbers `ScanVariantsFor` reasons with; the same as `scanPolicyLimits`. */
interface StaticLimits {
  threadMaxItems: 16;
  workgroupMaxItems: 4096;
}


/**
 * The variants any built-in policy could pick for the static bounds of `segmentSizes` in `Args` (a
 * sound over-approximation of `plan.reachableVariants` on every built-in backend). A forced variant
 * (tuning) is outside this set's promise.
 *
 * @example with `segmentSizes: p.perSegment(sizes, { min: 1, max: 16 })`: `'thread'`.
 */
export type ScanVariantsFor<Args> = Args extends { segmentSizes: infer Sizes }
  ?
      | ReachableUpTo<'thread', StaticMin<Sizes>, StaticLimits['threadMaxItems']>
      | ReachableAbove<'workgroup', StaticMax<Sizes>, StaticLimits['threadMaxItems']>
      | ReachableAbove<'multi-workgroup', StaticMax<Sizes>, StaticLimits['workgroupMaxItems']>
  : ScanVariant;
