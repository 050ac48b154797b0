import type { DeviceArray } from '../../backends/backend.js';
import type { GuaranteeParam } from '../../params/param.js';
import type { CheckDomain, CheckFieldKind, ReachableAbove, ReachableUpTo, ScalarParam, SegmentParam, StaticMax, StaticMin } from '../../types/domains.js';
import type { FieldsShape, ValidateFields } from '../../types/fields.js';
import type { BatchedCopyVariant } from './policy.js';

/**
 * The arguments of {@link DeviceBatchedCopy} (docs/batched-copy.md states their contract). Buffer `i`
 * copies `sizes[i]` elements from `source[sourceOffsets[i]..]` to `destination[destinationOffsets[i]..]`.
 */
export interface BatchedCopyArgs {
  /** Where every buffer is read: `f32`, `i32` or `u32`. */
  readonly source: DeviceArray<'f32' | 'i32' | 'u32'>;
  /** Where every buffer is written: the same dtype, another array than `source`. */
  readonly destination: DeviceArray<'f32' | 'i32' | 'u32'>;
  /** Where each buffer starts in `source`, in elements: constant, uniform or per-buffer. */
  readonly sourceOffsets: SegmentParam;
  /** Where each buffer starts in `destination`, in elements: constant, uniform or per-buffer. */
  readonly destinationOffsets: SegmentParam;
  /** Elements per buffer: constant, uniform or per-buffer. */
  readonly sizes: SegmentParam;
  /** Number of buffers: constant or uniform (a number, or a 1-element DeviceArray). */
  readonly numBuffers: ScalarParam;
  /** A guarantee on the total number of elements copied. */
  readonly totalNumItems?: GuaranteeParam | undefined;
}

/** The fields of {@link BatchedCopyArgs}, in the order messages list them. */
export const batchedCopyFields = ['source', 'destination', 'sourceOffsets', 'destinationOffsets', 'sizes', 'numBuffers', 'totalNumItems'] as const;
/** The fields every copy call needs. */
export const batchedCopyRequired = ['source', 'destination', 'sourceOffsets', 'destinationOffsets', 'sizes', 'numBuffers'] as const;

/** Every field of {@link BatchedCopyArgs} is listed (the list type admits no other name). */
const everyFieldListed: Exclude<keyof BatchedCopyArgs, (typeof batchedCopyFields)[number]> extends never ? true : false = true;
void everyFieldListed;

/** The constraint of the API's type parameter (with `| object`): every field, optional and of any type; {@link ValidateBatchedCopyArgs} checks each. */
export type BatchedCopyArgsShape = FieldsShape<typeof batchedCopyFields>;

interface ExpectedKinds {
  source: 'a DeviceArray of f32, i32 or u32 elements';
  destination: 'a DeviceArray of f32, i32 or u32 elements';
  sourceOffsets: 'p.constant, p.uniform or p.perSegment';
  destinationOffsets: 'p.constant, p.uniform or p.perSegment';
  sizes: 'p.constant, p.uniform or p.perSegment';
  numBuffers: 'p.constant or p.uniform';
  totalNumItems: 'p.guarantee';
}

/** The natural domain of each numeric parameter of the copy, as literal types (the runtime uses the same numbers). */
export interface BatchedCopyDomains {
  sizes: { min: 0; max: 4294967295; guaranteeMin: 'minSegmentSize'; guaranteeMax: 'maxSegmentSize' };
  sourceOffsets: { min: 0; max: 4294967295; guaranteeMin: never; guaranteeMax: never };
  destinationOffsets: { min: 0; max: 4294967295; guaranteeMin: never; guaranteeMax: never };
  numBuffers: { min: 0; max: 4294967295; guaranteeMin: never; guaranteeMax: 'maxNumSegments' };
  totalNumItems: { min: 0; max: 9007199254740991; guaranteeMin: never; guaranteeMax: 'maxTotalNumItems' };
}
type Domains = BatchedCopyDomains;

type ExpectedType<Key extends keyof BatchedCopyArgs> = Key extends (typeof batchedCopyRequired)[number] ? Exclude<BatchedCopyArgs[Key], undefined> : BatchedCopyArgs[Key];

type CheckCopyField<Value, Key extends keyof BatchedCopyArgs, G> = CheckFieldKind<Value, Key, ExpectedType<Key>, ExpectedKinds[Key], CheckDomain<Value, Key, Domains, G>>;

/**
 * `Args` itself when it is a valid copy call under the environment's guarantees `G`; otherwise a type
 * with the message in words on each offending field: an unknown or missing field
 * (`"(Error) unknown field 'size' (did you mean 'sizes'?)"`), a parameter of the wrong kind
 * (`numBuffers: "(Error) numBuffers: expected p.constant or p.uniform"`), static bounds outside the
 * domain or the guarantees.
 */
export type ValidateBatchedCopyArgs<Args, G = {}> = ValidateFields<
  Args,
  typeof batchedCopyFields,
  (typeof batchedCopyRequired)[number],
  { [Key in keyof Args & keyof BatchedCopyArgs]: CheckCopyField<Args[Key], Key, G> }
>;

/** The literal numbers `BatchedCopyVariantsFor` reasons with; the same as `batchedCopyPolicyLimits` (policy.ts). */
interface StaticLimits {
  teamMaxItems: 1024;
  workgroupMaxItems: 16384;
}

/**
 * The variants any built-in policy could pick for the static buffer-size bounds in `Args` (a sound
 * over-approximation of `plan.reachableVariants` on every built-in backend: the selector reads the
 * largest size the bounds allow). A forced variant (tuning) is outside this set's promise.
 *
 * @example with `sizes: p.constant(64)`: `'team'`; with `p.perSegment(sizes, { min: 20000 })`: `'chunked'`.
 */
export type BatchedCopyVariantsFor<Args> = Args extends { sizes: infer Sizes }
  ?
      | ReachableUpTo<'team', StaticMin<Sizes>, StaticLimits['teamMaxItems']>
      | ReachableUpTo<ReachableAbove<'workgroup', StaticMax<Sizes>, StaticLimits['teamMaxItems']>, StaticMin<Sizes>, StaticLimits['workgroupMaxItems']>
      | ReachableAbove<'chunked', StaticMax<Sizes>, StaticLimits['workgroupMaxItems']>
  : BatchedCopyVariant;
