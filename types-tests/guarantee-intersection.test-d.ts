/**
 * Compile-time rule: a parameter's literal bounds and an environment guarantee with an empty
 * intersection. Mirror of src/types/intersect.ts; algorithms apply it to their parameters (e.g.
 * `segmentSizes` against `maxSegmentSize`), and the runtime twin is in test/resolve.test.ts.
 */
import { expectError, expectType } from 'tsd';
import { type EmptyGuaranteeIntersection, emptyGuaranteeIntersection } from '../src/types/messages.js';
// Not yet re-exported from the package entry point.
import type { IntersectBounds, IsEmptyIntersection, ValidateIntersection } from '../src/types/intersect.js';

/** How an algorithm uses the rule: the argument's type becomes the message where the intersection is empty. */
declare function checkSegmentSizes<const Min extends number, const Max extends number, const GuaranteeMax extends number = number>(
  bounds: ValidateIntersection<Min, Max, 'maxSegmentSize', number, GuaranteeMax> extends string
    ? ValidateIntersection<Min, Max, 'maxSegmentSize', number, GuaranteeMax>
    : { min: Min; max: Max },
  guarantee: { maxSegmentSize?: GuaranteeMax },
): IntersectBounds<Min, Max, number, GuaranteeMax>;

declare const someNumber: number;

// Passing: overlapping literal bounds narrow; sides that are not literals are unknown and yield.
expectType<{ min: 512; max: 1024 }>(checkSegmentSizes({ min: 512, max: 4096 }, { maxSegmentSize: 1024 }));
expectType<{ min: 512; max: 512 }>(checkSegmentSizes({ min: 512, max: 4096 }, { maxSegmentSize: 512 }));
expectType<{ min: 512; max: 4096 }>(checkSegmentSizes({ min: 512, max: 4096 }, {}));
expectType<{ min: number; max: 100 }>(checkSegmentSizes({ min: someNumber, max: 4096 }, { maxSegmentSize: 100 }));

// Failing: literal bounds entirely above the guarantee.
expectError(checkSegmentSizes({ min: 512, max: 4096 }, { maxSegmentSize: 100 }));
expectError(checkSegmentSizes({ min: 4294967296, max: 4294967296 }, { maxSegmentSize: 4294967295 }));

// The exact text; an open side prints as the runtime prints an omitted bound.
expectType<'(Error) bounds [512, 4096] do not intersect the guarantee maxSegmentSize [-Infinity, 100]'>(
  null! as ValidateIntersection<512, 4096, 'maxSegmentSize', number, 100>,
);
expectType<'(Error) bounds [1, 8] do not intersect the guarantee minSegmentSize [9, Infinity]'>(
  null! as ValidateIntersection<1, 8, 'minSegmentSize', 9, number>,
);
expectType<'(Error) bounds [-Infinity, 8] do not intersect the guarantee minSegmentSize [9, Infinity]'>(
  null! as ValidateIntersection<number, 8, 'minSegmentSize', 9, number>,
);
expectType<'(Error) bounds [4294967296, 4294967296] do not intersect the guarantee maxTotalNumItems [-Infinity, 4294967295]'>(
  null! as ValidateIntersection<4294967296, 4294967296, 'maxTotalNumItems', number, 4294967295>,
);
expectType<'(Error) bounds [-5, -3] do not intersect the guarantee g [-2, 0]'>(null! as ValidateIntersection<-5, -3, 'g', -2, 0>);
// An empty guarantee intersects nothing.
expectType<'(Error) bounds [1, 8] do not intersect the guarantee g [6, 5]'>(null! as ValidateIntersection<1, 8, 'g', 6, 5>);

// Non-empty: the intersected bounds, exact at the extremes.
expectType<{ min: 1; max: 1024 }>(null! as ValidateIntersection<1, 4096, 'maxSegmentSize', number, 1024>);
expectType<{ min: 9007199254740991; max: 9007199254740991 }>(
  null! as ValidateIntersection<0, 9007199254740991, 'g', 9007199254740991, number>,
);
expectType<{ min: 4294967295; max: 4294967295 }>(null! as ValidateIntersection<4294967295, 4294967296, 'g', number, 4294967295>);
expectType<{ min: -3; max: -3 }>(null! as ValidateIntersection<-5, -3, 'g', -3, 0>);
// `number`, unions, `any` and `never` bounds are unknown: never empty at compile time (the runtime check decides).
expectType<{ min: number; max: 100 }>(null! as ValidateIntersection<number, number, 'maxSegmentSize', number, 100>);
expectType<{ min: number; max: 100 }>(null! as ValidateIntersection<512 | 1024, 4096, 'maxSegmentSize', number, 100>);
expectType<{ min: number; max: 100 }>(null! as ValidateIntersection<any, 4096, 'maxSegmentSize', number, 100>);
expectType<{ min: number; max: 100 }>(null! as ValidateIntersection<never, 4096, 'maxSegmentSize', number, 100>);
expectType<false>(null! as IsEmptyIntersection<512 | 1024, 4096, number, 100>);
expectType<false>(null! as IsEmptyIntersection<any, 4096, number, 100>);
expectType<false>(null! as IsEmptyIntersection<never, 4096, number, 100>);
expectType<true>(null! as IsEmptyIntersection<512, 4096, number, 100>);
// Bounds empty by themselves carry their own message (EmptyBounds), not this one.
expectType<{ min: 8; max: 1 }>(null! as ValidateIntersection<8, 1, 'maxK', number, 100>);

// One message source.
expectType<EmptyGuaranteeIntersection<512, 4096, 'maxSegmentSize', number, 100>>(
  emptyGuaranteeIntersection(512, 4096, 'maxSegmentSize', -Infinity, 100),
);
expectType<'bounds [512, 4096] do not intersect the guarantee maxSegmentSize [1, 100]'>(
  emptyGuaranteeIntersection(512, 4096, 'maxSegmentSize', 1, 100),
);
