/**
 * Compile-time rule: `min > max` in the bounds of `p.uniform`, `p.perSegment` and `p.guarantee`.
 * Mirror of `ValidateBounds` in src/types/validate.ts; the runtime twin is in test/resolve.test.ts.
 */
import { expectError, expectType } from 'tsd';
import type { IsAny } from 'type-fest';
import { type GuaranteeParam, type PerSegmentParam, type UniformParam, p } from 'segkit';
import { type EmptyBounds, emptyBounds } from '../src/types/messages.js';
import { type ValidateBounds } from '../src/types/validate.js';

declare const someNumber: number;
declare const eightOrNine: 8 | 9;
declare const anything: any;
declare const nothing: never;

// Passing: ordered or equal literal bounds; bounds that are not literals are left to the runtime check.
expectType<UniformParam<1, 8>>(p.uniform(4, { min: 1, max: 8 }));
expectType<UniformParam<8, 8>>(p.uniform(8, { min: 8, max: 8 }));
expectType<PerSegmentParam<512, 4096>>(p.perSegment([512, 4096], { min: 512, max: 4096 }));
expectType<PerSegmentParam<512, 4096>>(p.perSegment([512], { min: 512, max: 4096 }, { min: 512, max: 1024 }));
expectType<GuaranteeParam<0, 1048576>>(p.guarantee({ min: 0, max: 1048576 }));
expectType<GuaranteeParam<number, 1048576>>(p.guarantee({ max: 1048576 }));
expectType<GuaranteeParam<number, 1>>(p.guarantee({ min: someNumber, max: 1 }));
expectType<GuaranteeParam<8 | 9, 1>>(p.guarantee({ min: eightOrNine, max: 1 }));
expectType<PerSegmentParam<any, 1>>(p.perSegment([1], { min: anything, max: 1 }));
expectType<GuaranteeParam<never, 1>>(p.guarantee({ min: nothing, max: 1 }));

// Failing: literal bounds with min > max, for each kind that takes bounds.
expectError(p.uniform(1, { min: 8, max: 1 }));
expectError(p.perSegment([1], { min: 8, max: 1 }));
expectError(p.perSegment(new Uint32Array(4), { min: 4096, max: 512 }, { min: 512, max: 512 }));
expectError(p.guarantee({ min: 8, max: 1 }));
expectError(p.guarantee({ min: -1, max: -2 }));

// The exact text, carried on `min`.
expectType<{ readonly min?: '(Error) bounds [8, 1] are empty: min is greater than max'; readonly max?: 1 }>(
  null! as ValidateBounds<8, 1>,
);
expectType<{ readonly min?: '(Error) bounds [-1, -2] are empty: min is greater than max'; readonly max?: -2 }>(
  null! as ValidateBounds<-1, -2>,
);
expectType<{ readonly min?: 1; readonly max?: 8 }>(null! as ValidateBounds<1, 8>);
expectType<{ readonly min?: 8; readonly max?: 8 }>(null! as ValidateBounds<8, 8>);
expectType<{ readonly min?: number; readonly max?: 1 }>(null! as ValidateBounds<number, 1>);
// A union bound is not one literal: nothing is known, the runtime check decides.
expectType<{ readonly min?: 8 | 9; readonly max?: 1 }>(null! as ValidateBounds<8 | 9, 1>);
expectType<true>(null! as IsAny<ValidateBounds<any, 1>['min']>);
expectType<{ readonly min?: never; readonly max?: 1 }>(null! as ValidateBounds<never, 1>);

// One message source.
expectType<EmptyBounds<8, 1>>(emptyBounds(8, 1));
expectType<'bounds [8, 1] are empty: min is greater than max'>(emptyBounds(8, 1));
