/**
 * Compile-time rule: `p.constant` needs one literal number (not `number`, a union, `any`).
 * Mirror of `ValidateConstant` in src/types/validate.ts.
 */
import { expectError, expectType } from 'tsd';
import { type ConstantParam, p } from 'segkit';
import { type NotALiteral, notALiteral } from '../src/types/messages.js';
import { type ValidateConstant } from '../src/types/validate.js';

declare const someNumber: number;
declare const oneOrTwo: 1 | 2;
declare const nothing: never;

// Passing: one literal, of any size or sign; the literal type is kept.
expectType<ConstantParam<8>>(p.constant(8));
expectType<ConstantParam<0>>(p.constant(0));
expectType<ConstantParam<-3>>(p.constant(-3));
expectType<ConstantParam<4294967296>>(p.constant(4294967296));
expectType<ConstantParam<9007199254740991>>(p.constant(9007199254740991));
expectType<8>(p.constant(8).value);
// `never` is assignable to every parameter type, so a call with it compiles (the code is unreachable).
p.constant(nothing);

// Failing: `number`, a union; and a non-number.
expectError(p.constant(someNumber));
expectError(p.constant(oneOrTwo));
expectError(p.constant(Math.random() > 0.5 ? 1 : 2));
expectError(p.constant('8'));

// The exact text.
expectType<'(Error) p.constant needs a single literal number; got number'>(null! as ValidateConstant<number>);
expectType<'(Error) p.constant needs a single literal number; got a union'>(null! as ValidateConstant<1 | 2>);
expectType<'(Error) p.constant needs a single literal number; got any'>(null! as ValidateConstant<any>);
expectType<'(Error) the value has type never'>(null! as ValidateConstant<never>);
expectType<8>(null! as ValidateConstant<8>);
expectType<-1>(null! as ValidateConstant<-1>);

// One message source.
expectType<NotALiteral<'number'>>(notALiteral('number'));
expectType<'p.constant needs a single literal number; got number'>(notALiteral('number'));
