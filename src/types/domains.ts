/**
 * The compile-time checks every algorithm's numeric parameters share: a parameter's static bounds
 * against its natural domain and the environment's guarantees, and which size-bounded variants the
 * static bounds can reach. Each algorithm's args.ts names its own domains and limits and reuses these.
 */
import type { ConstantParam, InferBounds, PerSegmentParam, UniformParam } from '../params/param.js';
import type { ValidateIntersection } from './intersect.js';
import type { EmptyGuaranteeIntersection, OutsideStaticBounds } from './messages.js';
import type { KnownGreater, KnownLess, MaxOf, MinOf } from './numeric.js';
import type { ErrorMessage } from './validate.js';

/** A numeric parameter that may vary per segment. */
export type SegmentParam = ConstantParam | UniformParam | PerSegmentParam;
/** A numeric parameter with one value for the whole call. */
export type ScalarParam = ConstantParam | UniformParam;

/**
 * A numeric parameter's natural domain and the environment guarantees that narrow it from below and
 * above (`never` where none does), as literal types; the runtime checks use the same numbers.
 */
export interface NumericDomain {
  min: number;
  max: number;
  guaranteeMin: string;
  guaranteeMax: string;
}

/** The domains of the parameters every segmented algorithm has. */
export interface SegmentDomains {
  segmentSizes: { min: 0; max: 4294967295; guaranteeMin: 'minSegmentSize'; guaranteeMax: 'maxSegmentSize' };
  numSegments: { min: 0; max: 4294967295; guaranteeMin: never; guaranteeMax: 'maxNumSegments' };
  segmentStride: { min: 0; max: 4294967295; guaranteeMin: never; guaranteeMax: never };
  totalNumItems: { min: 0; max: 9007199254740991; guaranteeMin: never; guaranteeMax: 'maxTotalNumItems' };
}

/** The value of guarantee `Key` in the environment's guarantees `G` (`number` when unknown or absent). */
type GuaranteeValue<G, Key> = [Key] extends [never] ? number : Key extends keyof G ? (G[Key] extends number ? G[Key] : number) : number;

/** `Message` prefixed with the parameter's name, as the runtime check prints it. */
type Named<Name extends string, Checked> = Checked extends ErrorMessage<infer Message> ? ErrorMessage<`${Name}: ${Message}`> : never;

/**
 * `Param` itself when its static bounds meet domain `D` and the guarantees `G`, else the message in
 * words, prefixed with `Name`. Bounds that are not literal are left to the runtime check.
 */
export type ValidateNumeric<Param, Name extends string, D extends NumericDomain, G> =
  InferBounds<Param> extends { min: infer Min extends number; max: infer Max extends number }
    ? KnownGreater<D['min'], Max> extends true
      ? OutsideDomain<Param, Name, D, Max, Min, Max>
      : KnownLess<D['max'], Min> extends true
        ? OutsideDomain<Param, Name, D, Min, Min, Max>
        : ValidateGuarantees<Param, Name, D, MaxOf<Min, D['min']>, MinOf<Max, D['max']>, G>
    : Param;

/**
 * One field of an args object, as the planners' validators check it: `any` and `unknown` pass (also
 * the constraint's own fields when an editor asks for completions); a value of the wrong kind reads
 * `<key>: expected <kinds>`; a value of the right kind gets `Checked`, the field's own rule.
 */
export type CheckFieldKind<Value, Key extends string, Expected, Kinds extends string, Checked> = unknown extends Value
  ? Value
  : [Value] extends [Expected]
    ? Checked
    : ErrorMessage<`${Key}: expected ${Kinds}`>;

/** A field's numeric domain check where `Domains` has one for `Key`; else the value as it is. */
export type CheckDomain<Value, Key extends string, Domains, G> = Key extends keyof Domains
  ? Domains[Key] extends NumericDomain
    ? ValidateNumeric<Value, Key, Domains[Key], G>
    : Value
  : Value;

/** A constant outside the domain reads as a value outside the domain's bounds; other kinds as bounds that miss it. */
type OutsideDomain<Param, Name extends string, D extends NumericDomain, Value extends number, Min extends number, Max extends number> = ErrorMessage<`${Name}: ${Param extends ConstantParam
  ? OutsideStaticBounds<Value, D['min'], D['max']>
  : EmptyGuaranteeIntersection<Min, Max, 'domain', D['min'], D['max']>}`>;

type MinGuarantee<Name extends string, D extends NumericDomain, Min extends number, Max extends number, G> = Named<
  Name,
  ValidateIntersection<Min, Max, D['guaranteeMin'] & string, GuaranteeValue<G, D['guaranteeMin']>, D['max']>
>;
type MaxGuarantee<Name extends string, D extends NumericDomain, Min extends number, Max extends number, G> = Named<
  Name,
  ValidateIntersection<Min, Max, D['guaranteeMax'] & string, D['min'], GuaranteeValue<G, D['guaranteeMax']>>
>;

/** The bounds (within the domain) against the environment's lower guarantee, then its upper one. */
type ValidateGuarantees<Param, Name extends string, D extends NumericDomain, Min extends number, Max extends number, G> =
  [MinGuarantee<Name, D, Min, Max, G>] extends [never]
    ? [MaxGuarantee<Name, D, Min, Max, G>] extends [never]
      ? Param
      : MaxGuarantee<Name, D, Min, Max, G>
    : MinGuarantee<Name, D, Min, Max, G>;

/** A parameter's static lower bound, at least `Floor` (`Floor` when it has none). */
export type StaticMin<Param, Floor extends number = 0> = InferBounds<Param> extends { min: infer Min extends number } ? MaxOf<Min, Floor> : Floor;
/** A parameter's static upper bound (`number` when it has none). */
export type StaticMax<Param> = InferBounds<Param> extends { max: infer Max extends number } ? Max : number;

/** `Variant`, which serves sizes up to `Limit`, unless the static lower bound `Min` is above it. */
export type ReachableUpTo<Variant, Min, Limit extends number> = KnownGreater<Min, Limit> extends true ? never : Variant;
/** `Variant`, which serves sizes above `Limit`, unless the static upper bound `Max` is known and at most `Limit`. */
export type ReachableAbove<Variant, Max, Limit extends number> = number extends Max ? Variant : KnownGreater<Max, Limit> extends true ? Variant : never;
