/**
 * DeviceBatchedCopy's compile-time rules: a parameter of the wrong kind, static bounds outside the
 * domain or the guarantees, unknown and missing fields (each with its exact text), and
 * `BatchedCopyVariantsFor` pruning by the static size bounds. The runtime twins are in
 * test/conformance/copy.suite.ts.
 */
import { expectError, expectType } from 'tsd';
import { type BatchedCopyPlan, type BatchedCopyVariantsFor, type DeviceArray, type ValidateBatchedCopyArgs, DeviceBatchedCopy, env, p } from 'segkit';

declare const source: DeviceArray<'f32'>;
declare const destination: DeviceArray<'f32'>;
declare const sizes: Uint32Array;
declare const deviceOffsets: DeviceArray<'u32'>;
declare const deviceCount: DeviceArray<'u32'>;

// Passing: every kind of size and offset, a device-only count, a guarantee.
expectType<BatchedCopyPlan>(DeviceBatchedCopy.plan({ source, destination, sizes: p.constant(64), sourceOffsets: p.uniform(0), destinationOffsets: p.perSegment(sizes), numBuffers: p.uniform(10) }));
expectType<BatchedCopyPlan>(
  DeviceBatchedCopy.plan({ source, destination, sizes: p.perSegment(sizes, { max: 256 }), sourceOffsets: p.perSegment(deviceOffsets), destinationOffsets: p.perSegment(deviceOffsets), numBuffers: p.uniform(deviceCount), totalNumItems: p.guarantee({ max: 4096 }) }),
);

// Failing: a wrong kind, a size outside the domain, a guarantee missed, an unknown and a missing field.
expectError(DeviceBatchedCopy.plan({ source, destination, sizes: p.constant(8), sourceOffsets: p.constant(0), destinationOffsets: p.constant(0), numBuffers: p.perSegment(sizes) }));
expectError(DeviceBatchedCopy.plan({ source, destination, sizes: p.constant(-1), sourceOffsets: p.constant(0), destinationOffsets: p.constant(0), numBuffers: p.uniform(1) }));
expectError(DeviceBatchedCopy.plan({ source, destination, sizes: p.uniform(9, { min: 9, max: 20 }), sourceOffsets: p.constant(0), destinationOffsets: p.constant(0), numBuffers: p.uniform(1) }, env({ guarantees: { maxSegmentSize: 8 } })));
expectError(DeviceBatchedCopy.plan({ source, destination, sizes: p.constant(8), sourceOffset: p.constant(0), destinationOffsets: p.constant(0), numBuffers: p.uniform(1) }));
expectError(DeviceBatchedCopy.plan({ source, destination, sizes: p.constant(8), destinationOffsets: p.constant(0), numBuffers: p.uniform(1) }));

// The exact text.
type Base = { source: DeviceArray<'f32'>; destination: DeviceArray<'f32'>; destinationOffsets: ReturnType<typeof p.constant<0>> };
type Checked<Args> = ValidateBatchedCopyArgs<Args>;
declare const kindArgs: Base & { sizes: ReturnType<typeof p.constant<8>>; sourceOffsets: ReturnType<typeof p.constant<0>>; numBuffers: ReturnType<typeof p.perSegment<number, number>> };
expectType<'(Error) numBuffers: expected p.constant or p.uniform'>(null! as Checked<typeof kindArgs>['numBuffers']);
declare const negativeArgs: Base & { sizes: ReturnType<typeof p.constant<-1>>; sourceOffsets: ReturnType<typeof p.constant<0>>; numBuffers: ReturnType<typeof p.uniform<1, 1>> };
expectType<'(Error) sizes: -1 is outside the static bounds [0, 4294967295]'>(null! as Checked<typeof negativeArgs>['sizes']);
declare const typoArgs: Base & { sizes: ReturnType<typeof p.constant<8>>; sourceOffset: ReturnType<typeof p.constant<0>>; numBuffers: ReturnType<typeof p.uniform<1, 1>> };
expectType<"(Error) unknown field 'sourceOffset' (did you mean 'sourceOffsets'?)">(null! as Checked<typeof typoArgs>['sourceOffset']);
expectType<"(Error) missing required field 'sourceOffsets'">(null! as Checked<typeof typoArgs>['sourceOffsets']);

// Variants the static size bounds leave.
expectType<'team'>(null! as BatchedCopyVariantsFor<{ sizes: ReturnType<typeof p.constant<64>> }>);
expectType<'team' | 'workgroup'>(null! as BatchedCopyVariantsFor<{ sizes: ReturnType<typeof p.perSegment<0, 4096>> }>);
expectType<'workgroup'>(null! as BatchedCopyVariantsFor<{ sizes: ReturnType<typeof p.perSegment<2000, 16384>> }>);
expectType<'chunked'>(null! as BatchedCopyVariantsFor<{ sizes: ReturnType<typeof p.perSegment<20000, 90000>> }>);
expectType<'team' | 'workgroup' | 'chunked'>(null! as BatchedCopyVariantsFor<{ sizes: ReturnType<typeof p.perSegment<number, number>> }>);
