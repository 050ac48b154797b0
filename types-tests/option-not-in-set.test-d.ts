/**
 * Compile-time rule: an option outside its set (`p.uniformOption`). Mirror of `ValidateOption` in
 * src/types/validate.ts; the runtime twin is in test/resolve.test.ts.
 */
import { expectError, expectType } from 'tsd';
import type { IsAny } from 'type-fest';
import { type ConstantOptionParam, type PerSegmentOptionParam, type UniformOptionParam, p } from 'segkit';
import { type OptionNotInSet, optionNotInSet } from '../src/types/messages.js';
import { type ValidateOption } from '../src/types/validate.js';

type Directions = readonly ['max', 'min'];
declare const someString: string;
declare const direction: 'max' | 'min';
declare const maxOrMedian: 'max' | 'median';
declare const anything: any;
declare const nothing: never;

// Passing: options in the set; `string` and `any` are left to the runtime check.
expectType<UniformOptionParam<'max' | 'min'>>(p.uniformOption('max', ['max', 'min']));
expectType<UniformOptionParam<'max' | 'min'>>(p.uniformOption(direction, ['max', 'min']));
expectType<UniformOptionParam<'max' | 'min'>>(p.uniformOption(someString, ['max', 'min']));
expectType<UniformOptionParam<'max' | 'min'>>(p.uniformOption(anything, ['max', 'min']));
// `never` is assignable to every parameter type, so a call with it compiles (the code is unreachable).
expectType<UniformOptionParam<'max' | 'min'>>(p.uniformOption(nothing, ['max', 'min']));
expectType<ConstantOptionParam<'max'>>(p.constantOption('max'));
expectType<PerSegmentOptionParam<'max' | 'min'>>(p.perSegmentOption(['max', 'min', 'max'], ['max', 'min']));

// Failing: a literal, or a union member, outside the set.
expectError(p.uniformOption('median', ['max', 'min']));
expectError(p.uniformOption(maxOrMedian, ['max', 'min']));
expectError(p.perSegmentOption(['max', 'median'], ['max', 'min']));

// The exact text.
expectType<"(Error) option 'median' is not one of the options ['max', 'min']">(null! as ValidateOption<'median', Directions>);
expectType<"(Error) option 'median' is not one of the options ['max', 'min']">(null! as ValidateOption<'max' | 'median', Directions>);
expectType<"(Error) option 'a' is not one of the options ['b']" | "(Error) option 'c' is not one of the options ['b']">(
  null! as ValidateOption<'a' | 'b' | 'c', readonly ['b']>,
);
expectType<'(Error) the value has type never'>(null! as ValidateOption<never, Directions>);
expectType<'max'>(null! as ValidateOption<'max', Directions>);
expectType<'max' | 'min'>(null! as ValidateOption<'max' | 'min', Directions>);
expectType<string>(null! as ValidateOption<string, Directions>);
expectType<true>(null! as IsAny<ValidateOption<any, Directions>>);

// One message source: the runtime joins the set exactly as the type does.
expectType<OptionNotInSet<'median', "'max', 'min'">>(optionNotInSet('median', ['max', 'min']));
expectType<"option 'median' is not one of the options ['max', 'min']">(optionNotInSet('median', ['max', 'min']));
