/**
 * DeviceSegmentedSort's compile-time rules: an order the sort has not, a parameter of the wrong kind,
 * static bounds outside the domain or the guarantees, unknown and missing fields (each with its exact
 * text), and `SegmentedSortVariantsFor` pruning by the static size bounds. The runtime twins are in
 * test/conformance/sort.suite.ts.
 */
import { expectError, expectType } from 'tsd';
import { type DeviceArray, type SegmentedSortPlan, type SegmentedSortVariantsFor, type ValidateSegmentedSortArgs, DeviceSegmentedSort, env, p } from 'segkit';

declare const keysIn: DeviceArray<'f32'>;
declare const keysOut: DeviceArray<'f32'>;
declare const valuesIn: DeviceArray<'u32'>;
declare const valuesOut: DeviceArray<'u32'>;
declare const sizes: Uint32Array;
declare const deviceSizes: DeviceArray<'u32'>;
declare const order: 'ascending' | 'descending';

// Passing: keys, pairs, an argsort; every kind of order and size.
expectType<SegmentedSortPlan>(DeviceSegmentedSort.plan({ keysIn, keysOut, segmentSizes: p.constant(256), order: p.constantOption('ascending'), numSegments: p.uniform(10) }));
expectType<SegmentedSortPlan>(
  DeviceSegmentedSort.plan({ keysIn, keysOut, valuesIn, valuesOut, segmentSizes: p.perSegment(sizes, { max: 5000 }), order: p.uniformOption(order, ['ascending', 'descending']), numSegments: p.uniform(10) }),
);
expectType<SegmentedSortPlan>(
  DeviceSegmentedSort.plan({ keysIn, keysOut, valuesOut, segmentSizes: p.perSegment(deviceSizes), segmentStride: p.constant(4096), order: p.perSegmentOption(['ascending', 'descending'], ['ascending', 'descending']), numSegments: p.constant(2), totalNumItems: p.guarantee({ max: 8192 }) }),
);

// Failing: an order outside the set, a wrong kind, a size outside the domain, a guarantee missed, an unknown and a missing field.
expectError(DeviceSegmentedSort.plan({ keysIn, keysOut, segmentSizes: p.constant(8), order: p.constantOption('up'), numSegments: p.uniform(1) }));
expectError(DeviceSegmentedSort.plan({ keysIn, keysOut, segmentSizes: p.constant(8), order: p.constantOption('ascending'), numSegments: p.perSegment(sizes) }));
expectError(DeviceSegmentedSort.plan({ keysIn, keysOut, segmentSizes: p.constant(-1), order: p.constantOption('ascending'), numSegments: p.uniform(1) }));
expectError(DeviceSegmentedSort.plan({ keysIn, keysOut, segmentSizes: p.uniform(9, { min: 9, max: 20 }), order: p.constantOption('ascending'), numSegments: p.uniform(1) }, env({ guarantees: { maxSegmentSize: 8 } })));
expectError(DeviceSegmentedSort.plan({ keysIn, keysOut, segmentSizes: p.constant(8), ordr: p.constantOption('ascending'), numSegments: p.uniform(1) }));
expectError(DeviceSegmentedSort.plan({ keysIn, keysOut, segmentSizes: p.constant(8), numSegments: p.uniform(1) }));

// The exact text.
type Base = { keysIn: DeviceArray<'f32'>; keysOut: DeviceArray<'f32'>; numSegments: ReturnType<typeof p.uniform<1, 1>> };
type Checked<Args> = ValidateSegmentedSortArgs<Args>;
declare const upArgs: Base & { segmentSizes: ReturnType<typeof p.constant<8>>; order: ReturnType<typeof p.constantOption<'up'>> };
expectType<"(Error) order: option 'up' is not one of the options ['ascending', 'descending']">(null! as Checked<typeof upArgs>['order']);
declare const kindArgs: Omit<Base, 'numSegments'> & { segmentSizes: ReturnType<typeof p.constant<8>>; order: ReturnType<typeof p.constantOption<'ascending'>>; numSegments: ReturnType<typeof p.perSegment<number, number>> };
expectType<'(Error) numSegments: expected p.constant or p.uniform'>(null! as Checked<typeof kindArgs>['numSegments']);
declare const negativeArgs: Base & { segmentSizes: ReturnType<typeof p.constant<-1>>; order: ReturnType<typeof p.constantOption<'ascending'>> };
expectType<'(Error) segmentSizes: -1 is outside the static bounds [0, 4294967295]'>(null! as Checked<typeof negativeArgs>['segmentSizes']);
declare const typoArgs: Base & { segmentSizes: ReturnType<typeof p.constant<8>>; ordr: ReturnType<typeof p.constantOption<'ascending'>> };
expectType<"(Error) unknown field 'ordr' (did you mean 'order'?)">(null! as Checked<typeof typoArgs>['ordr']);
expectType<"(Error) missing required field 'order'">(null! as Checked<typeof typoArgs>['order']);

// Variants the static size bounds leave.
expectType<'single-tile'>(null! as SegmentedSortVariantsFor<{ segmentSizes: ReturnType<typeof p.constant<256>> }>);
expectType<'single-tile'>(null! as SegmentedSortVariantsFor<{ segmentSizes: ReturnType<typeof p.perSegment<0, 1024>> }>);
expectType<'merge' | 'workgroup-radix' | 'radix'>(null! as SegmentedSortVariantsFor<{ segmentSizes: ReturnType<typeof p.perSegment<5000, 90000>> }>);
expectType<'merge' | 'workgroup-radix' | 'radix'>(null! as SegmentedSortVariantsFor<{ segmentSizes: ReturnType<typeof p.constant<32768>> }>);
// Every segment longer than mergeMaxSegmentItems (65536): merge is pruned.
expectType<'workgroup-radix' | 'radix'>(null! as SegmentedSortVariantsFor<{ segmentSizes: ReturnType<typeof p.constant<100000>> }>);
expectType<'workgroup-radix' | 'radix'>(null! as SegmentedSortVariantsFor<{ segmentSizes: ReturnType<typeof p.perSegment<65537, 200000>> }>);
expectType<'single-tile' | 'merge' | 'workgroup-radix' | 'radix'>(null! as SegmentedSortVariantsFor<{ segmentSizes: ReturnType<typeof p.perSegment<number, number>> }>);
expectType<'single-tile' | 'merge' | 'workgroup-radix' | 'radix'>(null! as SegmentedSortVariantsFor<{ segmentSizes: ReturnType<typeof p.uniform<0, 2048>> }>);
// At most the smallest tile of any policy: merge and workgroup-radix are pruned with radix (the 'single-tile' lines above).
