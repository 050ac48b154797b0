import type { IsAny, IsNever } from 'type-fest';
import type {
  EmptyBounds,
  GenericNotChecked,
  NeverValue,
  NotALiteral,
  OptionNotInSet,
  OutsideStaticBounds,
} from './messages.js';
import type { IsIntegerLiteral, IsUnion, KnownGreater, KnownLess } from './numeric.js';

/** `'(Error) '` prefixed to every compile-time message, so it reads as one in editor tooltips. */
export type ErrorMessage<Message extends string> = `(Error) ${Message}`;

/**
 * The messages for each member of `Value` that lies outside `[Min, Max]`; `never` when every member
 * is inside or unknown. Bounds that are not literals (`number`) are not checked.
 */
type OutsideMembers<Value, Min extends number, Max extends number> = Value extends number
  ? KnownLess<Value, Min> extends true
    ? OutsideStaticBounds<Value, BoundText<Min, '-Infinity'>, BoundText<Max, 'Infinity'>>
    : KnownGreater<Value, Max> extends true
      ? OutsideStaticBounds<Value, BoundText<Min, '-Infinity'>, BoundText<Max, 'Infinity'>>
      : never
  : never;

/** A bound as the messages print it: the literal, or the open side of the domain (`-Infinity`, `Infinity`). */
export type BoundText<Bound extends number, Open extends string> = IsIntegerLiteral<Bound> extends true ? Bound : Open;

/**
 * `Value` itself when it can lie inside `[Min, Max]` (literals and unions are checked member by
 * member; `number` and `any` are left to the runtime check), else the message in words.
 *
 * A generic wrapper forwards the check by typing its parameter with it, so the literal is checked
 * where the wrapper is called: `<const K extends number>(k: ValidateValue<K, 1, 8>) => p.uniform(k, { min: 1, max: 8 })`.
 * `Note` is never produced: it is what the compiler prints, as part of this type's name, when a bare
 * type parameter reaches `p.uniform`.
 *
 * @example `ValidateValue<16, 1, 8>` is `'(Error) 16 is outside the static bounds [1, 8]'`.
 */
export type ValidateValue<
  Value,
  Min extends number,
  Max extends number,
  Note extends string = ErrorMessage<GenericNotChecked<'p.uniform', 'ValidateValue<K, Min, Max>'>>,
> =
  IsAny<Value> extends true
    ? Value
    : IsNever<Value> extends true
      ? ErrorMessage<NeverValue>
      : [OutsideMembers<Value, Min, Max>] extends [never]
        ? Value
        : IsEmptyBounds<Min, Max> extends true
          ? Value // the bounds themselves carry the message
          : ErrorMessage<OutsideMembers<Value, Min, Max>>;

/** True when the literal bounds are empty (`Min > Max`). */
export type IsEmptyBounds<Min, Max> = KnownGreater<Min, Max>;

/**
 * The type of a bounds object: `{ min?: Min, max?: Max }`, or, when `Min > Max` are both literal,
 * one whose `min` is the message in words.
 */
export type ValidateBounds<Min extends number, Max extends number> =
  IsEmptyBounds<Min, Max> extends true
    ? { readonly min?: ErrorMessage<EmptyBounds<Min, Max>>; readonly max?: Max }
    : { readonly min?: Min; readonly max?: Max };

/**
 * `Value` when it is one literal number, else the message in words (`number`, unions, `any` and
 * `never` are rejected: a constant must be known exactly).
 *
 * A generic wrapper forwards the check by typing its parameter with it, so the literal is checked
 * where the wrapper is called: `<const K extends number>(k: ValidateConstant<K>) => p.constant(k)`
 * turns `wrapper(8)` into `ConstantParam<8>` and rejects `wrapper(someNumber)` with the message.
 * A bare `(k: K) => p.constant(k)` does not compile: the compiler cannot decide the check for a type
 * parameter, and prints `Note`, which names this fix, as part of this type's name.
 */
export type ValidateConstant<Value, Note extends string = ErrorMessage<GenericNotChecked<'p.constant', 'ValidateConstant<K>'>>> =
  IsAny<Value> extends true
    ? ErrorMessage<NotALiteral<'any'>>
    : IsNever<Value> extends true
      ? ErrorMessage<NeverValue>
      : number extends Value
        ? ErrorMessage<NotALiteral<'number'>>
        : IsUnion<Value> extends true
          ? ErrorMessage<NotALiteral<'a union'>>
          : Value;

/** `'a', 'b'`: a tuple of options joined as the messages print them. */
export type JoinOptions<Options extends readonly string[]> = Options extends readonly [
  infer First extends string,
  ...infer Rest extends readonly string[],
]
  ? Rest extends readonly []
    ? `'${First}'`
    : `'${First}', ${JoinOptions<Rest>}`
  : string;

/**
 * `Option` when each of its members is in `Options` (`string` and `any` are left to the runtime
 * check), else the message in words.
 */
export type ValidateOption<Option, Options extends readonly string[]> =
  IsAny<Option> extends true
    ? Option
    : IsNever<Option> extends true
      ? ErrorMessage<NeverValue>
      : string extends Option
        ? Option
        : [Exclude<Option, Options[number]>] extends [never]
          ? Option
          : ErrorMessage<OptionNotInSet<Exclude<Option, Options[number]> & string, JoinOptions<Options>>>;

/** True when the literal bounds `[Min, Max]` lie inside `[DomainMin, DomainMax]` wherever both sides are literal. */
export type WithinDomain<Min, Max, DomainMin, DomainMax> = KnownLess<Min, DomainMin> extends true
  ? false
  : KnownGreater<Max, DomainMax> extends true
    ? false
    : true;

export type { IsIntegerLiteral };
