import type { DeviceArray } from '../../backends/backend.js';
import type { GuaranteeParam, InferOptions, OptionParam } from '../../params/param.js';
import type { FieldsShape, ValidateFields } from '../../types/fields.js';
import type { OptionNotInSet } from '../../types/messages.js';
import type { CheckDomain, CheckFieldKind, ReachableAbove, ReachableUpTo, ScalarParam, SegmentDomains, SegmentParam, StaticMax, StaticMin } from '../../types/domains.js';
import type { ErrorMessage } from '../../types/validate.js';
import type { SortOrder } from './keys.js';
import type { SegmentedSortVariant } from './policy.js';

/**
 * The arguments of {@link DeviceSegmentedSort} (docs/segmented-sort.md states their contract).
 * Outputs have the input's layout: segment i's sorted keys land where its keys were.
 */
export interface SegmentedSortArgs {
  /** All segments' keys: `f32`, `i32` or `u32`. */
  readonly keysIn: DeviceArray<'f32' | 'i32' | 'u32'>;
  /** The sorted keys, same dtype and layout (at least as long as `keysIn`); not `keysIn`. */
  readonly keysOut: DeviceArray<'f32' | 'i32' | 'u32'>;
  /** A payload, one per key, moved with its key. */
  readonly valuesIn?: DeviceArray<'f32' | 'i32' | 'u32'> | undefined;
  /** The payloads in sorted order; without `valuesIn`, each key's segment-local index (an argsort; `u32`, `i32` or `f32`). */
  readonly valuesOut?: DeviceArray<'f32' | 'i32' | 'u32'> | undefined;
  /** Segment sizes: constant, uniform or per-segment. */
  readonly segmentSizes: SegmentParam;
  /** Segment `i` starts at `i * stride`; without it segments are packed. */
  readonly segmentStride?: ScalarParam | undefined;
  /** `'ascending'` or `'descending'`: constant, uniform or per-segment. */
  readonly order: OptionParam;
  /** Number of segments: constant or uniform (a number, or a 1-element DeviceArray). */
  readonly numSegments: ScalarParam;
  /** A guarantee on the total number of keys, which sizes the radix sort's double buffer. */
  readonly totalNumItems?: GuaranteeParam | undefined;
}

/** The fields of {@link SegmentedSortArgs}, in the order messages list them, and the required ones. */
export const segmentedSortFields = ['keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'order', 'numSegments', 'totalNumItems'] as const;
/** The fields every sort call needs. */
export const segmentedSortRequired = ['keysIn', 'keysOut', 'segmentSizes', 'order', 'numSegments'] as const;

/** Every field of {@link SegmentedSortArgs} is listed (the list type admits no other name). */
const everyFieldListed: Exclude<keyof SegmentedSortArgs, (typeof segmentedSortFields)[number]> extends never ? true : false = true;
void everyFieldListed;

/** The constraint of the API's type parameter (with `| object`): every field, optional and of any type; {@link ValidateSegmentedSortArgs} checks each. */
export type SegmentedSortArgsShape = FieldsShape<typeof segmentedSortFields>;

interface ExpectedKinds {
  keysIn: 'a DeviceArray of f32, i32 or u32 keys';
  keysOut: 'a DeviceArray of f32, i32 or u32 keys';
  valuesIn: 'a DeviceArray of f32, i32 or u32 values';
  valuesOut: 'a DeviceArray of f32, i32 or u32 values';
  segmentSizes: 'p.constant, p.uniform or p.perSegment';
  numSegments: 'p.constant or p.uniform';
  segmentStride: 'p.constant or p.uniform';
  totalNumItems: 'p.guarantee';
  order: 'p.constantOption, p.uniformOption or p.perSegmentOption';
}

/** The natural domain of each numeric parameter of the sort, as literal types (the runtime uses the same numbers). */
export interface SegmentedSortDomains extends SegmentDomains {}

/** Checks the order's option set against `'ascending' | 'descending'` (a set that is not literal is left to the runtime check). */
type ValidateOrder<Param> = string extends InferOptions<Param>
  ? Param
  : [Exclude<InferOptions<Param>, SortOrder>] extends [never]
    ? Param
    : ErrorMessage<`order: ${OptionNotInSet<Exclude<InferOptions<Param>, SortOrder> & string, `'ascending', 'descending'`>}`>;

type ExpectedType<Key extends keyof SegmentedSortArgs> = Key extends (typeof segmentedSortRequired)[number] ? Exclude<SegmentedSortArgs[Key], undefined> : SegmentedSortArgs[Key];

type CheckSortField<Value, Key extends keyof SegmentedSortArgs, G> = CheckFieldKind<
  Value,
  Key,
  ExpectedType<Key>,
  ExpectedKinds[Key],
  Key extends 'order' ? ValidateOrder<Value> : CheckDomain<Value, Key, SegmentedSortDomains, G>
>;

/**
 * `Args` itself when it is a valid sort call under the environment's guarantees `G`; otherwise a type
 * with the message in words on each offending field: an unknown or missing field, a parameter of the
 * wrong kind, an order the sort has not (`order: "(Error) order: 'up' is not one of 'ascending', 'descending'"`),
 * static bounds outside the domain or the guarantees.
 */
export type ValidateSegmentedSortArgs<Args, G = {}> = ValidateFields<
  Args,
  typeof segmentedSortFields,
  (typeof segmentedSortRequired)[number],
  { [Key in keyof Args & keyof SegmentedSortArgs]: CheckSortField<Args[Key], Key, G> }
>;

/** The literal numbers `SegmentedSortVariantsFor` reasons with; the same as `segmentedSortPolicyLimits`. */
interface StaticLimits {
  minTileItems: 1024;
  maxTileItems: 4096;
  mergeMaxSegmentItems: 65536;
}


/**
 * The variants any built-in policy could pick for the static segment-size bounds in `Args` (a sound
 * over-approximation of `plan.reachableVariants` on every built-in backend). A forced variant
 * (tuning) is outside this set's promise. Segments past the tile go to 'merge' where the host bound
 * is at most `mergeMaxSegmentItems` on a backend with many workgroup slots (the host bound and the
 * backend are not static), else to 'workgroup-radix' or 'radix' by the number of segments, which the
 * static bounds do not know, and a backend with little workgroup memory has no 'workgroup-radix':
 * both stay in the set whenever a segment may pass the tile, and 'merge' unless every segment is
 * longer than `mergeMaxSegmentItems`.
 *
 * @example with `segmentSizes: p.constant(256)`: `'single-tile'`; with `p.perSegment(sizes, { min: 5000 })`: `'merge' | 'workgroup-radix' | 'radix'`; with `p.constant(100000)`: `'workgroup-radix' | 'radix'`.
 */
export type SegmentedSortVariantsFor<Args> = Args extends { segmentSizes: infer Sizes }
  ?
      | ReachableUpTo<'single-tile', StaticMin<Sizes>, StaticLimits['maxTileItems']>
      | ReachableUpTo<ReachableAbove<'merge', StaticMax<Sizes>, StaticLimits['minTileItems']>, StaticMin<Sizes>, StaticLimits['mergeMaxSegmentItems']>
      | ReachableAbove<'workgroup-radix' | 'radix', StaticMax<Sizes>, StaticLimits['minTileItems']>
  : SegmentedSortVariant;
