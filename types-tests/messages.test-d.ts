/**
 * One message source: each message type has the text of its runtime function of the same name, so a
 * compile error and the runtime check read alike. test/messages.test.ts pins the runtime side.
 */
import { expectError, expectType } from 'tsd';
import { type ErrorMessage } from 'segkit';
import { type EmptyBounds, type EmptyGuaranteeIntersection, type NeverValue, type NotALiteral, type NotAnInteger, type OptionNotInSet, type OutsideRuntimeBounds, type OutsideStaticBounds, type RuntimeBoundsOutsideStatic, emptyBounds, emptyGuaranteeIntersection, notALiteral, notAnInteger, optionNotInSet, outsideRuntimeBounds, outsideStaticBounds, runtimeBoundsOutsideStatic } from '../src/types/messages.js';
import { type JoinOptions } from '../src/types/validate.js';

expectType<OutsideStaticBounds<16, 1, 8>>(outsideStaticBounds(16, 1, 8));
expectType<'16 is outside the static bounds [1, 8]'>(outsideStaticBounds(16, 1, 8));
expectType<'-3 is outside the static bounds [-2, 4294967296]'>(outsideStaticBounds(-3, -2, 4294967296));

expectType<OutsideRuntimeBounds<700, 512, 600>>(outsideRuntimeBounds(700, 512, 600));
expectType<'700 is outside the runtime bounds [512, 600]'>(outsideRuntimeBounds(700, 512, 600));

expectType<EmptyBounds<8, 1>>(emptyBounds(8, 1));
expectType<'bounds [8, 1] are empty: min is greater than max'>(emptyBounds(8, 1));

expectType<RuntimeBoundsOutsideStatic<1, 9, 1, 8>>(runtimeBoundsOutsideStatic(1, 9, 1, 8));
expectType<'runtime bounds [1, 9] are not within the static bounds [1, 8]'>(runtimeBoundsOutsideStatic(1, 9, 1, 8));

expectType<NotALiteral<'number'>>(notALiteral('number'));
expectType<'p.constant needs a single literal number; got a union'>(notALiteral('a union'));

expectType<OptionNotInSet<'median', JoinOptions<['max', 'min']>>>(optionNotInSet('median', ['max', 'min']));
expectType<"option 'median' is not one of the options ['max', 'min']">(optionNotInSet('median', ['max', 'min']));
expectType<"option 'x' is not one of the options ['a']">(optionNotInSet('x', ['a']));
expectType<"'max', 'min', 'median'">(null! as JoinOptions<['max', 'min', 'median']>);
// A set known only as `string[]` joins to some string.
expectType<`option 'x' is not one of the options [${string}]`>(optionNotInSet('x', null! as string[]));

expectType<EmptyGuaranteeIntersection<512, 4096, 'maxSegmentSize', 0, 100>>(emptyGuaranteeIntersection(512, 4096, 'maxSegmentSize', 0, 100));
expectType<'bounds [512, 4096] do not intersect the guarantee maxSegmentSize [0, 100]'>(
  emptyGuaranteeIntersection(512, 4096, 'maxSegmentSize', 0, 100),
);

expectType<NotAnInteger<1.5>>(notAnInteger(1.5));
expectType<'1.5 is not an integer'>(notAnInteger(1.5));

expectType<'the value has type never'>(null! as NeverValue);
expectType<'(Error) 16 is outside the static bounds [1, 8]'>(null! as ErrorMessage<OutsideStaticBounds<16, 1, 8>>);

// Plain `number` arguments give the message's shape.
declare const someNumber: number;
expectType<`${number} is outside the static bounds [${number}, ${number}]`>(outsideStaticBounds(someNumber, someNumber, someNumber));
// The runtime functions take numbers where the types take numbers.
expectError(outsideStaticBounds('16', 1, 8));
