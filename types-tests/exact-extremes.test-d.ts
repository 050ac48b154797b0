/**
 * Exactness of the compile-time comparison at the extremes: sizes and counts reach billions, so
 * 4294967295 vs 4294967296 and 2^53 - 1 must compare exactly, and negative bounds must order right.
 * Mirror of src/types/numeric.ts (and of every rule that uses it).
 */
import { expectError, expectType } from 'tsd';
import { type UniformParam, p } from 'segkit';
import { type IsIntegerLiteral, type KnownGreater, type KnownLess, type MaxOf, type MinOf } from '../src/types/numeric.js';
import { type ValidateBounds, type ValidateValue } from '../src/types/validate.js';

// 2^32 - 1 vs 2^32.
expectType<UniformParam<0, 4294967295>>(p.uniform(4294967295, { min: 0, max: 4294967295 }));
expectError(p.uniform(4294967296, { min: 0, max: 4294967295 }));
expectType<'(Error) 4294967296 is outside the static bounds [0, 4294967295]'>(null! as ValidateValue<4294967296, 0, 4294967295>);
expectType<'(Error) 4294967295 is outside the static bounds [4294967296, 8589934592]'>(
  null! as ValidateValue<4294967295, 4294967296, 8589934592>,
);
expectType<true>(null! as KnownGreater<4294967296, 4294967295>);
expectType<false>(null! as KnownGreater<4294967295, 4294967296>);
expectType<true>(null! as KnownLess<4294967295, 4294967296>);
expectType<false>(null! as KnownLess<4294967295, 4294967295>);

// 2^53 - 1 (Number.MAX_SAFE_INTEGER) vs its neighbours.
expectType<UniformParam<0, 9007199254740991>>(p.uniform(9007199254740991, { min: 0, max: 9007199254740991 }));
expectError(p.uniform(9007199254740991, { min: 0, max: 9007199254740990 }));
expectType<'(Error) 9007199254740991 is outside the static bounds [0, 9007199254740990]'>(
  null! as ValidateValue<9007199254740991, 0, 9007199254740990>,
);
expectType<true>(null! as KnownGreater<9007199254740991, 9007199254740990>);
expectType<false>(null! as KnownGreater<9007199254740990, 9007199254740991>);
expectType<{ readonly min?: '(Error) bounds [9007199254740991, 9007199254740990] are empty: min is greater than max'; readonly max?: 9007199254740990 }>(
  null! as ValidateBounds<9007199254740991, 9007199254740990>,
);
expectError(p.guarantee({ min: 9007199254740991, max: 9007199254740990 }));
expectType<9007199254740991>(null! as MaxOf<9007199254740990, 9007199254740991>);
expectType<9007199254740990>(null! as MinOf<9007199254740990, 9007199254740991>);

// Different digit counts, where string order and numeric order disagree.
expectType<true>(null! as KnownLess<999999999, 1000000000>);
expectType<true>(null! as KnownLess<9, 10>);
expectType<false>(null! as KnownGreater<9, 10>);

// Negative numbers.
expectType<UniformParam<-2, 8>>(p.uniform(-2, { min: -2, max: 8 }));
expectError(p.uniform(-3, { min: -2, max: 8 }));
expectType<'(Error) -3 is outside the static bounds [-2, 8]'>(null! as ValidateValue<-3, -2, 8>);
expectType<'(Error) -10 is outside the static bounds [-9, -1]'>(null! as ValidateValue<-10, -9, -1>);
expectType<-9>(null! as ValidateValue<-9, -10, -1>);
expectError(p.guarantee({ min: -1, max: -2 }));
expectType<true>(null! as KnownLess<-10, -9>);
expectType<false>(null! as KnownLess<-9, -10>);
expectType<true>(null! as KnownLess<-1, 0>);
expectType<true>(null! as KnownGreater<1, -1>);
expectType<-9>(null! as MaxOf<-10, -9>);

// What counts as one integer literal: not `number`, unions, `any`, `never`, fractions or exponent forms.
expectType<true>(null! as IsIntegerLiteral<4294967296>);
expectType<true>(null! as IsIntegerLiteral<-3>);
expectType<true>(null! as IsIntegerLiteral<9007199254740991>);
expectType<false>(null! as IsIntegerLiteral<number>);
expectType<false>(null! as IsIntegerLiteral<1 | 2>);
expectType<false>(null! as IsIntegerLiteral<any>);
expectType<false>(null! as IsIntegerLiteral<never>);
expectType<false>(null! as IsIntegerLiteral<1.5>);
expectType<false>(null! as IsIntegerLiteral<1e21>);
// Comparisons involving anything but two integer literals know nothing.
expectType<false>(null! as KnownGreater<number, 1>);
expectType<false>(null! as KnownGreater<any, 1>);
expectType<false>(null! as KnownLess<never, 1>);
expectType<false>(null! as KnownLess<1 | 2, 3>);
