/**
 * Compile-time rules of DeviceSegmentedReduce: its counts' domains, its op set, `indicesOut` for the
 * arg ops, unknown fields, and `SegmentedReduceVariantsFor` (the variants the static size bounds
 * leave). Mirror of src/algorithms/segmented-reduce/args.ts; the runtime twins are in
 * test/conformance/reduce.suite.ts ('bad input') and test/variants-for.test.ts.
 */
import { expectError, expectType } from 'tsd';
import {
  type ConstantOptionParam,
  type ConstantParam,
  type DeviceArray,
  type PerSegmentParam,
  type SegmentedReduceVariant,
  type SegmentedReduceVariantsFor,
  type UniformOptionParam,
  type UniformParam,
  type ValidateSegmentedReduceArgs,
  DeviceSegmentedReduce,
  env,
  p,
} from 'segkit';
import { requiredWhen } from '../src/types/messages.js';

declare const valuesIn: DeviceArray<'f32'>;
declare const valuesOut: DeviceArray<'f32'>;
declare const indicesOut: DeviceArray<'u32'>;
declare const sizes: number[];
declare const anyArgs: any;
const base = { valuesIn, valuesOut, segmentSizes: p.constant(128), numSegments: p.uniform(10) };

// Passing: every op kind, an initial value of any kind (any number: its dtype's range is a run-time check).
DeviceSegmentedReduce.plan({ ...base, op: p.constantOption('sum') });
DeviceSegmentedReduce.plan({ ...base, op: p.uniformOption('max', ['sum', 'max']), initialValue: p.constant(-2.5) });
DeviceSegmentedReduce.plan({ ...base, indicesOut, op: p.perSegmentOption(['argMax', 'sum'], ['argMax', 'sum']), initialValue: p.perSegment([1, 2]) });
DeviceSegmentedReduce.plan({ ...base, indicesOut, op: p.constantOption('argMin'), segmentStride: p.constant(128), totalNumItems: p.guarantee({ max: 1280 }) });
DeviceSegmentedReduce.plan(anyArgs);
void DeviceSegmentedReduce.sum({ ...base, initialValue: p.uniform(0) });
void DeviceSegmentedReduce.argMax({ ...base, indicesOut });

// Failing: an op reduce has not, an arg op without indicesOut, a count outside its domain, a wrong kind, an unknown field.
expectError(DeviceSegmentedReduce.plan({ ...base, op: p.constantOption('mean') }));
expectError(DeviceSegmentedReduce.plan({ ...base, op: p.uniformOption('sum', ['sum', 'argMax']) }));
expectError(DeviceSegmentedReduce.plan({ ...base, op: p.constantOption('argMin') }));
expectError(DeviceSegmentedReduce.plan({ ...base, op: p.constantOption('sum'), segmentSizes: p.constant(-1) }));
expectError(DeviceSegmentedReduce.plan({ ...base, op: p.constantOption('sum'), numSegments: p.perSegment([1]) }));
expectError(DeviceSegmentedReduce.plan({ ...base, op: p.constantOption('sum'), segmentStrid: p.constant(4) }));
expectError(DeviceSegmentedReduce.plan({ ...base, op: p.constantOption('sum'), segmentSizes: p.uniform(300, { min: 256, max: 512 }) }, env({ guarantees: { maxSegmentSize: 100 } })));
expectError(DeviceSegmentedReduce.argMax({ ...base }));

// The exact text, field by field.
type Base = { valuesIn: DeviceArray<'f32'>; valuesOut: DeviceArray<'f32'>; segmentSizes: ConstantParam<128>; numSegments: UniformParam<number, number> };
expectType<"(Error) op: option 'mean' is not one of the options ['sum', 'min', 'max', 'argMin', 'argMax']">(
  null! as ValidateSegmentedReduceArgs<Base & { op: ConstantOptionParam<'mean'> }>['op'],
);
expectType<"(Error) indicesOut: required when op may be 'argMin' or 'argMax'">(null! as ValidateSegmentedReduceArgs<Base & { op: UniformOptionParam<'sum' | 'argMax'> }>['op']);
expectType<UniformOptionParam<'sum' | 'argMax'>>(null! as ValidateSegmentedReduceArgs<Base & { op: UniformOptionParam<'sum' | 'argMax'>; indicesOut: DeviceArray<'u32'> }>['op']);
expectType<'(Error) segmentSizes: -1 is outside the static bounds [0, 4294967295]'>(null! as ValidateSegmentedReduceArgs<Omit<Base, 'segmentSizes'> & { segmentSizes: ConstantParam<-1> }>['segmentSizes']);
expectType<'(Error) numSegments: expected p.constant or p.uniform'>(null! as ValidateSegmentedReduceArgs<Omit<Base, 'numSegments'> & { numSegments: PerSegmentParam<0, 9> }>['numSegments']);
expectType<"(Error) unknown field 'segmentStrid'">(null! as ValidateSegmentedReduceArgs<Base & { segmentStrid: ConstantParam<4> }>['segmentStrid']);
expectType<'(Error) segmentSizes: bounds [256, 512] do not intersect the guarantee maxSegmentSize [0, 100]'>(
  null! as ValidateSegmentedReduceArgs<Omit<Base, 'segmentSizes'> & { segmentSizes: UniformParam<256, 512> }, { maxSegmentSize: 100 }>['segmentSizes'],
);
// One message source: the runtime twin spells the same text.
expectType<"required when op may be 'argMin' or 'argMax'">(requiredWhen('op', "'argMin' or 'argMax'"));

// SegmentedReduceVariantsFor: what the static size bounds leave (thresholds 16, 8192, 32768).
expectType<'thread'>(null! as SegmentedReduceVariantsFor<{ segmentSizes: ConstantParam<8> }>);
expectType<'thread'>(null! as SegmentedReduceVariantsFor<{ segmentSizes: UniformParam<0, 16> }>);
expectType<'subgroup'>(null! as SegmentedReduceVariantsFor<{ segmentSizes: ConstantParam<17> }>);
expectType<'thread' | 'subgroup'>(null! as SegmentedReduceVariantsFor<{ segmentSizes: PerSegmentParam<0, 2048> }>);
expectType<'subgroup'>(null! as SegmentedReduceVariantsFor<{ segmentSizes: PerSegmentParam<4096, 8192> }>);
expectType<'subgroup' | 'workgroup'>(null! as SegmentedReduceVariantsFor<{ segmentSizes: PerSegmentParam<4096, 32768> }>);
expectType<'workgroup'>(null! as SegmentedReduceVariantsFor<{ segmentSizes: PerSegmentParam<8193, 32768> }>);
expectType<'workgroup' | 'multi-workgroup'>(null! as SegmentedReduceVariantsFor<{ segmentSizes: PerSegmentParam<20000, 100000> }>);
expectType<'multi-workgroup'>(null! as SegmentedReduceVariantsFor<{ segmentSizes: PerSegmentParam<40000, 100000> }>);
expectType<SegmentedReduceVariant>(null! as SegmentedReduceVariantsFor<{ segmentSizes: PerSegmentParam<number, number> }>);
expectType<SegmentedReduceVariant>(null! as SegmentedReduceVariantsFor<{ segmentSizes: PerSegmentParam<0, number> }>);
expectType<SegmentedReduceVariant>(null! as SegmentedReduceVariantsFor<any>);
declare const sizesParam: PerSegmentParam<0, 64>;
expectType<'thread' | 'subgroup'>(null! as SegmentedReduceVariantsFor<{ segmentSizes: typeof sizesParam }>);
void sizes;
