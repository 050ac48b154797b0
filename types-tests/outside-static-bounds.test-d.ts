/**
 * Compile-time rule: a literal outside its static bounds (`p.uniform`). Mirror of
 * `ValidateValue` in src/types/validate.ts; the runtime twin is tested in test/resolve.test.ts.
 */
import { expectError, expectType } from 'tsd';
import type { IsAny } from 'type-fest';
import { type UniformParam, p } from 'segkit';
import { type OutsideStaticBounds, outsideStaticBounds } from '../src/types/messages.js';
import { type ValidateValue } from '../src/types/validate.js';

declare const someNumber: number;
declare const oneOrSixteen: 1 | 16;
declare const inside: 2 | 8;
declare const anything: any;
declare const nothing: never;

// Passing: literals inside (bounds inclusive), `number` and `any` are left to the runtime check.
expectType<UniformParam<1, 8>>(p.uniform(1, { min: 1, max: 8 }));
expectType<UniformParam<1, 8>>(p.uniform(8, { min: 1, max: 8 }));
expectType<UniformParam<1, 8>>(p.uniform(inside, { min: 1, max: 8 }));
expectType<UniformParam<1, 8>>(p.uniform(someNumber, { min: 1, max: 8 }));
expectType<UniformParam<1, 8>>(p.uniform(anything, { min: 1, max: 8 }));
expectType<UniformParam<number, number>>(p.uniform(1e9));
// `never` is assignable to every parameter type, so a call with it compiles (the code is unreachable).
expectType<UniformParam<1, 8>>(p.uniform(nothing, { min: 1, max: 8 }));

// Failing: a literal, or a union member, outside the bounds; an omitted side prints as the open domain.
expectError(p.uniform(16, { min: 1, max: 8 }));
expectError(p.uniform(0, { min: 1, max: 8 }));
expectError(p.uniform(oneOrSixteen, { min: 1, max: 8 }));
expectError(p.uniform(16, { max: 8 }));
expectError(p.uniform(0, { min: 1 }));

// The exact text.
expectType<'(Error) 16 is outside the static bounds [1, 8]'>(null! as ValidateValue<16, 1, 8>);
expectType<'(Error) 0 is outside the static bounds [1, 8]'>(null! as ValidateValue<0, 1, 8>);
expectType<'(Error) 16 is outside the static bounds [1, 8]'>(null! as ValidateValue<1 | 16, 1, 8>);
expectType<'(Error) 0 is outside the static bounds [1, 8]' | '(Error) 16 is outside the static bounds [1, 8]'>(
  null! as ValidateValue<0 | 1 | 16, 1, 8>,
);
expectType<'(Error) 16 is outside the static bounds [-Infinity, 8]'>(null! as ValidateValue<16, number, 8>);
expectType<'(Error) 0 is outside the static bounds [1, Infinity]'>(null! as ValidateValue<0, 1, number>);
expectType<'(Error) the value has type never'>(null! as ValidateValue<never, 1, 8>);
expectType<8>(null! as ValidateValue<8, 1, 8>);
expectType<2 | 8>(null! as ValidateValue<2 | 8, 1, 8>);
expectType<number>(null! as ValidateValue<number, 1, 8>);
expectType<true>(null! as IsAny<ValidateValue<any, 1, 8>>);
// Bounds that are not literals check nothing.
expectType<16>(null! as ValidateValue<16, number, number>);

// One message source: the type and the runtime function give the same text.
expectType<OutsideStaticBounds<16, 1, 8>>(outsideStaticBounds(16, 1, 8));
expectType<`(Error) ${OutsideStaticBounds<16, 1, 8>}`>(null! as ValidateValue<16, 1, 8>);
