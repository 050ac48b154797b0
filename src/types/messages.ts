/**
 * One source for every parameter error message. Each message is a function used by the runtime
 * checks and a type of the same name used by the compile-time checks, so the two read alike
 * (arktype's `writeDoubleRightBoundMessage` pattern). `test/messages.test.ts` and
 * `types-tests/messages.test-d.ts` pin both sides to the same text.
 */

import { type ClosestName, closestName } from './closest-name.js';
import type { JoinOptions } from './validate.js';

/** `${value} is outside the static bounds [${min}, ${max}]` */
export type OutsideStaticBounds<Value extends number | string, Min extends number | string, Max extends number | string> =
  `${Value} is outside the static bounds [${Min}, ${Max}]`;
/** Runtime twin of {@link OutsideStaticBounds}. */
export function outsideStaticBounds<const Value extends number, const Min extends number, const Max extends number>(
  value: Value,
  min: Min,
  max: Max,
): OutsideStaticBounds<Value, Min, Max> {
  return `${value} is outside the static bounds [${min}, ${max}]`;
}

/** `${value} is outside the runtime bounds [${min}, ${max}]` */
export type OutsideRuntimeBounds<Value extends number | string, Min extends number | string, Max extends number | string> =
  `${Value} is outside the runtime bounds [${Min}, ${Max}]`;
/** Runtime twin of {@link OutsideRuntimeBounds}. */
export function outsideRuntimeBounds<const Value extends number, const Min extends number, const Max extends number>(
  value: Value,
  min: Min,
  max: Max,
): OutsideRuntimeBounds<Value, Min, Max> {
  return `${value} is outside the runtime bounds [${min}, ${max}]`;
}

/** `bounds [${min}, ${max}] are empty: min is greater than max` */
export type EmptyBounds<Min extends number | string, Max extends number | string> =
  `bounds [${Min}, ${Max}] are empty: min is greater than max`;
/** Runtime twin of {@link EmptyBounds}. */
export function emptyBounds<const Min extends number, const Max extends number>(min: Min, max: Max): EmptyBounds<Min, Max> {
  return `bounds [${min}, ${max}] are empty: min is greater than max`;
}

/** `runtime bounds [${min}, ${max}] are not within the static bounds [${staticMin}, ${staticMax}]` */
export type RuntimeBoundsOutsideStatic<
  Min extends number | string,
  Max extends number | string,
  StaticMin extends number | string,
  StaticMax extends number | string,
> = `runtime bounds [${Min}, ${Max}] are not within the static bounds [${StaticMin}, ${StaticMax}]`;
/** Runtime twin of {@link RuntimeBoundsOutsideStatic} (runtime bounds exist only at run time; the type is for tests and tooling). */
export function runtimeBoundsOutsideStatic<
  const Min extends number,
  const Max extends number,
  const StaticMin extends number,
  const StaticMax extends number,
>(min: Min, max: Max, staticMin: StaticMin, staticMax: StaticMax): RuntimeBoundsOutsideStatic<Min, Max, StaticMin, StaticMax> {
  return `runtime bounds [${min}, ${max}] are not within the static bounds [${staticMin}, ${staticMax}]`;
}

/** `p.constant needs a single literal number; got ${got}` */
export type NotALiteral<Got extends string> = `p.constant needs a single literal number; got ${Got}`;
/** Runtime twin of {@link NotALiteral} (at runtime only a non-number can be caught). */
export function notALiteral<const Got extends string>(got: Got): NotALiteral<Got> {
  return `p.constant needs a single literal number; got ${got}`;
}

/** `option '${option}' is not one of the options [${options}]` */
export type OptionNotInSet<Option extends string, Options extends string> =
  `option '${Option}' is not one of the options [${Options}]`;
/** Runtime twin of {@link OptionNotInSet}; `options` is joined as `'a', 'b'`. */
export function optionNotInSet<const Option extends string, const Options extends readonly string[]>(
  option: Option,
  options: Options,
): OptionNotInSet<Option, JoinOptions<Options>> {
  // The join builds what JoinOptions spells; the compiler cannot follow a map/join to a template type.
  return `option '${option}' is not one of the options [${options.map((o) => `'${o}'`).join(', ')}]` as OptionNotInSet<
    Option,
    JoinOptions<Options>
  >;
}

/** `bounds [${min}, ${max}] do not intersect the guarantee ${guarantee} [${gMin}, ${gMax}]` */
export type EmptyGuaranteeIntersection<
  Min extends number | string,
  Max extends number | string,
  Guarantee extends string,
  GuaranteeMin extends number | string,
  GuaranteeMax extends number | string,
> = `bounds [${Min}, ${Max}] do not intersect the guarantee ${Guarantee} [${GuaranteeMin}, ${GuaranteeMax}]`;
/** Runtime twin of {@link EmptyGuaranteeIntersection}. */
export function emptyGuaranteeIntersection<
  const Min extends number,
  const Max extends number,
  const Guarantee extends string,
  const GuaranteeMin extends number,
  const GuaranteeMax extends number,
>(
  min: Min,
  max: Max,
  guarantee: Guarantee,
  guaranteeMin: GuaranteeMin,
  guaranteeMax: GuaranteeMax,
): EmptyGuaranteeIntersection<Min, Max, Guarantee, GuaranteeMin, GuaranteeMax> {
  return `bounds [${min}, ${max}] do not intersect the guarantee ${guarantee} [${guaranteeMin}, ${guaranteeMax}]`;
}

/**
 * `${call} cannot check a type parameter: declare your parameter as ${forward}`. Compile time only:
 * a generic wrapper such as `<const K extends number>(k: K) => p.constant(k)` hands the check a type
 * parameter, which the compiler cannot decide until the wrapper is called. The compiler prints this
 * text as part of the parameter's type (`ValidateConstant<K, "(Error) ...">`); the fix it names
 * forwards the check to the wrapper's own callers.
 */
export type GenericNotChecked<Call extends string, Forward extends string> =
  `${Call} cannot check a type parameter: declare your parameter as ${Forward}`;

/** `the value has type never` */
export type NeverValue = 'the value has type never';
/** `${value} is not an integer` */
export type NotAnInteger<Value extends number | string> = `${Value} is not an integer`;
/** Runtime twin of {@link NotAnInteger} (fractions are checked at run time only). */
export function notAnInteger<const Value extends number>(value: Value): NotAnInteger<Value> {
  return `${value} is not an integer`;
}

/**
 * `unknown field '${field}' (did you mean '${closest}'?)`, or, with no known field close enough,
 * `unknown field '${field}'; the fields are 'a', 'b', ...`. `Known` lists the fields in the order the
 * suggestion prefers them (see {@link ClosestName}).
 */
export type UnknownField<Field extends string, Known extends readonly string[]> = [ClosestName<Field, Known>] extends [never]
  ? `unknown field '${Field}'; the fields are ${JoinOptions<Known>}`
  : `unknown field '${Field}' (did you mean '${ClosestName<Field, Known>}'?)`;
/** Runtime twin of {@link UnknownField}. */
export function unknownField<const Field extends string, const Known extends readonly string[]>(
  field: Field,
  known: Known,
): UnknownField<Field, Known> {
  const closest = closestName(field, known);
  // The branches build what UnknownField spells; the compiler cannot follow closestName to ClosestName.
  return (
    closest === undefined
      ? `unknown field '${field}'; the fields are ${known.map((k) => `'${k}'`).join(', ')}`
      : `unknown field '${field}' (did you mean '${closest}'?)`
  ) as UnknownField<Field, Known>;
}

/** `missing required field '${field}'` */
export type MissingField<Field extends string> = `missing required field '${Field}'`;
/** Runtime twin of {@link MissingField}. */
export function missingField<const Field extends string>(field: Field): MissingField<Field> {
  return `missing required field '${field}'`;
}

/** `required when ${input} is given` (an output that an optional input asks for) */
export type RequiredWith<Input extends string> = `required when ${Input} is given`;
/** Runtime twin of {@link RequiredWith}. */
export function requiredWith<const Input extends string>(input: Input): RequiredWith<Input> {
  return `required when ${input} is given`;
}

/** `required when ${parameter} may be ${options}` (an output that some options of a parameter write) */
export type RequiredWhen<Parameter extends string, Options extends string> = `required when ${Parameter} may be ${Options}`;
/** Runtime twin of {@link RequiredWhen}. */
export function requiredWhen<const Parameter extends string, const Options extends string>(parameter: Parameter, options: Options): RequiredWhen<Parameter, Options> {
  return `required when ${parameter} may be ${options}`;
}

/*
 * Messages of the segment geometry and of the device checks. They concern values the compiler
 * never sees (host arrays, device-only values), so they have no type-level twin.
 */

/** `ends at ${end}, past the ${length} ${noun} of ${array}` */
export function pastTheItems(end: number, length: number, noun: string, array: string): string {
  return `ends at ${end}, past the ${length} ${noun} of ${array}`;
}

/** `${size} is larger than segmentStride ${stride}` */
export function largerThanStride(size: number, stride: number): string {
  return `${size} is larger than segmentStride ${stride}`;
}

/** `${value} is outside the device runtime bounds [${min}, ${max}]` */
export function outsideDeviceBounds(value: number, min: number, max: number): string {
  return `${value} is outside the device runtime bounds [${min}, ${max}]`;
}

/** `device runtime bounds [${min}, ${max}] are empty or not within the static bounds` */
export function badDeviceBounds(min: number, max: number): string {
  return `device runtime bounds [${min}, ${max}] are empty or not within the static bounds`;
}
