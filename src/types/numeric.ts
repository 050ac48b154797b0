import type { GreaterThan, IsAny, IsNever, LessThan } from 'type-fest';

/**
 * True when `N` is one integer literal (`16`, `-3`, `4294967296`), false for `number`, unions,
 * fractions and exponent forms. Comparison of such literals is exact for every safe integer
 * (type-fest compares their digit strings). Fractional literals are not compared at compile time:
 * they are left to the runtime check, which uses the same message.
 */
export type IsIntegerLiteral<N> = IsAny<N> extends true
  ? false
  : IsNever<N> extends true
    ? false
    : number extends N
      ? false
      : IsUnion<N> extends true
        ? false
        : N extends number
          ? `${N}` extends `${bigint}`
            ? true
            : false
          : false;

/** True when `T` is a union of two or more members. */
export type IsUnion<T, All = T> = T extends unknown ? ([All] extends [T] ? false : true) : never;

/** `A < B` where both are integer literals; `false` where either is not (nothing is known). */
export type KnownLess<A, B> = [IsIntegerLiteral<A>, IsIntegerLiteral<B>] extends [true, true]
  ? LessThan<A & number, B & number>
  : false;

/** `A > B` where both are integer literals; `false` where either is not. */
export type KnownGreater<A, B> = [IsIntegerLiteral<A>, IsIntegerLiteral<B>] extends [true, true]
  ? GreaterThan<A & number, B & number>
  : false;

/** The larger of two bounds where both are literals; else whichever is a literal, else `number`. */
export type MaxOf<A extends number, B extends number> = IsIntegerLiteral<A> extends true
  ? IsIntegerLiteral<B> extends true
    ? GreaterThan<A, B> extends true
      ? A
      : B
    : A
  : B;

/** The smaller of two bounds where both are literals; else whichever is a literal, else `number`. */
export type MinOf<A extends number, B extends number> = IsIntegerLiteral<A> extends true
  ? IsIntegerLiteral<B> extends true
    ? LessThan<A, B> extends true
      ? A
      : B
    : A
  : B;
