/**
 * Compile-time rules of DeviceSegmentedScan's arguments (`ValidateScanArgs`) and its compile-time
 * pruning (`ScanVariantsFor`). The runtime twins are in test/conformance/scan.suite.ts and
 * test/scan-api.test.ts; what the compiler prints is pinned in test/fixtures/compile-errors/scan-args.ts.
 */
import { expectAssignable, expectError, expectNotAssignable, expectType } from 'tsd';
import {
  type ConstantOptionParam,
  type ConstantParam,
  type DeviceArray,
  type PerSegmentParam,
  type ScanVariantsFor,
  type UniformOptionParam,
  type UniformParam,
  type ValidateScanArgs,
  DeviceSegmentedScan,
  env,
  p,
} from 'segkit';

declare const f32In: DeviceArray<'f32'>;
declare const f32Out: DeviceArray<'f32'>;
declare const u32In: DeviceArray<'u32'>;
declare const u32Out: DeviceArray<'u32'>;
declare const i32In: DeviceArray<'i32'>;
declare const count: DeviceArray<'u32'>;
const base = { valuesIn: f32In, valuesOut: f32Out, segmentSizes: p.constant(256), numSegments: p.uniform(10), op: p.constantOption('sum'), mode: p.constantOption('inclusive') };

// Passing: every kind of every parameter, the device-only count of one segment, shorthands.
DeviceSegmentedScan.plan(base);
DeviceSegmentedScan.plan({ ...base, op: p.perSegmentOption(['sum', 'max'], ['sum', 'min', 'max']), mode: p.uniformOption('exclusive', ['inclusive', 'exclusive']) });
DeviceSegmentedScan.plan({ ...base, initialValue: p.constant(-1.5) });
DeviceSegmentedScan.plan({ ...base, valuesIn: i32In, initialValue: p.uniform(-7, { min: -10, max: 10 }) });
DeviceSegmentedScan.plan({ ...base, numSegments: p.constant(1), segmentSizes: p.uniform(count, { max: 1 << 24 }) });
void DeviceSegmentedScan.inclusiveSum({ valuesIn: f32In, valuesOut: f32Out, numSegments: p.constant(1), segmentSizes: p.uniform(count) });
void DeviceSegmentedScan.scan(base, env({ guarantees: { maxSegmentSize: 256 } }));

// Failing: options outside the scan's sets, values outside the values' type, wrong kinds, guarantees.
expectError(DeviceSegmentedScan.plan({ ...base, op: p.constantOption('product') }));
expectError(DeviceSegmentedScan.plan({ ...base, mode: p.uniformOption('inclusive' as string, ['inclusive', 'reverse']) }));
expectError(DeviceSegmentedScan.plan({ ...base, valuesIn: u32In, valuesOut: u32Out, initialValue: p.constant(-1) }));
expectError(DeviceSegmentedScan.plan({ ...base, valuesIn: i32In, initialValue: p.constant(2147483648) }));
expectError(DeviceSegmentedScan.plan({ ...base, numSegments: p.perSegment([1]) }));
expectError(DeviceSegmentedScan.plan({ ...base, segmentSizes: p.uniform(300, { min: 256, max: 512 }) }, env({ guarantees: { maxSegmentSize: 100 } })));
expectError(DeviceSegmentedScan.plan({ ...base, segmentSizes: p.constant(-1) }));
expectError(DeviceSegmentedScan.plan({ ...base, intialValue: p.constant(1) }));

// The exact text of each rule.
type Base = typeof base;
expectType<"(Error) op: option 'product' is not one of the options ['sum', 'min', 'max']">(
  null! as ValidateScanArgs<Omit<Base, 'op'> & { op: ConstantOptionParam<'product'> }>['op'],
);
expectType<"(Error) mode: option 'reverse' is not one of the options ['inclusive', 'exclusive']">(
  null! as ValidateScanArgs<Omit<Base, 'mode'> & { mode: UniformOptionParam<'inclusive' | 'reverse'> }>['mode'],
);
expectType<'(Error) initialValue: -1 is outside the static bounds [0, 4294967295]'>(
  null! as ValidateScanArgs<Omit<Base, 'valuesIn'> & { valuesIn: DeviceArray<'u32'>; initialValue: ConstantParam<-1> }>['initialValue'],
);
expectType<'(Error) initialValue: 2147483648 is outside the static bounds [-2147483648, 2147483647]'>(
  null! as ValidateScanArgs<Omit<Base, 'valuesIn'> & { valuesIn: DeviceArray<'i32'>; initialValue: ConstantParam<2147483648> }>['initialValue'],
);
expectType<'(Error) initialValue: bounds [-5, -1] do not intersect the guarantee domain [0, 4294967295]'>(
  null! as ValidateScanArgs<Omit<Base, 'valuesIn'> & { valuesIn: DeviceArray<'u32'>; initialValue: UniformParam<-5, -1> }>['initialValue'],
);
expectType<'(Error) numSegments: expected p.constant or p.uniform'>(null! as ValidateScanArgs<Omit<Base, 'numSegments'> & { numSegments: PerSegmentParam<1, 1> }>['numSegments']);
expectType<'(Error) segmentSizes: bounds [256, 512] do not intersect the guarantee maxSegmentSize [0, 100]'>(
  null! as ValidateScanArgs<Omit<Base, 'segmentSizes'> & { segmentSizes: UniformParam<256, 512> }, { maxSegmentSize: 100 }>['segmentSizes'],
);
expectType<"(Error) unknown field 'intialValue'">(null! as ValidateScanArgs<Base & { intialValue: ConstantParam<1> }>['intialValue']);
// f32 initial values (and values of an unknown dtype) are not bounded at compile time.
expectType<ConstantParam<-1e30>>(null! as ValidateScanArgs<Base & { initialValue: ConstantParam<-1e30> }>['initialValue']);
expectType<ConstantParam<-1>>(null! as ValidateScanArgs<Omit<Base, 'valuesIn'> & { valuesIn: DeviceArray; initialValue: ConstantParam<-1> }>['initialValue']);
// A valid field keeps its own type.
expectAssignable<Base>(null! as ValidateScanArgs<Base>);
type WithProduct = Omit<Base, 'op'> & { op: ConstantOptionParam<'product'> };
expectNotAssignable<WithProduct>(null! as ValidateScanArgs<WithProduct>);

// ScanVariantsFor: the static bounds of the segment sizes prune variants.
expectType<'thread'>(null! as ScanVariantsFor<{ segmentSizes: PerSegmentParam<1, 16> }>);
expectType<'thread'>(null! as ScanVariantsFor<{ segmentSizes: ConstantParam<8> }>);
expectType<'thread' | 'workgroup'>(null! as ScanVariantsFor<{ segmentSizes: PerSegmentParam<0, 4096> }>);
expectType<'workgroup'>(null! as ScanVariantsFor<{ segmentSizes: UniformParam<17, 4096> }>);
expectType<'workgroup' | 'multi-workgroup'>(null! as ScanVariantsFor<{ segmentSizes: UniformParam<4097, 100000> }>);
expectType<'thread' | 'workgroup' | 'multi-workgroup'>(null! as ScanVariantsFor<{ segmentSizes: PerSegmentParam<number, number> }>);
expectType<'thread' | 'workgroup' | 'multi-workgroup'>(null! as ScanVariantsFor<{ segmentSizes: PerSegmentParam<0, number> }>);
expectType<'thread' | 'workgroup' | 'multi-workgroup'>(null! as ScanVariantsFor<object>);
